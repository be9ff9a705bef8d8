// mode=max-autotune on the CPU: one BLAS routine, nothing to time; the
// function compiles (its products still fused with their epilogues, CUDA
// graphs off on the CPU) and matches eager and a float64 reference.
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: rm -f %t.cache
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && env KILN_AUTOTUNE_CACHE=%t.cache %t | FileCheck %s
// RUN: not ls %t.cache
// CHECK-NOT: MISMATCH
// CHECK: timed 0, read from the cache 0
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

using kiln::Tensor;

[[kiln::compile("mode=max-autotune")]] Tensor mlp(const Tensor &x, const Tensor &w1,
                                                 const Tensor &b1, const Tensor &w2) {
  return kiln::linear(kiln::gelu(kiln::linear(x, w1, b1), "tanh"), w2) + x;
}

int main() {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  auto f64 = capture_compare::as_f64;
  kiln::set_gemm_autotune(true); // every product, eager ones too: no effect here
  uint64_t timed = 0, cached = 0;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::bf16}) {
    Tensor x = capture_compare::input({33, 96}, dt, 1),
           w1 = capture_compare::input({200, 96}, dt, 2) * 0.05,
           b1 = capture_compare::input({200}, dt, 3),
           w2 = capture_compare::input({96, 200}, dt, 4) * 0.05;
    check("mlp", dt, [&] { return V{mlp(x, w1, b1, w2)}; }, 1, 0, -1,
          capture_compare::eager_reference(
              [&] { return V{mlp(f64(x), f64(w1), f64(b1), f64(w2))}; }));
    timed += kiln::stats().gemm_autotuned;
    cached += kiln::stats().gemm_autotune_cached;
  }
  std::printf("timed %llu, read from the cache %llu\n", (unsigned long long)timed,
              (unsigned long long)cached);
  return capture_compare::summary();
}
