// Eager CUDA kernels of op group 3 (ops whose index is 3 modulo kPwGroups).
#include "pointwise_kernels.cuh"

namespace kiln::detail {
template <> void fill_cuda_pointwise<3>(CudaPwTable &t) { add_cuda_group<3>(t); }
} // namespace kiln::detail
