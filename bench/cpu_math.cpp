// CPU math, compiled against eager: whole-process timing pairs one mode
// against the other (`cpu_math sin_cos compiled 40` vs `... eager 40`),
// and each run prints its median per-call time. The workloads are the
// transcendental ones, where the vector math (kiln/vecmath.def) matters:
// elementwise over 2^22 f32 values, on every core OpenMP is given.
#include "example.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using kiln::Tensor;

[[kiln::compile]] Tensor sin_cos(const Tensor &x, const Tensor &y) {
  return kiln::sin(x) + kiln::cos(y);
}
[[kiln::compile]] Tensor gelu_tanh(const Tensor &x, const Tensor &) {
  return kiln::gelu(x, "tanh");
}
[[kiln::compile]] Tensor gelu_erf(const Tensor &x, const Tensor &) {
  return kiln::gelu(x);
}
[[kiln::compile]] Tensor silu_mul(const Tensor &x, const Tensor &y) {
  return kiln::silu(x) * y;
}
[[kiln::compile]] Tensor exp_log(const Tensor &x, const Tensor &y) {
  return kiln::exp(x) * kiln::log(kiln::abs(y) + 1);
}
[[kiln::compile]] Tensor pow_xy(const Tensor &x, const Tensor &y) {
  return kiln::pow(kiln::abs(x), y);
}
// Not vector math: var over everything (welford's sum_sq_dev), whose CPU
// pass ran Welford's update per element before 5e70ce0.
[[kiln::compile]] Tensor var_all(const Tensor &x, const Tensor &) {
  return kiln::var(x);
}

int main(int argc, char **argv) {
  struct {
    const char *name;
    Tensor (*fn)(const Tensor &, const Tensor &);
  } workloads[] = {{"sin_cos", sin_cos},   {"gelu_tanh", gelu_tanh},
                   {"gelu_erf", gelu_erf}, {"silu_mul", silu_mul},
                   {"exp_log", exp_log},   {"pow", pow_xy},
                   {"var", var_all}};
  if (argc < 3) {
    std::fprintf(stderr, "usage: cpu_math <workload|all> <compiled|eager> [calls]\n");
    return 2;
  }
  bool compiled = !std::strcmp(argv[2], "compiled");
  int calls = argc > 3 ? std::atoi(argv[3]) : 20;
  kiln::set_compiled_enabled(compiled);
  Tensor x = kiln::randn({int64_t(1) << 22}), y = kiln::randn({int64_t(1) << 22});
  for (auto &w : workloads) {
    if (std::strcmp(argv[1], "all") && std::strcmp(argv[1], w.name))
      continue;
    double ms = example::median_ms([&] { w.fn(x, y); }, kiln::Device::cpu(), calls);
    kiln::Stats st = kiln::stats();
    std::printf("%-10s %-8s %8.3f ms per call (median of %d; compiled calls %llu)\n",
                w.name, argv[2], ms, calls, (unsigned long long)st.compiled_calls);
  }
  return 0;
}
