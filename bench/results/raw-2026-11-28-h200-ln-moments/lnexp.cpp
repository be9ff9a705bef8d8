// Layer norm and var over long rows (the loop kernel): kernel time, the
// compiled path's use, and the error against a float64 reference, for one
// plugin build (TAG names it). Softmax rides along as a control: its
// kernel did not change.
#include <kiln/kiln.h>
#include <cstdio>
#include <functional>
using kiln::Tensor;
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor var_rows(const Tensor &x) { return kiln::var(x, -1, false, 0); }
[[kiln::compile]] Tensor softmax_rows(const Tensor &x) { return kiln::softmax(x, -1); }
#ifndef TAG
#define TAG "?"
#endif
static void one(const char *name, int64_t rows, int64_t cols, double bytes,
                const std::function<Tensor()> &fn, const Tensor &ref) {
  kiln::Device d = kiln::Device::cuda(0);
  kiln::reset_stats();
  Tensor c = fn();
  kiln::synchronize(d);
  const bool ran = kiln::stats().compiled_calls == 1;
  const double err = kiln::max_abs_diff(c.to(kiln::f64), ref);
  const double kt = kiln::median(kiln::time_calls(d, [&] { fn(); }, 3, 30, 20));
  std::printf("%s\t%s\t%lldx%lld\t%.4f\tran=%d\terr64=%.2g\t%.0fGB/s\n", TAG, name,
              (long long)rows, (long long)cols, kt, ran, err, bytes / kt / 1e6);
}
int main() {
  kiln::Device d = kiln::Device::cuda(0);
  struct S { int64_t r, c; double offset; };
  for (S s : {S{1048, 32000, 0}, S{4096, 16384, 0}, S{264, 16000, 0}, S{128, 12288, 0},
              S{512, 65536, 0}, S{2048, 50257, 0}, S{1048, 32000, 1000}}) {
    Tensor x = kiln::randn({s.r, s.c}, kiln::f32, d) + s.offset;
    Tensor w = kiln::randn({s.c}, kiln::f32, d), b = kiln::randn({s.c}, kiln::f32, d);
    Tensor x64 = x.to(kiln::f64), w64 = w.to(kiln::f64), b64 = b.to(kiln::f64);
    const double n = double(s.r) * double(s.c);
    const char *ln = s.offset ? "layer_norm f32 +1000" : "layer_norm f32";
    one(ln, s.r, s.c, 8 * n, [&] { return layer_norm_rows(x, w, b); },
        kiln::layer_norm(x64, w64, b64, 1e-5));
    one(s.offset ? "var f32 +1000" : "var f32", s.r, s.c, 4 * n, [&] { return var_rows(x); },
        kiln::var(x64, -1, false, 0));
    if (!s.offset)
      one("softmax f32", s.r, s.c, 8 * n, [&] { return softmax_rows(x); },
          kiln::softmax(x64, -1));
  }
}
