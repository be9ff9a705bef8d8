// Eager CUDA kernels of reduction group 1: composite reductions (mean, var, logsumexp).
#include "reduce_kernels.cuh"

namespace kiln::detail {
template <> void cuda_reduce_group<1>(const ReduceLaunch &l) {
  dispatch_reduce<1>(l, [&]<class P>() { launch_reduce<P>(l); });
}
} // namespace kiln::detail
