// CUDA out of memory in the middle of a compiled call (its first kernel's
// output allocated, the next one's not): a kiln::Error saying so, as eager
// raises; nothing leaked (the bytes held by tensors are as before); the
// next call, with room, compiled and right.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK: compiled: kiln::Error: CUDA out of memory
// CHECK: leaked bytes: 0
// CHECK: eager: kiln::Error: CUDA out of memory
// CHECK: leaked bytes: 0
// CHECK: with room: matches eager
// COMPILED: compiled=1
// CHECK: leaked bytes: 0
#include <kiln/kiln.h>

#include <cstdio>
#include <cstring>
#include <tuple>

using kiln::Tensor;

[[kiln::compile]] std::tuple<Tensor, Tensor> two_kernels(const Tensor &x) {
  Tensor s = kiln::sum(x, -1, true); // a reduction kernel
  Tensor y = kiln::sin(x) * s;       // then a pointwise one
  return {s, y};
}

static void attempt(const char *label, const Tensor &x, size_t before) {
  try {
    auto r = two_kernels(x);
    std::printf("%s: returned\n", label);
  } catch (const kiln::Error &e) {
    const char *oom = std::strstr(e.what(), "CUDA out of memory");
    std::printf("%s: kiln::Error: %s\n", label, oom ? oom : e.what());
  }
  kiln::synchronize();
  std::printf("leaked bytes: %lld\n",
              (long long)kiln::cuda_memory_allocated() - (long long)before);
}

int main() {
  Tensor x = kiln::randn({4096, 4096}).to(kiln::Device::cuda()); // 64 MiB
  size_t before = kiln::cuda_memory_allocated();
  // Room for the row sums, not for the 64 MiB product.
  kiln::set_cuda_memory_limit(before + (16 << 20));
  attempt("compiled", x, before);
  kiln::set_compiled_enabled(false);
  attempt("eager", x, before);
  kiln::set_compiled_enabled(true);
  kiln::set_cuda_memory_limit(0);
  kiln::reset_stats();
  {
    auto [s, y] = two_kernels(x);
    kiln::Stats st = kiln::stats();
    kiln::set_compiled_enabled(false);
    auto [es, ey] = two_kernels(x);
    kiln::set_compiled_enabled(true);
    double d = kiln::max_abs_diff(y, ey) + kiln::max_abs_diff(s, es);
    std::printf("with room: %s eager\n", d < 1e-3 ? "matches" : "differs from");
    std::printf("compiled=%llu\n", (unsigned long long)st.compiled_calls);
  }
  kiln::synchronize();
  std::printf("leaked bytes: %lld\n",
              (long long)kiln::cuda_memory_allocated() - (long long)before);
  return 0;
}
