// Kiln beside PyTorch in one process: a compiled function called on
// PyTorch tensors through DLPack, no copies either way, on PyTorch's
// current CUDA stream. kiln_torch.py loads this library with ctypes.
#include <kiln/kiln.h>

#include <cstdio>
#include <exception>

[[kiln::compile]] kiln::Tensor gelu_tanh(const kiln::Tensor &x) {
  return 0.5 * x * (1.0 + kiln::tanh(0.7978845608028654 *
                                     (x + 0.044715 * x * x * x)));
}

// Takes ownership of `in` (a PyTorch tensor's DLPack export); returns the
// result as a DLPack tensor PyTorch takes ownership of, or null on an
// error (printed). `stream`: PyTorch's current cudaStream_t (0: the legacy
// default stream), on which Kiln queues its kernels.
extern "C" DLManagedTensor *kiln_torch_gelu(DLManagedTensor *in, void *stream) {
  try {
    kiln::Tensor x = kiln::from_dlpack(in);
    kiln::CudaStreamGuard on_torch_stream(
        {stream, x.device().is_cuda() ? int(x.device().index) : 0});
    return kiln::to_dlpack(gelu_tanh(x));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln_torch_gelu: %s\n", e.what());
    return nullptr;
  }
}

extern "C" unsigned long long kiln_torch_compiled_calls() {
  return kiln::stats().compiled_calls;
}
