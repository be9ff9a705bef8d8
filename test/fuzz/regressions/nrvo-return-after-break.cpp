// Found by the fuzzer (seed 115, f115_8; crashed in ~Storage under ASan, a
// segfault without): the last region reassigns a local declared before it
// and returns it by name. Sema had made `t1` the named return value: built
// in the caller's return slot. The fast path returned another tensor into
// that slot, overwriting t1 without destroying it, then t1's cleanup
// destroyed what was returned. The rewrite now gives every local its own
// storage (one Tensor move on return).
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: CASE 0 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 0 RESULT ok
// COMPILED: CASE 1 STATS compiled=4 fallback=0 guard_failures=0
// CHECK: CASE 1 RESULT ok
// COMPILED: CASE 2 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 2 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

// As reduced.
[[kiln::compile]] Tensor f115_8(const Tensor &x0, const Tensor &x1) {
  Tensor t1 = fuzz_opaque_scale(x1);
  t1 = kiln::amin(x0);
  return t1;
}

// The shape the issue gives: declared, a break, reassigned, returned.
[[kiln::compile]] Tensor after_break(const Tensor &x, double s) {
  Tensor t = kiln::sin(x);
  fuzz_opaque_log(t);
  t = kiln::cos(t) * s;
  return t;
}

// Returned from inside a specialisation.
[[kiln::compile]] Tensor in_branch(const Tensor &x, bool b) {
  Tensor t = fuzz_opaque_scale(x);
  if (b)
    t = kiln::exp(x);
  else
    t = kiln::tanh(x) + 1;
  return t;
}

static fuzz::Outputs case_f115_8(fuzz::Env &e) {
  Tensor x0 = e.input({kiln::Dims{}, kiln::Dims{}}, kiln::DType::f32, 0);
  Tensor x1 = e.input({kiln::Dims{}, kiln::Dims{}}, kiln::DType::f32, 0);
  Tensor r = f115_8(x0, x1);
  return {r, x0, x1};
}
static fuzz::Outputs case_after_break(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{3, 4}, kiln::Dims{5, 1}}, kiln::DType::f32, 0);
  Tensor r = after_break(x, e.set() ? 0.5 : 2.0);
  return {r, x};
}
static fuzz::Outputs case_in_branch(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{8}, kiln::Dims{3}}, kiln::DType::f16, 0);
  Tensor r = in_branch(x, e.set() == 0);
  return {r, x};
}

static const fuzz::Case kCases[] = {
    {"f115_8", case_f115_8, 115000008ull},
    {"after_break", case_after_break, 5},
    {"in_branch", case_in_branch, 6},
};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 3); }
