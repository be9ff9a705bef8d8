// Found by the fuzzer (seed 1, f6_26, once trunc_div joined the op table):
// eager stores tanh(t2) as bf16 and clamp, promoting to f32, widens the
// stored value; the kernel kept tanh(t2) in f32, and where clamp picked
// that bound the f32 result showed the bits bf16 had dropped. An f16/bf16
// intermediate read by an op of another dtype (a promotion, a cast to
// f32) is now read rounded, as are the operands of trunc_div (a discrete
// result, like a comparison's). Chains within one 16-bit dtype keep f32
// intermediates, as TorchInductor does.
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: CASE 0 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 0 RESULT ok
// COMPILED: CASE 1 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 1 RESULT ok
// COMPILED: CASE 2 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 2 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] Tensor clamp_by_bf16(const Tensor &x0, const Tensor &x1) {
  Tensor t3 = kiln::tanh(x0.to(kiln::DType::bf16));
  return kiln::clamp(x1, -1, t3); // f32: promotes the bf16 bound
}
[[kiln::compile]] Tensor widen_by_cast(const Tensor &x) {
  Tensor h = kiln::exp(x.to(kiln::DType::f16));
  return h.to(kiln::DType::f32) * 3.0;
}
// trunc_div of 16-bit intermediates: the quotient of the rounded values.
[[kiln::compile]] Tensor trunc_of_bf16(const Tensor &x, const Tensor &y) {
  Tensor a = x.to(kiln::DType::bf16) * 7.0, b = y.to(kiln::DType::bf16) + 3.0;
  return kiln::trunc_div(a, b);
}

static fuzz::Outputs case_clamp(fuzz::Env &e) {
  Tensor x0 = e.input({kiln::Dims{64}, kiln::Dims{8, 8}}, kiln::DType::f32, 0);
  Tensor x1 = e.input({kiln::Dims{1}, kiln::Dims{1}}, kiln::DType::f32, 0);
  return {clamp_by_bf16(x0, x1 * 0.0 + 2.0), x0, x1}; // picks the bound
}
static fuzz::Outputs case_cast(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{256}, kiln::Dims{16, 16}}, kiln::DType::f32, 0);
  return {widen_by_cast(x), x};
}
static fuzz::Outputs case_trunc(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{256}, kiln::Dims{16, 16}}, kiln::DType::f32, 0);
  Tensor y = e.input({kiln::Dims{256}, kiln::Dims{16, 16}}, kiln::DType::f32, 0);
  return {trunc_of_bf16(x, y), x, y};
}

static const fuzz::Case kCases[] = {{"clamp", case_clamp, 1},
                                    {"cast", case_cast, 2},
                                    {"trunc", case_trunc, 3}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 3); }
