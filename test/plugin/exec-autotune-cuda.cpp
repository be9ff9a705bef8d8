// mode=max-autotune-no-cudagraphs on a CUDA GPU: a compiled function's
// GEMMs are autotuned at their first call (cuBLASLt's proposals timed on
// the call's operands, into a scratch output), the choices written to the
// on-disk cache; a second process reads them instead of timing. Results
// match eager and a float64 reference either way, the residual read in
// place as the GEMM's C included (timing must not add it twice). Eager
// products autotune under kiln::set_gemm_autotune(true).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t
// RUN: rm -f %t.cache
// RUN: env KILN_AUTOTUNE_CACHE=%t.cache %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,FIRST-%compiled
// RUN: env KILN_AUTOTUNE_CACHE=%t.cache %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,AGAIN-%compiled
// RUN: FileCheck %s --check-prefix=FILE < %t.cache
// CHECK-NOT: MISMATCH
// FIRST-COMPILED: compiled: timed yes, read from the cache no
// AGAIN-COMPILED: compiled: timed no, read from the cache yes
// FIRST-FORCED: compiled: timed no, read from the cache no
// AGAIN-FORCED: compiled: timed no, read from the cache no
// FIRST-COMPILED: eager: timed yes, read from the cache no
// FIRST-FORCED: eager: timed yes, read from the cache no
// AGAIN-COMPILED: eager: timed no, read from the cache yes
// AGAIN-FORCED: eager: timed no, read from the cache yes
// CHECK: {{[0-9]+}} cases, 0 mismatches
// FILE: {{^[^ ]+ sm[0-9]+ lt[0-9]+ [-0-9,]+ [0-9]+$}}
#include "capture_compare.h"

using kiln::Tensor;

// A transformer MLP: two GEMMs (the first with bias and tanh-GELU in
// cuBLASLt's epilogue, the second adding the residual as beta * C).
[[kiln::compile("mode=max-autotune-no-cudagraphs")]] Tensor
mlp(const Tensor &x, const Tensor &w1, const Tensor &b1, const Tensor &w2) {
  return kiln::linear(kiln::gelu(kiln::linear(x, w1, b1), "tanh"), w2) + x;
}

int main() {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  const kiln::Device dev = kiln::Device::cuda(0);
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto cpu = capture_compare::on_cpu;
  auto f64 = capture_compare::as_f64;
  uint64_t timed = 0, cached = 0;
  for (kiln::DType dt : {kiln::DType::bf16, kiln::DType::f32}) {
    // Odd sizes too: the proposals differ by alignment.
    for (kiln::Dims s : {kiln::Dims{256, 512, 1024}, kiln::Dims{33, 96, 200}}) {
      Tensor x = input({s[0], s[1]}, dt, 1), w1 = input({s[2], s[1]}, dt, 2) * 0.05,
             b1 = input({s[2]}, dt, 3), w2 = input({s[1], s[2]}, dt, 4) * 0.05;
      check("mlp", dt, [&] { return V{mlp(x, w1, b1, w2)}; }, 1, 0, -1,
            capture_compare::eager_reference(
                [&] { return V{cpu(mlp(f64(x), f64(w1), f64(b1), f64(w2)))}; }));
      timed += kiln::stats().gemm_autotuned;
      cached += kiln::stats().gemm_autotune_cached;
      // A second call reuses the process's choice: nothing timed or read.
      kiln::reset_stats();
      (void)mlp(x, w1, b1, w2);
      if (kiln::stats().gemm_autotuned + kiln::stats().gemm_autotune_cached) {
        std::printf("MISMATCH: a second call autotuned again\n");
        ++capture_compare::g_mismatches;
      }
    }
  }
  std::printf("compiled: timed %s, read from the cache %s\n", timed ? "yes" : "no",
              cached ? "yes" : "no");
  // Eager products, with autotuning switched on for every product.
  kiln::set_gemm_autotune(true);
  kiln::reset_stats();
  Tensor a = input({384, 640}, kiln::DType::bf16, 5), b = input({640, 320}, kiln::DType::bf16, 6);
  Tensor got = kiln::matmul(a, b).to(kiln::Device::cpu()).to(kiln::f64);
  Tensor want = kiln::matmul(f64(cpu(a)), f64(cpu(b)));
  const double diff = kiln::max_abs_diff(got, want);
  std::printf("eager: timed %s, read from the cache %s\n",
              kiln::stats().gemm_autotuned ? "yes" : "no",
              kiln::stats().gemm_autotune_cached ? "yes" : "no");
  if (!(diff < 0.25)) {
    std::printf("MISMATCH eager autotuned matmul: max diff %g\n", diff);
    ++capture_compare::g_mismatches;
  }
  kiln::set_gemm_autotune(false);
  return capture_compare::summary();
}
