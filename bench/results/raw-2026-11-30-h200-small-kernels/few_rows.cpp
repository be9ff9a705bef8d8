// Small calls: few rows and small pointwise kernels (decode's shapes), kernel time.
#include <kiln/kiln.h>
#include <kiln/timing.h>
#include <cstdio>
#include <functional>
using kiln::Tensor;
[[kiln::compile]] Tensor rms_rows(const Tensor &x, const Tensor &w) { return kiln::rms_norm(x, w, 1e-6); }
[[kiln::compile]] Tensor softmax_rows(const Tensor &x) { return kiln::softmax(x, -1); }
[[kiln::compile]] Tensor silu_mul(const Tensor &a, const Tensor &b) { return kiln::silu(a) * b; }
static void run(const char *name, const std::function<Tensor()> &f) {
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
  std::printf("%-36s %8.2f us  compiled=%d diff=%.3g\n", name, ms * 1000, int(ran), diff);
  std::fflush(stdout);
}
int main() {
  const kiln::Device d = kiln::Device::cuda(0);
  for (int64_t rows : {16, 64}) {
    Tensor x = kiln::randn({rows, 4096}, kiln::bf16, d), w = kiln::randn({4096}, kiln::bf16, d);
    char n[64];
    std::snprintf(n, sizeof n, "RMS norm %lldx4096 bf16", (long long)rows); run(n, [&] { return rms_rows(x, w); });
    std::snprintf(n, sizeof n, "softmax %lldx4096 bf16", (long long)rows); run(n, [&] { return softmax_rows(x); });
  }
  Tensor a = kiln::randn({16, 11008}, kiln::bf16, d), b = kiln::randn({16, 11008}, kiln::bf16, d);
  run("silu(a)*b 16x11008 bf16", [&] { return silu_mul(a, b); });
  Tensor a2 = kiln::randn({16, 4096}, kiln::bf16, d), b2 = kiln::randn({16, 4096}, kiln::bf16, d);
  run("silu(a)*b 16x4096 bf16", [&] { return silu_mul(a2, b2); });
  return 0;
}
