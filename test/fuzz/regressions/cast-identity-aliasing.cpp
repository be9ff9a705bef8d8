// Found by the fuzzer (seed 7, 10,000 functions: f87_10, f52_9, f147_24,
// f228_16). Tensor::to returns its object when the dtypes agree, so in the
// variant where a cast is the identity its result is the argument itself:
// an in-place update of the argument in a later region must show through it
// (the fast path used to hand out a copy), while a clone() of it is a new
// tensor (the fast path used to hand out the argument).
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: CASE 0 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 0 RESULT ok
// (Region 2 sees that t2 and t1 share storage and runs eagerly.)
// COMPILED: CASE 1 STATS compiled=2 fallback=2 guard_failures=2
// CHECK: CASE 1 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] Tensor clone_of_cast(const Tensor &x0) {
  Tensor t2 = x0.to(kiln::DType::f32);
  return t2.clone();
}

// t1 is x0 itself in the f16 variant: the update through t2 shows in it.
[[kiln::compile]] Tensor cast_then_update(const Tensor &x0, const Tensor &x1) {
  Tensor t1 = x0.to(kiln::DType::f16);
  Tensor t2 = x0;
  t2 -= 1.0;
  return t1 * x1;
}

static fuzz::Outputs case_clone(fuzz::Env &e) {
  Tensor x0 = e.input({kiln::Dims{1}, kiln::Dims{2}}, kiln::DType::f32, 0);
  return {clone_of_cast(x0), x0};
}
static fuzz::Outputs case_update(fuzz::Env &e) {
  Tensor x0 = e.input({kiln::Dims{2}, kiln::Dims{3}}, kiln::DType::f16, 0);
  Tensor x1 = e.input({kiln::Dims{2}, kiln::Dims{3}}, kiln::DType::f16, 1);
  return {cast_then_update(x0, x1), x0, x1};
}

static const fuzz::Case kCases[] = {{"clone_of_cast", case_clone, 1},
                                    {"cast_then_update", case_update, 2}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 2); }
