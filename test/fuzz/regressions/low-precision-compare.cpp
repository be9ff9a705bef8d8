// Found by the fuzzer (seed 7, f89_11, f53_12): eager stores t1 + 1 as
// bf16, so for small t1 it is exactly 1; the kernel kept t1 + 1 in f32 and
// `== 1` came out false. Comparisons (and argmax) now read an f16/bf16
// intermediate rounded to its dtype, as eager reads it; other ops keep f32
// intermediates, as TorchInductor does.
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// (equals_one is two regions: the in-place update of a to() result stays
// out of the first, as it may be its source in another variant.)
// COMPILED: CASE 0 STATS compiled=4 fallback=0 guard_failures=0
// CHECK: CASE 0 RESULT ok
// COMPILED: CASE 1 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 1 RESULT ok
// COMPILED: CASE 2 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 2 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

// The inputs are cast inside: the float64 run keeps explicit casts, so it
// sees the eager values (the f16/bf16 ones) and judges the compiled ones.
[[kiln::compile]] void equals_one(const Tensor &x, Tensor &o) {
  Tensor t1 = x.to(kiln::DType::bf16);
  t1 += 1.0;
  o = (t1 == 1);
}
[[kiln::compile]] Tensor less(const Tensor &x, const Tensor &y) {
  Tensor a = x.to(kiln::DType::f16), b = y.to(kiln::DType::f16);
  return (a + 1.0) < (b + 1.0);
}
// Values that tie once rounded: argmax picks the first, as eager does.
[[kiln::compile]] Tensor first_max(const Tensor &x) {
  Tensor a = x.to(kiln::DType::bf16);
  return kiln::argmax(a + 1.0, -1);
}

static fuzz::Outputs case_equals_one(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{64}, kiln::Dims{8, 8}}, kiln::DType::f32, 0);
  Tensor o = e.out();
  equals_one(x * 0.01, o); // many under bf16's half ulp of 1
  return {o, x};
}
static fuzz::Outputs case_less(fuzz::Env &e) {
  Tensor a = e.input({kiln::Dims{256}, kiln::Dims{16, 16}}, kiln::DType::f32, 0);
  Tensor b = e.input({kiln::Dims{256}, kiln::Dims{16, 16}}, kiln::DType::f32, 0);
  return {less(a * 0.001, b * 0.001), a, b}; // ties in f16, mostly
}
static fuzz::Outputs case_first_max(fuzz::Env &e) {
  Tensor a = e.input({kiln::Dims{4, 300}, kiln::Dims{2, 1000}}, kiln::DType::f32, 0);
  return {first_max(a * 0.001), a}; // ties in bf16, mostly
}

static const fuzz::Case kCases[] = {{"equals_one", case_equals_one, 1},
                                    {"less", case_less, 2},
                                    {"first_max", case_first_max, 3}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 3); }
