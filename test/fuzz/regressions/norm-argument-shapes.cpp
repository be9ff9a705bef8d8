// Found by the fuzzer: layer_norm and rms_norm raise on a weight or bias
// not of shape [x.size(-1)] (and on a 0-d input), but their decomposition
// broadcasts, so the compiled call returned where eager raises. decompose
// now keeps the norm's argument check (rt::norm_shapes) for the guards when
// the shapes are not known valid at compile time; inputs eager raises on
// (set 0) run eagerly and raise, the others (set 1) take the compiled path.
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: env KILN_LOGS=guards %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: guard failed: 'y' (line [[@LINE+14]]): layer_norm's input, weight or bias raises in eager for these shapes
// COMPILED: CASE 0 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 0 RESULT ok
// COMPILED: guard failed: 'y' (line [[@LINE+15]]): rms_norm's input, weight or bias raises in eager for these shapes
// COMPILED: CASE 1 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 1 RESULT ok
// COMPILED: guard failed: 'y' (line [[@LINE+16]]): layer_norm's input, weight or bias raises in eager for these shapes
// COMPILED: CASE 2 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 2 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] Tensor ln(const Tensor &x, const Tensor &w, const Tensor &b) {
  Tensor y = kiln::layer_norm(x, w, b, 1e-5);
  return y;
}
[[kiln::compile]] Tensor rms(const Tensor &x, const Tensor &w) {
  Tensor y = kiln::rms_norm(x, w, 1e-5);
  return y;
}
[[kiln::compile]] Tensor ln_scaled(const Tensor &x, const Tensor &w, const Tensor &b) {
  Tensor y = kiln::layer_norm(x * 2, w, b, 1e-5);
  return y;
}

static fuzz::Outputs case_ln(fuzz::Env &e) { // a weight of size 1
  Tensor x = e.input({kiln::Dims{2, 4}, kiln::Dims{3, 5}}, kiln::DType::f32);
  Tensor w = e.input({kiln::Dims{1}, kiln::Dims{5}}, kiln::DType::f32);
  Tensor b = e.input({kiln::Dims{4}, kiln::Dims{5}}, kiln::DType::f32);
  return {ln(x, w, b), x, w, b};
}
static fuzz::Outputs case_rms(fuzz::Env &e) { // a weight of the input's shape
  Tensor x = e.input({kiln::Dims{2, 4}, kiln::Dims{2, 4}}, kiln::DType::bf16);
  Tensor w = e.input({kiln::Dims{2, 4}, kiln::Dims{4}}, kiln::DType::bf16);
  return {rms(x, w), x, w};
}
static fuzz::Outputs case_ln_scaled(fuzz::Env &e) { // a 0-d input
  Tensor x = e.input({kiln::Dims{}, kiln::Dims{3, 6}}, kiln::DType::f32);
  Tensor w = e.input({kiln::Dims{1}, kiln::Dims{6}}, kiln::DType::f32);
  Tensor b = e.input({kiln::Dims{1}, kiln::Dims{6}}, kiln::DType::f32);
  return {ln_scaled(x, w, b), x, w, b};
}

static const fuzz::Case kCases[] = {{"ln", case_ln, 1},
                                    {"rms", case_rms, 2},
                                    {"ln_scaled", case_ln_scaled, 3}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 3); }
