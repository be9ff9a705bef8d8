// One version of runtime/cuda/attention.cu, compiled with -Dkiln=<ns> so
// that several versions live in one program; the few runtime symbols it
// calls are stubbed here.
#include ATTN_FILE
#include "runargs.h"
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace kiln {
CudaStream current_stream(int device) { return CudaStream{nullptr, device}; }
namespace rt {
bool env_flag(const char *) { return false; }
} // namespace rt
namespace detail {
void after_launch(const char *what, const char *path, DType, int64_t, dim3,
                  dim3, int, bool) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "%s (%s): launch failed: %s\n", what, path,
            cudaGetErrorString(e));
    abort();
  }
}
bool cudnn_attention(const AttnArgs &) { return false; }
void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}
void cuda_fail(cudaError_t e, const char *fn, const char *what) {
  fprintf(stderr, "%s: %s failed: %s\n", fn, what, cudaGetErrorString(e));
  abort();
}
} // namespace detail
} // namespace kiln

extern "C" void VARIANT_FN(const RunArgs *r) {
  kiln::detail::AttnArgs a;
  a.dtype = r->dtype == 0   ? kiln::DType::f32
            : r->dtype == 1 ? kiln::DType::f64
                            : kiln::DType::bf16;
  a.B = r->B, a.Hq = r->Hq, a.Hkv = r->Hkv, a.L = r->L, a.S = r->S;
  a.D = r->D, a.Dv = r->Dv;
  a.q = r->q, a.k = r->k, a.v = r->v, a.out = r->out, a.mask = r->mask;
  for (int d = 0; d < 4; ++d) {
    a.q_stride[d] = r->qs[d], a.k_stride[d] = r->ks[d];
    a.v_stride[d] = r->vs[d], a.m_stride[d] = r->ms[d];
    a.o_stride[d] = r->os[d];
  }
  a.mask_bool = r->mask_bool, a.causal = r->causal, a.scale = r->scale;
  a.device = kiln::Device::cuda(0);
  kiln::detail::cuda_attention(a);
}
