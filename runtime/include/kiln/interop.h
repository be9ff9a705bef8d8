// kiln/interop.h - Kiln beside other libraries in one program: tensors over
// memory Kiln did not allocate (from_blob, DLPack) and the CUDA stream Kiln
// enqueues its work on.
#pragma once

#include <kiln/dlpack.h>
#include <kiln/export.h>
#include <kiln/tensor.h>

#include <functional>

KILN_API_BEGIN
namespace kiln {

// ---- memory Kiln did not allocate ----

// A tensor over `data` (element 0), with the given sizes and strides (in
// elements), dtype and device; no copy. `deleter(data)` runs when the last
// tensor or view over it goes (none: the caller keeps the memory alive for
// as long as Kiln uses it). Throws kiln::Error for a negative size or
// stride, a pointer not aligned to the element size, or a device that is
// not there. Guards of compiled functions treat it like any other tensor
// (contiguity, alignment and aliasing are checked per call).
Tensor from_blob(void *data, Dims sizes, Dims strides, DType dtype,
                 Device device = Device::cpu(),
                 std::function<void(void *)> deleter = {});
// The same, row-major contiguous.
Tensor from_blob(void *data, Dims sizes, DType dtype,
                 Device device = Device::cpu(),
                 std::function<void(void *)> deleter = {});

// ---- DLPack ----
//
// to_dlpack*: a DLPack view of `t` (no copy) that keeps t's memory alive
// until the consumer calls its deleter. from_dlpack: a tensor over a DLPack
// tensor (no copy) that calls its deleter when the last Kiln tensor over it
// goes; throws kiln::Error (and calls the deleter) for what Kiln cannot
// hold: a device other than CPU/CUDA, a dtype Kiln lacks, lanes other than
// 1, a read-only tensor, a newer DLPack major version. Synchronising the
// producer's and the consumer's streams is the caller's part, as in
// DLPack's own protocol.
DLManagedTensorVersioned *to_dlpack_versioned(const Tensor &t);
DLManagedTensor *to_dlpack(const Tensor &t);
Tensor from_dlpack(DLManagedTensorVersioned *managed);
Tensor from_dlpack(DLManagedTensor *managed);

// ---- CUDA streams ----
//
// Every CUDA kernel Kiln launches (eager ops, copies, compiled functions'
// kernels) goes on the calling thread's current stream for that device:
// the legacy default stream unless set otherwise. As in PyTorch, the
// caching allocator keeps freed blocks per stream, so a block is handed
// out again only to work on the stream that used it; a tensor used on
// another stream than the one it was made on must outlive that work (or
// the stream be synchronised) before it is freed.

// A CUDA stream: its cudaStream_t (nullptr: the legacy default stream) and
// device.
struct CudaStream {
  void *handle = nullptr;
  int device = 0;
  bool operator==(const CudaStream &) const = default;
};

// The calling thread's current stream on `device`.
CudaStream current_stream(int device = 0);
// Makes `s` the calling thread's current stream on s.device.
void set_current_stream(CudaStream s);

// Sets a current stream for its lifetime, then puts the previous one back.
class CudaStreamGuard {
public:
  explicit CudaStreamGuard(CudaStream s)
      : previous_(current_stream(s.device)) {
    set_current_stream(s);
  }
  ~CudaStreamGuard() { set_current_stream(previous_); }
  CudaStreamGuard(const CudaStreamGuard &) = delete;
  CudaStreamGuard &operator=(const CudaStreamGuard &) = delete;

private:
  CudaStream previous_;
};

// A new non-blocking stream on `device` (cudaStreamNonBlocking), for code
// that does not have one of its own; destroy it with destroy_cuda_stream.
CudaStream create_cuda_stream(int device = 0);
void destroy_cuda_stream(CudaStream s);
// Waits for the work queued on `s`.
void synchronize(CudaStream s);

} // namespace kiln
KILN_API_END
