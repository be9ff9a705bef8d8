// Eager CPU kernels of op group 1 (ops whose index is 1 modulo kPwGroups).
#include "cpu_kernels.h"

namespace kiln::detail {
template <> void fill_cpu_pointwise<1>(CpuPwTable &t) { add_group<1>(t); }
} // namespace kiln::detail
