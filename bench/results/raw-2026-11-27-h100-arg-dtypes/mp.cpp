// One-off: mixed-precision RMS norms on 16384x4096 (kernel time: 20
// back-to-back calls per event pair; single call: one call per pair).
#include <kiln/kiln.h>
#include <kiln/timing.h>
#include <cstdio>
using kiln::Tensor;

[[kiln::compile]] Tensor rms_mixed(const Tensor &x, const Tensor &w) {
  Tensor xf = x.to(kiln::f32);
  Tensor r = xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + 1e-6);
  return r.to(x.dtype()) * w;
}
[[kiln::compile]] Tensor rms_f32_weight(const Tensor &x,
                                        [[kiln::dtype("f32")]] const Tensor &w) {
  Tensor xf = x.to(kiln::f32);
  return (xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + 1e-6) * w).to(x.dtype());
}
[[kiln::compile]] void sgd_master([[kiln::dtype("f32")]] Tensor &p, const Tensor &g, double lr) {
  p -= lr * g;
}

int main() {
  kiln::Device d = kiln::Device::cuda(0);
  const int64_t R = 16384, C = 4096;
  Tensor x = kiln::randn({R, C}).to(kiln::bf16).to(d);
  Tensor wb = kiln::randn({C}).to(kiln::bf16).to(d), wf = kiln::randn({C}).to(d);
  Tensor p = kiln::randn({R * C}).to(d), g = kiln::randn({R * C}).to(kiln::bf16).to(d);
  double bw = kiln::copy_bandwidth(d, size_t(1) << 30);
  auto row = [&](const char *name, double bytes, auto fn) {
    kiln::reset_stats();
    fn();
    kiln::Stats s = kiln::stats();
    double k = kiln::median(kiln::time_calls(d, fn, 5, 30, 20));
    double one = kiln::median(kiln::time_calls(d, fn, 5, 30, 1));
    double floor = bytes / bw * 1e3;
    std::printf("| %s | %llu | %llu | %.4f | %.4f | %.4f | %.0f%% |\n", name,
                (unsigned long long)s.compiled_calls, (unsigned long long)s.kernel_launches,
                floor, k, one, 100 * floor / k);
  };
  std::printf("| workload | compiled calls | kernels | floor ms | kernel ms | single call ms | floor/kernel |\n|---|---|---|---|---|---|---|\n");
  double n = double(R) * C;
  row("rms_norm bf16, eager library op", n * 4, [&] { (void)kiln::rms_norm(x, wb, 1e-6); });
  row("rms_mixed bf16 x, bf16 w (compiled)", n * 4, [&] { (void)rms_mixed(x, wb); });
  row("rms_f32_weight bf16 x, f32 w (compiled)", n * 4, [&] { (void)rms_f32_weight(x, wf); });
  kiln::set_compiled_enabled(false);
  row("rms_f32_weight, eager body", n * 4, [&] { (void)rms_f32_weight(x, wf); });
  kiln::set_compiled_enabled(true);
  row("sgd f32 p, bf16 g, in place (compiled)", n * 10, [&] { sgd_master(p, g, 1e-9); });
  kiln::set_compiled_enabled(false);
  row("sgd f32 p, bf16 g, eager body", n * 10, [&] { sgd_master(p, g, 1e-9); });
}
