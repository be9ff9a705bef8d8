// Eager CPU kernels of op group 0 (ops whose index is 0 modulo kPwGroups).
#include "cpu_kernels.h"

namespace kiln::detail {
template <> void fill_cpu_pointwise<0>(CpuPwTable &t) { add_group<0>(t); }
} // namespace kiln::detail
