// Eager CUDA kernels of op group 1 (ops whose index is 1 modulo kPwGroups).
#include "pointwise_kernels.cuh"

namespace kiln::detail {
template <> void fill_cuda_pointwise<1>(CudaPwTable &t) { add_cuda_group<1>(t); }
} // namespace kiln::detail
