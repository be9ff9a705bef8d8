// Compiled against eager on a CUDA GPU: the fatbin nvcc built at compile
// time is embedded in the object, loaded on first use, and each call runs
// one fused kernel.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: MISMATCH
// COMPILED: one fused kernel per call: yes
// FORCED: one fused kernel per call: no
// CHECK: mixed devices fall back: yes
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "exec_compare.h"

using kiln::Tensor;

[[kiln::compile]] Tensor sin_plus_cos(const Tensor &x, const Tensor &y) {
  return kiln::sin(x) + kiln::cos(y);
}

[[kiln::compile]] Tensor gelu_mix(const Tensor &x, const Tensor &y, double a,
                                  long n) {
  // The condition compares inputs: on a 16-bit intermediate the fused
  // code (which keeps f32) and eager (which rounds) may pick other sides.
  Tensor g = kiln::gelu(x, "tanh") * a;
  return kiln::where(x > y, kiln::clamp(g, -n, n), kiln::sigmoid(y));
}

static Tensor input(kiln::Dims shape, kiln::DType dt, uint64_t seed) {
  kiln::manual_seed(seed);
  return kiln::randn(shape, kiln::DType::f32, kiln::Device::cuda(0)).to(dt);
}

int main() {
  using exec_compare::check;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({1000, 37}, dt, 1), y = input({1000, 37}, dt, 2);
    Tensor col = input({1000, 1}, dt, 3), row = input({1, 37}, dt, 4);
    Tensor strided = input({37, 1000}, dt, 5).transpose(0, 1);
    Tensor odd = input({1 << 20}, dt, 6).slice(0, 1, (1 << 20) - 3);
    check("sin_plus_cos", dt, [&] { return sin_plus_cos(x, y); });
    check("sin_plus_cos broadcast", dt, [&] { return sin_plus_cos(col, row); });
    check("sin_plus_cos strided", dt, [&] { return sin_plus_cos(strided, y); });
    check("sin_plus_cos unaligned", dt, [&] { return sin_plus_cos(odd, odd); });
    check("gelu_mix", dt, [&] { return gelu_mix(x, y, 1.5, 1); });
    check("gelu_mix broadcast", dt, [&] { return gelu_mix(col, row, 0.5, 2); });
  }
  Tensor x = input({4096}, kiln::DType::f32, 7);
  (void)sin_plus_cos(x, x);
  kiln::reset_stats();
  (void)sin_plus_cos(x, x);
  kiln::synchronize();
  std::printf("one fused kernel per call: %s\n",
              kiln::stats().kernel_launches == 1 ? "yes" : "no");
  // Tensors on two devices: the guard declines, the original body runs.
  Tensor cpu = kiln::arange(4096);
  kiln::reset_stats();
  try {
    (void)sin_plus_cos(x, cpu);
  } catch (const kiln::Error &) {
  }
  std::printf("mixed devices fall back: %s\n",
              kiln::stats().fallback_calls == 1 ? "yes" : "no");
  return exec_compare::summary();
}
