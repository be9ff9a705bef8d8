// Eager CUDA reductions and row-wise ops: the entry point, which hands a
// launch to the file that instantiates its kernels (reduce_G.cu).
#include "reduce_kernels.cuh"

namespace kiln::detail {

void cuda_reduce(const ReduceLaunch &l) {
  switch (reduce_group(l.kind)) {
  case 0: cuda_reduce_group<0>(l); return;
  case 1: cuda_reduce_group<1>(l); return;
  default: cuda_reduce_group<2>(l); return;
  }
}

} // namespace kiln::detail
