// Found by the fuzzer (seed 7, fuzz_33, fuzz_56, fuzz_88): a norm whose
// input is another norm's result (directly or through pointwise ops) with
// argument shapes not known valid at compile time. The outer norm's
// argument check reads the inner norm's shape, which the generated guard
// code never declared: the generated host code did not compile. A norm's
// check now also names its result's shape (its input's).
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: env KILN_LOGS=guards %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: guard failed: 'y' (line [[@LINE+14]]): rms_norm's input, weight or bias raises in eager for these shapes
// COMPILED: CASE 0 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 0 RESULT ok
// COMPILED: guard failed: a value (line [[@LINE+15]]): layer_norm's input, weight or bias raises in eager for these shapes
// COMPILED: CASE 1 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 1 RESULT ok
// COMPILED: guard failed: 'unused' (line [[@LINE+17]]): layer_norm's input, weight or bias raises in eager for these shapes
// COMPILED: CASE 2 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 2 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] Tensor rms2(const Tensor &x, const Tensor &w, const Tensor &v) {
  Tensor y = kiln::rms_norm(kiln::rms_norm(x, w, 1e-5), v, 1e-5);
  return y;
}
[[kiln::compile]] Tensor ln_exp_ln(const Tensor &x, const Tensor &w, const Tensor &b) {
  Tensor y = kiln::layer_norm(kiln::exp(kiln::layer_norm(x, w, b, 1e-5)), w, b, 1e-5);
  return y;
}
[[kiln::compile]] Tensor dropped(const Tensor &x, const Tensor &w, const Tensor &b) {
  Tensor y = x * 2;
  Tensor unused = kiln::layer_norm(kiln::sin(kiln::rms_norm(x, w, 1e-5)), w, b, 1e-5);
  return y;
}

static fuzz::Outputs case_rms2(fuzz::Env &e) { // the outer weight of size 1
  Tensor x = e.input({kiln::Dims{2, 4}, kiln::Dims{3, 5}}, kiln::DType::f32);
  Tensor w = e.input({kiln::Dims{4}, kiln::Dims{5}}, kiln::DType::f32);
  Tensor v = e.input({kiln::Dims{1}, kiln::Dims{5}}, kiln::DType::f32);
  return {rms2(x, w, v), x, w, v};
}
static fuzz::Outputs case_ln_exp_ln(fuzz::Env &e) { // a bias of size 3
  Tensor x = e.input({kiln::Dims{2, 4}, kiln::Dims{2, 6}}, kiln::DType::f32);
  Tensor w = e.input({kiln::Dims{4}, kiln::Dims{6}}, kiln::DType::f32);
  Tensor b = e.input({kiln::Dims{3}, kiln::Dims{6}}, kiln::DType::f32);
  return {ln_exp_ln(x, w, b), x, w, b};
}
static fuzz::Outputs case_dropped(fuzz::Env &e) { // a bias of shape [2, 4]
  Tensor x = e.input({kiln::Dims{2, 4}, kiln::Dims{3, 4}}, kiln::DType::f32);
  Tensor w = e.input({kiln::Dims{4}, kiln::Dims{4}}, kiln::DType::f32);
  Tensor b = e.input({kiln::Dims{2, 4}, kiln::Dims{4}}, kiln::DType::f32);
  return {dropped(x, w, b), x, w, b};
}

static const fuzz::Case kCases[] = {{"rms2", case_rms2, 1},
                                    {"ln_exp_ln", case_ln_exp_ln, 2},
                                    {"dropped", case_dropped, 3}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 3); }
