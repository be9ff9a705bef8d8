// Many short rows (at most 32 16-byte slots: 128 f32 or 256 bf16 columns),
// how a thread group holds them: build once per policy,
//   cfg=build/bin/kiln-config
//   clang++-19 -O2 -fplugin=$($cfg --plugin) -fplugin-arg-kiln-arch=sm_90 \
//     -DKILN_SHORT_ROW_SLOTS=2 $($cfg --cxxflags) bench/experiments/short_rows.cpp \
//     $($cfg --ldflags) -o short_rows2
// (the kernels are the same for every policy: only the host's launch
// rule reads the macro, so the second build takes them from the cache)
// (kiln::gen::plan_cuda: 1 = a slot per thread and 4 rows a group; 2 or 4
// slots per thread and a fraction of the threads per row; without the
// macro, policy 0: generated.h's rule, short_row_slots). Prints kernel
// time (20 back-to-back calls per event pair, median of 30) per workload,
// compiled against eager checked first.
#include <kiln/kiln.h>
#include <kiln/timing.h>

#include <cstdio>
#include <functional>

#ifndef KILN_SHORT_ROW_SLOTS
#define KILN_SHORT_ROW_SLOTS_VALUE 0 // generated.h's rule (short_row_slots)
#else
#define KILN_SHORT_ROW_SLOTS_VALUE KILN_SHORT_ROW_SLOTS
#endif

using kiln::Tensor;

[[kiln::compile]] Tensor bias_heads_softmax(const Tensor &x, const Tensor &b,
                                            int64_t H) {
  const int64_t B = x.size(0), T = x.size(1);
  return kiln::softmax((x + b).view({B, T, H, -1}).transpose(1, 2), -1);
}
[[kiln::compile]] Tensor softmax_rows(const Tensor &x) {
  return kiln::softmax(x, -1);
}
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w,
                                         const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor rms_rows(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-6);
}

static void run(const char *name, double bytes, const std::function<Tensor()> &f) {
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
  std::printf("{\"workload\": \"%s\", \"policy\": %d, \"kt_ms\": %.5f, "
              "\"GBps\": %.0f, \"compiled\": %s, \"max_abs_diff\": %.3g}\n",
              name, KILN_SHORT_ROW_SLOTS_VALUE, ms, bytes / ms / 1e6,
              ran ? "true" : "false", diff);
  std::fflush(stdout);
}

int main() {
  const kiln::Device d = kiln::Device::cuda(0);
  const kiln::DType f32 = kiln::f32, bf16 = kiln::bf16;
  Tensor hx = kiln::randn({8, 1024, 4096}, f32, d), hb = kiln::randn({4096}, f32, d);
  run("bias, head split, softmax 8x1024x4096 f32", 8.0 * (1 << 25),
      [&] { return bias_heads_softmax(hx, hb, 32); });
  for (int64_t cols : {16, 64, 128}) {
    const int64_t rows = (int64_t(1) << 25) / cols;
    Tensor x = kiln::randn({rows, cols}, f32, d), w = kiln::randn({cols}, f32, d),
           b = kiln::randn({cols}, f32, d);
    Tensor xh = x.to(bf16), wh = w.to(bf16);
    char n1[64], n2[64], n3[64];
    std::snprintf(n1, sizeof n1, "softmax %lldx%lld f32", (long long)rows, (long long)cols);
    std::snprintf(n2, sizeof n2, "layer norm %lldx%lld f32", (long long)rows, (long long)cols);
    std::snprintf(n3, sizeof n3, "RMS norm %lldx%lld bf16", (long long)rows, (long long)cols);
    run(n1, 8.0 * (1 << 25), [&] { return softmax_rows(x); });
    run(n2, 8.0 * (1 << 25), [&] { return layer_norm_rows(x, w, b); });
    run(n3, 4.0 * (1 << 25), [&] { return rms_rows(xh, wh); });
  }
  Tensor xh = kiln::randn({int64_t(1) << 17, 256}, bf16, d), wh = kiln::randn({256}, bf16, d);
  run("RMS norm 131072x256 bf16", 4.0 * (1 << 25), [&] { return rms_rows(xh, wh); });
  return 0;
}
