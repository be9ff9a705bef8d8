// Row reductions whose rows cannot be read 16 bytes at a time (odd row
// lengths: a ViT's 197, 1001, 4095, a vocabulary of 50257; a reduction over
// dim 0): kernel time, the compiled path's use, and the error against a
// float64 reference, for one plugin build (TAG names it).
#include <kiln/kiln.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
using kiln::Tensor;
[[kiln::compile]] Tensor softmax_rows(const Tensor &x) { return kiln::softmax(x, -1); }
[[kiln::compile]] Tensor log_softmax_rows(const Tensor &x) { return kiln::log_softmax(x, -1); }
[[kiln::compile]] Tensor log_softmax_cols(const Tensor &x) { return kiln::log_softmax(x, 0); }
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor var_rows(const Tensor &x) { return kiln::var(x, -1, false, 0); }
[[kiln::compile]] Tensor rms_rows(const Tensor &x, const Tensor &w) { return kiln::rms_norm(x, w, 1e-6); }
#ifndef TAG
#define TAG "?"
#endif
static void one(const char *name, kiln::DType dt, int64_t rows, int64_t cols, double bytes,
                const std::function<Tensor()> &fn, const Tensor &ref) {
  kiln::Device d = kiln::Device::cuda(0);
  kiln::reset_stats();
  Tensor c = fn();
  kiln::synchronize(d);
  const bool ran = kiln::stats().compiled_calls == 1;
  const double err = kiln::max_abs_diff(c.to(kiln::f64), ref);
  if (std::getenv("ANY_ONCE")) // one call each, for ncu
    return;
  const double kt = kiln::median(kiln::time_calls(d, [&] { fn(); }, 3, 30, 20));
  std::printf("%s\t%s %s\t%lldx%lld\t%.4f\tran=%d\terr64=%.2g\t%.0fGB/s\n", TAG, name,
              kiln::dtype_name(dt), (long long)rows, (long long)cols, kt, ran, err,
              bytes / kt / 1e6);
}
int main() {
  kiln::Device d = kiln::Device::cuda(0);
  struct S { int64_t r, c; kiln::DType dt; int what; };
  enum { SM = 1, LSM = 2, LN = 4, VAR = 8, RMS = 16, COLS = 32 };
  for (S s : {S{151296, 197, kiln::f32, SM}, S{151296, 197, kiln::bf16, SM},
              S{16384, 1001, kiln::f32, SM | LN | RMS}, S{16384, 1001, kiln::bf16, SM | RMS},
              S{4096, 4095, kiln::f32, SM | LN | VAR}, S{1048, 32001, kiln::f32, SM | LSM},
              S{2048, 50257, kiln::f32, SM | LSM | LN | VAR}, S{2048, 50257, kiln::bf16, SM | RMS},
              S{4096, 1024, kiln::f32, COLS}}) {
    Tensor x = kiln::randn({s.r, s.c}, kiln::f32, d).to(s.dt);
    Tensor w = kiln::randn({s.c}, kiln::f32, d).to(s.dt), b = kiln::randn({s.c}, kiln::f32, d).to(s.dt);
    Tensor x64 = x.to(kiln::f64), w64 = w.to(kiln::f64), b64 = b.to(kiln::f64);
    const double n = double(s.r) * double(s.c), e = double(kiln::element_size(s.dt));
    if (s.what & SM)
      one("softmax", s.dt, s.r, s.c, 2 * e * n, [&] { return softmax_rows(x); }, kiln::softmax(x64, -1));
    if (s.what & LSM)
      one("log_softmax", s.dt, s.r, s.c, 2 * e * n, [&] { return log_softmax_rows(x); },
          kiln::log_softmax(x64, -1));
    if (s.what & LN)
      one("layer_norm", s.dt, s.r, s.c, 2 * e * n, [&] { return layer_norm_rows(x, w, b); },
          kiln::layer_norm(x64, w64, b64, 1e-5));
    if (s.what & VAR)
      one("var", s.dt, s.r, s.c, e * n, [&] { return var_rows(x); }, kiln::var(x64, -1, false, 0));
    if (s.what & RMS)
      one("rms_norm", s.dt, s.r, s.c, 2 * e * n, [&] { return rms_rows(x, w); },
          kiln::rms_norm(x64, w64, 1e-6));
    if (s.what & COLS)
      one("log_softmax dim 0", s.dt, s.r, s.c, 2 * e * n, [&] { return log_softmax_cols(x); },
          kiln::log_softmax(x64, 0));
  }
}
