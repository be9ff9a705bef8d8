// Eager CPU kernels of op group 2 (ops whose index is 2 modulo kPwGroups).
#include "cpu_kernels.h"

namespace kiln::detail {
template <> void fill_cpu_pointwise<2>(CpuPwTable &t) { add_group<2>(t); }
} // namespace kiln::detail
