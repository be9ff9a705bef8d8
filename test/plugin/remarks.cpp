// -fplugin-arg-kiln-remarks: what was compiled (ops as written, kernels
// per call) and what was left eager and why. Without it, silence.
// RUN: %kiln_cxx -fsyntax-only %kiln_remarks %s 2>&1 | FileCheck %s
// RUN: %kiln_cxx -fsyntax-only %s 2>&1 | count 0
#include <kiln/kiln.h>

// CHECK: remarks.cpp:[[@LINE+1]]:32: remark: kiln: compiled 'f': 3 ops captured, fused into 1 kernel (f32, f16, bf16, f64; CUDA and CPU)
[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x, const kiln::Tensor &y) {
  return kiln::sin(x) * kiln::cos(y);
}

// backend=eager captures the graph and runs it with one eager op per node.
// CHECK: remarks.cpp:[[@LINE+1]]:49: remark: kiln: compiled 'g' with backend=eager: 1 op captured, run one by one with eager ops
[[kiln::compile("backend=eager")]] kiln::Tensor g(const kiln::Tensor &x) {
  return kiln::exp(x);
}

// Scalars, constants and named locals count; arguments do not.
// The scalar product is host work, once per call, before the launch.
// CHECK: remarks.cpp:[[@LINE+1]]:32: remark: kiln: compiled 'h': 4 ops captured, fused into 1 kernel ({{.*}}), 1 scalar op on the host
[[kiln::compile]] kiln::Tensor h(const kiln::Tensor &x, double a) {
  double twice = a * 2.0;
  kiln::Tensor y = x * twice;
  return kiln::relu(y) + 1;
}
