// Eager CPU kernels of op group 3 (ops whose index is 3 modulo kPwGroups).
#include "cpu_kernels.h"

namespace kiln::detail {
template <> void fill_cpu_pointwise<3>(CpuPwTable &t) { add_group<3>(t); }
} // namespace kiln::detail
