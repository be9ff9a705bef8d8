// Found by the fuzzer (seed 7, f64_0): t1 and t2 are two tensors in eager,
// both exp(x0), both live out of the region before the graph break; cse
// made them one node, so the region returned one tensor for both and the
// in-place `t3 /= 0.5` on t2's alias changed t1 too. The generated code
// now copies a returned value that a pass made one node with another
// returned value (or with an argument): cse still merges the computation.
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: CASE 0 STATS compiled=4 fallback=0 guard_failures=0
// CHECK: CASE 0 RESULT ok
// COMPILED: CASE 1 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 1 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] Tensor two_exps(const Tensor &x0) {
  Tensor t1 = x0;
  Tensor t2 = kiln::exp(t1);
  t1 = kiln::exp(t1);
  fuzz_opaque_log(t1);
  Tensor t3 = t2;
  t3 /= 0.5;
  return t1;
}

// Both outputs are sin(x): two tensors.
[[kiln::compile]] void two_outputs(const Tensor &x, Tensor &a, Tensor &b) {
  a = kiln::sin(x);
  b = kiln::sin(x);
}

static fuzz::Outputs case_two_exps(fuzz::Env &e) {
  Tensor x0 = e.input({kiln::Dims{}, kiln::Dims{3, 4}}, kiln::DType::f32, 0);
  Tensor r = two_exps(x0);
  return {r, x0};
}
static fuzz::Outputs case_two_outputs(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{5}, kiln::Dims{2, 3}}, kiln::DType::f32, 0);
  Tensor a = e.out(), b = e.out();
  two_outputs(x, a, b);
  a += 1.0; // must not show in b
  return {a, b};
}

static const fuzz::Case kCases[] = {{"two_exps", case_two_exps, 1},
                                    {"two_outputs", case_two_outputs, 2}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 2); }
