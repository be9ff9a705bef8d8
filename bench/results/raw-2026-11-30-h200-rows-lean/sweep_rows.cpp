// kiln_bench --sweep's row ops and shapes (bench/kiln_bench.cpp: softmax and
// layer norm f32, RMS norm bf16; rows of 16 to 32000 columns, 256 rows and
// 2^25 elements) in a small binary: kiln_bench is one large translation
// unit whose kernels take nvcc some 20 minutes on this 2-core machine after
// a kernel header changes. Kernel time: 20 back-to-back calls per event
// pair, median of 30; compiled checked against eager first.
#include <kiln/kiln.h>
#include <kiln/timing.h>

#include <cstdio>
#include <functional>

using kiln::Tensor;

[[kiln::compile]] Tensor softmax_rows(const Tensor &x) { return kiln::softmax(x, -1); }
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor rms_norm_rows(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-6);
}

static void run(const char *name, double bytes, double tol, const std::function<Tensor()> &f) {
  const kiln::Device d = kiln::Device::cuda(0);
  kiln::set_compiled_enabled(false);
  Tensor eager = f().clone();
  kiln::set_compiled_enabled(true);
  kiln::reset_stats();
  Tensor got = f();
  kiln::synchronize(d);
  const bool ran = kiln::stats().compiled_calls == 1;
  const double diff = kiln::max_abs_diff(got, eager);
  const double ms = kiln::median(kiln::time_calls(d, [&] { f(); }, 3, 30, 20));
  std::printf("{\"workload\": \"%s\", \"kt_ms\": %.5f, \"GBps\": %.0f, \"compiled\": %s, "
              "\"max_abs_diff\": %.3g, \"ok\": %s}\n",
              name, ms, bytes / ms / 1e6, ran ? "true" : "false", diff,
              ran && diff <= tol ? "true" : "false");
  std::fflush(stdout);
}

int main() {
  const kiln::Device d = kiln::Device::cuda(0);
  for (int64_t cols : {16, 32, 64, 128, 768, 1024, 4096, 8192, 32000})
    for (int64_t rows : {int64_t(256), (int64_t(1) << 25) / cols}) {
      const double e = double(rows) * double(cols);
      Tensor x = kiln::randn({rows, cols}, kiln::f32, d);
      Tensor w = kiln::randn({cols}, kiln::f32, d), b = kiln::randn({cols}, kiln::f32, d);
      Tensor xh = x.to(kiln::bf16), wh = w.to(kiln::bf16);
      char name[96];
      std::snprintf(name, sizeof name, "sweep softmax %lldx%lld", (long long)rows, (long long)cols);
      run(name, 8 * e, 1e-5, [&] { return softmax_rows(x); });
      std::snprintf(name, sizeof name, "sweep layer norm %lldx%lld", (long long)rows, (long long)cols);
      run(name, 8 * e + 8.0 * cols, 1e-4, [&] { return layer_norm_rows(x, w, b); });
      std::snprintf(name, sizeof name, "sweep RMS norm %lldx%lld", (long long)rows, (long long)cols);
      run(name, 4 * e + 2.0 * cols, 1e-1, [&] { return rms_norm_rows(xh, wh); });
    }
  return 0;
}
