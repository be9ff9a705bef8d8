// Eager CUDA kernels of reduction group 2: row-wise ops (softmax, log_softmax, layer_norm, rms_norm).
#include "reduce_kernels.cuh"

namespace kiln::detail {
template <> void cuda_reduce_group<2>(const ReduceLaunch &l) {
  dispatch_reduce<2>(l, [&]<class P>() { launch_reduce<P>(l); });
}
} // namespace kiln::detail
