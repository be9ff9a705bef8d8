// Eager CUDA kernels of op group 0 (ops whose index is 0 modulo kPwGroups).
#include "pointwise_kernels.cuh"

namespace kiln::detail {
template <> void fill_cuda_pointwise<0>(CudaPwTable &t) { add_cuda_group<0>(t); }
} // namespace kiln::detail
