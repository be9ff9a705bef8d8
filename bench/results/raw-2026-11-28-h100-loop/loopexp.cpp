// Loop-kernel experiment: kernel time of row ops whose rows are too long
// for registers, one binary per -DKILN_LOOP_THREADS / -DKILN_LOOP_WAVES.
#include <kiln/kiln.h>
#include <functional>
using kiln::Tensor;
[[kiln::compile]] Tensor softmax_rows(const Tensor &x) { return kiln::softmax(x, -1); }
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor rms_norm_rows(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-6);
}
#include <cstdio>
#include <string>
#ifndef TAG
#define TAG "?"
#endif
static void one(const char *name, int64_t rows, int64_t cols, kiln::DType dt,
                double bytes_per_elem, const std::function<Tensor()> &fn,
                const std::function<Tensor()> &eager_fn) {
  kiln::Device d = kiln::Device::cuda(0);
  kiln::set_compiled_enabled(true);
  kiln::reset_stats();
  Tensor c = fn();
  kiln::synchronize(d);
  bool ran = kiln::stats().compiled_calls == 1;
  kiln::set_compiled_enabled(false);
  Tensor e = eager_fn();
  kiln::set_compiled_enabled(true);
  double diff = kiln::max_abs_diff(c.to(kiln::f32), e.to(kiln::f32));
  double kt = kiln::median(kiln::time_calls(d, [&] { fn(); }, 3, 30, 20));
  double floor_ms = bytes_per_elem * rows * cols / 3.0e12 * 1e3;
  std::printf("%s\t%s\t%lldx%lld\t%.4f\tran=%d\tdiff=%.2g\tbytes/ms=%.0fGB/s\n", TAG, name,
              (long long)rows, (long long)cols, kt, ran, diff,
              bytes_per_elem * rows * cols / kt / 1e6);
  (void)floor_ms;
}
int main() {
  kiln::Device d = kiln::Device::cuda(0);
  struct S { int64_t r, c; };
  for (S s : {S{1048, 32000}, S{4096, 16384}, S{2048, 50257}, S{128, 12288}, S{264, 16000}}) {
    Tensor x = kiln::randn({s.r, s.c}, kiln::f32, d);
    Tensor w = kiln::randn({s.c}, kiln::f32, d), b = kiln::randn({s.c}, kiln::f32, d);
    Tensor xh = x.to(kiln::bf16), wh = w.to(kiln::bf16);
    one("softmax f32", s.r, s.c, kiln::f32, 8, [&] { return softmax_rows(x); },
        [&] { return softmax_rows(x); });
    one("layer_norm f32", s.r, s.c, kiln::f32, 8, [&] { return layer_norm_rows(x, w, b); },
        [&] { return layer_norm_rows(x, w, b); });
    one("rms_norm bf16", s.r, s.c, kiln::bf16, 4, [&] { return rms_norm_rows(xh, wh); },
        [&] { return rms_norm_rows(xh, wh); });
    one("softmax bf16", s.r, s.c, kiln::bf16, 4, [&] { return softmax_rows(xh); },
        [&] { return softmax_rows(xh); });
  }
}
