// Kernels built for a GPU other than the one present (sm_75 SASS, no PTX,
// run on an Ampere or Hopper GPU): the guard that the device can run the
// file's kernels fails, the original body runs and gives eager's answer,
// and KILN_LOGS=guards says why. CPU tensors still take the compiled path.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -fplugin-arg-kiln-arch=sm_75 -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && env KILN_LOGS=guards %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: gelu_like: guard failed: its CUDA kernels cannot run on cuda:0 ({{.*}}, sm_{{[0-9]+}}): {{.*}}; rebuild with -fplugin-arg-kiln-arch= including it
// CHECK: cuda: max diff 0, compiled_calls 0, guard_failures 2
// COMPILED: cpu: max diff {{.*}}, compiled_calls 1
// FORCED: cpu: max diff {{.*}}, compiled_calls 0
#include <kiln/kiln.h>

#include <cstdio>

using kiln::Tensor;

[[kiln::compile]] Tensor gelu_like(const Tensor &x) {
  return 0.5 * x * (1.0 + kiln::tanh(0.79788456 * (x + 0.044715 * x * x * x)));
}

static Tensor eager(const Tensor &x) {
  kiln::set_compiled_enabled(false);
  Tensor r = gelu_like(x);
  kiln::set_compiled_enabled(true);
  return r;
}

int main() {
  Tensor x = kiln::randn({4097}, kiln::f32, kiln::Device::cuda(0));
  kiln::reset_stats();
  Tensor a = gelu_like(x);
  Tensor b = gelu_like(x); // the answer is cached: no second load
  kiln::Stats st = kiln::stats();
  std::printf("cuda: max diff %g, compiled_calls %llu, guard_failures %llu\n",
              kiln::max_abs_diff(a, eager(x)) + kiln::max_abs_diff(b, eager(x)),
              (unsigned long long)st.compiled_calls,
              (unsigned long long)st.guard_failures);
  Tensor xc = x.to(kiln::Device::cpu());
  kiln::reset_stats();
  Tensor c = gelu_like(xc);
  std::printf("cpu: max diff %g, compiled_calls %llu\n",
              kiln::max_abs_diff(c, eager(xc)),
              (unsigned long long)kiln::stats().compiled_calls);
}
