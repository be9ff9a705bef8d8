// cuda_backend.h - what the host runtime asks of CUDA. Implemented in
// runtime/cuda/*.cu, or by src/no_cuda/cuda_absent.cpp in a CPU-only build
// (where every request throws kiln::Error("... no CUDA GPU ...")).
#pragma once

#include "kernel_types.h"

#include <kiln/tensor.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::detail {

// Number of usable CUDA devices; 0 when there is no driver or no GPU.
int cuda_device_count_cached();
// Throws kiln::Error("<fn>: no CUDA GPU ...") unless `d` is a usable GPU.
void check_cuda_device(Device d, const char *fn);

// Caching allocator: freed blocks are kept per (stream, size class) and
// handed out again only for work on the same stream, whose order makes
// the reuse safe (as PyTorch's allocator does). nullptr: the legacy
// default stream.
void *cuda_alloc(size_t nbytes, int device, void *stream, const char *fn);
void cuda_free(void *p, size_t nbytes, int device, void *stream);
size_t cuda_memory_in_use(int device);
// A pinned stream's free blocks are a CUDA graph's pool (kiln/rt.h,
// graph_call): never given back to CUDA (not when memory runs short, nor
// with KILN_NO_CUDA_MEMORY_CACHING), as the graph's kernels use them.
// Unpinning (a capture that failed) makes them ordinary cached blocks.
void cuda_pool_pin(void *stream, int device, bool pinned);
void set_cuda_memory_limit_bytes(size_t bytes, int device);

// Copies nbytes between any two devices (at least one is CUDA).
void cuda_memcpy(void *dst, Device dst_dev, const void *src, Device src_dev,
                 size_t nbytes);
void cuda_synchronize(int device);
// `height` rows of `width` bytes from src (rows `spitch` bytes apart) to
// dst (rows `dpitch` apart) on one device, queued on its current stream
// (cudaMemcpy2DAsync: the copy engine's speed, whatever the row length).
// Counted as a launch.
void cuda_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height, int device, const char *fn);

// Streams (kiln/interop.h): a new non-blocking stream, its end, a wait.
void *cuda_stream_create(int device);
void cuda_stream_destroy(void *stream, int device);
void cuda_stream_synchronize(void *stream, int device);

// One element-wise op / converting copy on device `l.device`: one launch.
void cuda_pointwise(const PwLaunch &l);
void cuda_copy(const CopyLaunch &l);
// Several copies on one device (the pieces of a cat): one launch for all
// of them where each moves 16-byte vectors between operands of one dtype
// contiguous along their innermost dim, else a launch each.
void cuda_copy_many(std::span<const CopyLaunch> ls);

// Fills n contiguous elements of `dtype` at out with `value` (converted).
// `counted`: counts as a kernel launch (not set_fill_uninitialized's fills,
// which are instrumentation, not the program's work).
void cuda_fill(void *out, DType dtype, double value, int64_t n, int device,
               bool counted = true);

} // namespace kiln::detail
