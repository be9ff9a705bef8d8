// Eager CUDA kernels of op group 2 (ops whose index is 2 modulo kPwGroups).
#include "pointwise_kernels.cuh"

namespace kiln::detail {
template <> void fill_cuda_pointwise<2>(CudaPwTable &t) { add_cuda_group<2>(t); }
} // namespace kiln::detail
