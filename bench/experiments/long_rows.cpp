// Issue 14's item-2 row workloads (softmax, log_softmax, layer norm, RMS
// norm, where(sum(x) > t)) and the sweep's long-row shapes in a small
// binary: kiln_bench is one translation unit whose kernels take nvcc some
// 20 minutes on a 2-core machine after a kernel header changes; this one
// builds in about a minute for sm_90:
//   cfg=build/bin/kiln-config
//   clang++-19 -O2 -fplugin=$($cfg --plugin) -fplugin-arg-kiln-arch=sm_90 \
//     $($cfg --cxxflags) bench/experiments/long_rows.cpp $($cfg --ldflags) -o long_rows
// Prints kernel time (20 back-to-back calls per event pair, median of 30)
// and single-call latency per workload, compiled checked against eager
// first. `long_rows NAME...` runs only workloads whose name contains one.
// `long_rows --cpu [NAME...]`: the same ops on the CPU over smaller
// shapes, compiled and eager (build with -fplugin-arg-kiln-cuda=off), the
// median of 5 calls each ("kt_ms" compiled, "eager_ms").
#include <kiln/kiln.h>
#include <kiln/timing.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

using kiln::Tensor;

[[kiln::compile]] Tensor softmax_rows(const Tensor &x) { return kiln::softmax(x, -1); }
[[kiln::compile]] Tensor log_softmax_rows(const Tensor &x) { return kiln::log_softmax(x, -1); }
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor rms_norm_rows(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-6);
}
[[kiln::compile]] Tensor where_sum(const Tensor &x, double t) {
  return kiln::where(kiln::sum(x) > t, x * 2, x);
}
[[kiln::compile]] Tensor var_all(const Tensor &x) { return kiln::var(x); }
[[kiln::compile]] Tensor masked_softmax(const Tensor &s, const Tensor &mask, double scale) {
  return kiln::softmax(kiln::where(mask, s * scale, -1e9), -1);
}

static int g_argc;
static char **g_argv;
static bool g_cpu = false;

static void run(const char *name, double bytes, double tol, const std::function<Tensor()> &f) {
  bool want = g_argc < 2;
  for (int i = 1; i < g_argc; ++i)
    want |= std::strstr(name, g_argv[i]) != nullptr;
  if (!want)
    return;
  const kiln::Device d = g_cpu ? kiln::Device::cpu() : kiln::Device::cuda(0);
  kiln::set_compiled_enabled(false);
  Tensor eager = f().clone();
  kiln::set_compiled_enabled(true);
  kiln::reset_stats();
  Tensor got = f();
  kiln::synchronize(d);
  const bool ran = kiln::stats().compiled_calls == 1;
  const double diff = kiln::max_abs_diff(got, eager);
  if (g_cpu) {
    const double kt = kiln::median(kiln::time_calls(d, [&] { f(); }, 1, 5));
    kiln::set_compiled_enabled(false);
    const double ek = kiln::median(kiln::time_calls(d, [&] { f(); }, 1, 5));
    kiln::set_compiled_enabled(true);
    std::printf("{\"workload\": \"%s\", \"kt_ms\": %.5f, \"eager_ms\": %.5f, "
                "\"compiled\": %s, \"max_abs_diff\": %.3g, \"ok\": %s}\n",
                name, kt, ek, ran ? "true" : "false", diff,
                ran && diff <= tol ? "true" : "false");
    std::fflush(stdout);
    return;
  }
  const double kt = kiln::median(kiln::time_calls(d, [&] { f(); }, 3, 30, 20));
  const double one = kiln::median(kiln::time_calls(d, [&] { f(); }, 3, 30));
  std::printf("{\"workload\": \"%s\", \"kt_ms\": %.5f, \"ms\": %.5f, \"GBps\": %.0f, "
              "\"compiled\": %s, \"max_abs_diff\": %.3g, \"ok\": %s}\n",
              name, kt, one, bytes / kt / 1e6, ran ? "true" : "false", diff,
              ran && diff <= tol ? "true" : "false");
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc > 1 && !std::strcmp(argv[1], "--cpu"))
    g_cpu = true, --argc, ++argv;
  g_argc = argc, g_argv = argv;
  const kiln::Device d = g_cpu ? kiln::Device::cpu() : kiln::Device::cuda(0);
  if (!g_cpu) {
    Tensor x = kiln::randn({1 << 26}, kiln::f32, d);
    run("where(sum(x)>t,2x,x) 2^26", 8.0 * (1 << 26), 1e-6, [&] { return where_sum(x, 0.0); });
    run("var(x) 2^26", 4.0 * (1 << 26), 1e-5, [&] { return var_all(x); });
    // bench/kiln_bench.cpp's masked softmax: a causal [T, T] bool mask
    // beside [B, H, T, T] bf16 scores.
    const int64_t B = 8, H = 16, T = 1024;
    Tensor s = kiln::randn({B, H, T, T}, kiln::f32, d).to(kiln::bf16);
    Tensor i = kiln::arange(T, kiln::f32, d).reshape({T, 1});
    Tensor keep = kiln::arange(T, kiln::f32, d).reshape({1, T}) <= i;
    run("masked softmax 8x16x1024x1024 bf16", 4.0 * B * H * T * T + double(T * T), 1e-2,
        [&] { return masked_softmax(s, keep, 0.125); });
  }
  struct Shape { int64_t rows, cols; };
  const std::vector<Shape> shapes =
      g_cpu ? std::vector<Shape>{{8192, 1024}, {2048, 4096}, {1024, 200}}
            : std::vector<Shape>{{32768, 1024}, {16384, 4096}, {43690, 768},
                                 {8192, 4096}, {4096, 8192}, {262144, 128}};
  for (auto [rows, cols] : shapes) {
    const double e = double(rows) * double(cols);
    Tensor x = kiln::randn({rows, cols}, kiln::f32, d);
    Tensor w = kiln::randn({cols}, kiln::f32, d), b = kiln::randn({cols}, kiln::f32, d);
    Tensor xh = x.to(kiln::bf16), wh = w.to(kiln::bf16);
    char name[96];
    std::snprintf(name, sizeof name, "softmax %lldx%lld f32", (long long)rows, (long long)cols);
    run(name, 8 * e, 1e-5, [&] { return softmax_rows(x); });
    std::snprintf(name, sizeof name, "log_softmax %lldx%lld f32", (long long)rows, (long long)cols);
    run(name, 8 * e, 1e-4, [&] { return log_softmax_rows(x); });
    std::snprintf(name, sizeof name, "layer norm %lldx%lld f32", (long long)rows, (long long)cols);
    run(name, 8 * e + 8.0 * cols, 1e-4, [&] { return layer_norm_rows(x, w, b); });
    std::snprintf(name, sizeof name, "RMS norm %lldx%lld bf16", (long long)rows, (long long)cols);
    run(name, 4 * e + 2.0 * cols, 1e-1, [&] { return rms_norm_rows(xh, wh); });
  }
  return 0;
}
