// cuda_util.cuh - CUDA error handling, device selection and launch
// accounting shared by the runtime's CUDA sources.
#pragma once

#include "detail.h"

#include <kiln/interop.h>

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::detail {

// Throws kiln::Error("<fn>: <what> failed: <CUDA's message>"), clearing
// CUDA's last-error state first.
[[noreturn]] void cuda_fail(cudaError_t e, const char *fn, const char *what);
inline void cuda_check(cudaError_t e, const char *fn, const char *what) {
  if (e != cudaSuccess)
    cuda_fail(e, fn, what);
}

// The calling thread's current stream on `device` (kiln/interop.h): every
// kernel and copy of the runtime goes there.
inline cudaStream_t stream_of(int device) {
  return static_cast<cudaStream_t>(current_stream(device).handle);
}

// Makes `device` the calling thread's current device (no call if it is).
inline void set_device(int device, const char *fn) {
  int cur = -1;
  if (cudaGetDevice(&cur) != cudaSuccess || cur != device)
    cuda_check(cudaSetDevice(device), fn, "cudaSetDevice");
}

// After an eager kernel launch: throws "kiln::<what>: CUDA kernel launch
// failed: ..." on an error, counts one launch (unless !counted), logs it
// (KILN_LOGS=kernels). `path` names the kernel variant (contiguous,
// strided32, strided64).
void after_launch(const char *what, const char *path, DType dt, int64_t n,
                  dim3 grid, dim3 block, int device, bool counted = true);

// Blocks for a grid-stride kernel over `work` items of `threads` threads:
// one item per thread (the kernels still loop past the largest grid), as
// the generated kernels launch (kiln::gen::blocks). One wave looping over
// the rest ran the 268 MB copy of a LLaMA decode's key cache into the
// grown cache at 3.79 TB/s on an H200, a thread per item at 4.17, level
// with cudaMemcpyAsync (bench/results/2026-11-29-h200-decode-kernels.md).
inline int64_t grid_for(int64_t work, int threads) {
  const int64_t blocks = (work + threads - 1) / threads;
  return blocks < 1 ? 1 : blocks < INT32_MAX ? blocks : INT32_MAX;
}

// 2^x by the SFU (ex2.approx.ftz: 2 ulp, subnormals flushed), for the
// attention kernels' softmax with log2(e) folded into the scale.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

} // namespace kiln::detail
