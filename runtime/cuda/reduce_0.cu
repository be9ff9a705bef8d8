// Eager CUDA kernels of reduction group 0: primitive reductions (sum, amax, amin, argmax).
#include "reduce_kernels.cuh"

namespace kiln::detail {
template <> void cuda_reduce_group<0>(const ReduceLaunch &l) {
  dispatch_reduce<0>(l, [&]<class P>() { launch_reduce<P>(l); });
}
} // namespace kiln::detail
