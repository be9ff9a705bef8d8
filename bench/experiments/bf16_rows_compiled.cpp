// bf16 row ops as compiled functions, for the slot count of bf16 rows
// kernels (kiln::gen::plan_cuda): built twice, as is and with
// -DKILN_ROWS_VEC_SLOTS=2 (the launch before 2026-12-01), and run in one
// device call beside bench/experiments/bf16_rows_torch.py. Prints kernel
// time (20 back-to-back calls per event pair, median of 30) and single-call
// latency (one call per event pair), and the largest difference from the
// eager ops. Arguments ROWSxCOLS[:f32] replace the default shapes (bf16
// unless :f32) and skip the product; -DKILN_ROWS_EXACT=0 builds the launch
// before rows of 5120 took 5 slots a thread. Built with
//   cfg=build/bin/kiln-config
//   clang++-19 -O2 -fplugin=$($cfg --plugin) -fplugin-arg-kiln-arch=sm_90 \
//     $($cfg --cxxflags) bench/experiments/bf16_rows_compiled.cpp \
//     $($cfg --ldflags) -o bf16_rows_compiled
#include <kiln/kiln.h>
#include <kiln/timing.h>

#include <cstdio>
#include <cstring>
#include <vector>
#include <functional>
#include <string>

using kiln::Tensor;

[[kiln::compile]] Tensor softmax_rows(const Tensor &x) {
  return kiln::softmax(x, -1);
}
[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w,
                                         const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
[[kiln::compile]] Tensor layer_norm_gelu_rows(const Tensor &x, const Tensor &w,
                                              const Tensor &b) {
  return kiln::gelu(kiln::layer_norm(x, w, b, 1e-5), "tanh");
}
[[kiln::compile]] Tensor rms_norm_rows(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-6);
}
[[kiln::compile]] Tensor norm_gelu_matmul(const Tensor &x, const Tensor &g,
                                          const Tensor &b, const Tensor &w) {
  return kiln::matmul(kiln::gelu(kiln::layer_norm(x, g, b, 1e-5), "tanh"), w);
}

static void row(const char *name, const char *shape,
                const std::function<Tensor()> &compiled,
                const std::function<Tensor()> &eager) {
  const kiln::Device d = kiln::Device::cuda(0);
  Tensor got = compiled().to(kiln::f32), want = eager().to(kiln::f32);
  const double diff = kiln::amax(kiln::abs(got - want)).item<float>();
  const double kt = kiln::median(kiln::time_calls(d, [&] { compiled(); }, 5, 30, 20));
  const double sc = kiln::median(kiln::time_calls(d, [&] { compiled(); }, 5, 30, 1));
  std::printf("%-26s %-22s kernel %.4f ms  single %.4f ms  max|diff| %.3g\n",
              name, shape, kt, sc, diff);
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  const kiln::Device d = kiln::Device::cuda(0);
#ifdef KILN_ROWS_VEC_SLOTS
  std::printf("built with KILN_ROWS_VEC_SLOTS=%d\n", KILN_ROWS_VEC_SLOTS);
#elif defined(KILN_ROWS_EXACT)
  std::printf("built with KILN_ROWS_EXACT=%d\n", KILN_ROWS_EXACT);
#else
  std::printf("built with the default slots\n");
#endif
  struct Shape {
    int64_t rows, cols;
    bool f32;
  };
  std::vector<Shape> shapes = {{32768, 2048, false}, {21845, 3072, false},
                               {16384, 4096, false}, {13107, 5120, false},
                               {8192, 8192, false}};
  if (argc > 1) {
    shapes.clear();
    for (int i = 1; i < argc; ++i) {
      long long r = 0, c = 0;
      std::sscanf(argv[i], "%lldx%lld", &r, &c);
      shapes.push_back({r, c, std::strstr(argv[i], ":f32") != nullptr});
    }
  }
  for (auto [rows, cols, f32] : shapes) {
    const kiln::DType dt = f32 ? kiln::f32 : kiln::bf16;
    Tensor x = kiln::randn({rows, cols}, dt, d);
    Tensor w = kiln::randn({cols}, dt, d), b = kiln::randn({cols}, dt, d);
    char shape[64];
    std::snprintf(shape, sizeof shape, "%lldx%lld %s", (long long)rows, (long long)cols,
                  f32 ? "f32" : "bf16");
    row("softmax", shape, [&] { return softmax_rows(x); },
        [&] { return kiln::softmax(x, -1); });
    row("layer norm", shape, [&] { return layer_norm_rows(x, w, b); },
        [&] { return kiln::layer_norm(x, w, b, 1e-5); });
    row("layer norm -> tanh-GELU", shape, [&] { return layer_norm_gelu_rows(x, w, b); },
        [&] { return kiln::gelu(kiln::layer_norm(x, w, b, 1e-5), "tanh"); });
    row("RMS norm", shape, [&] { return rms_norm_rows(x, w); },
        [&] { return kiln::rms_norm(x, w, 1e-6); });
  }
  if (argc > 1)
    return 0;
  const int64_t M = 8192, K = 4096, N = 4096;
  Tensor mx = kiln::randn({M, K}, kiln::bf16, d);
  Tensor g = kiln::randn({K}, kiln::bf16, d), bb = kiln::randn({K}, kiln::bf16, d);
  Tensor kw = (kiln::randn({K, N}, kiln::f32, d) * (1.0 / 64)).to(kiln::bf16);
  row("layer norm->GELU->matmul", "8192x4096 @ 4096x4096",
      [&] { return norm_gelu_matmul(mx, g, bb, kw); },
      [&] { return kiln::matmul(kiln::gelu(kiln::layer_norm(mx, g, bb, 1e-5), "tanh"), kw); });
  return 0;
}
