// Found by the fuzzer: a dropped argmax/amax over an empty dim was removed
// by dce, so the compiled call returned where eager raises. The same held
// for a dropped op whose shapes do not broadcast or whose dim is out of
// range. dce now keeps the dropped values' shape computations (checks) and
// the compiled code evaluates them as a guard: eager runs, and raises, for
// the inputs it raises on (input set 0 here); other inputs (set 1) take the
// compiled path. As torch.compile, whose tracing raises on dead code too.
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: env KILN_LOGS=guards %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// COMPILED: guard failed: 'd' (line [[@LINE+17]]), computed and dropped, raises in eager for these shapes
// COMPILED: CASE 0 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 0 RESULT ok
// COMPILED: guard failed: 'd' (line [[@LINE+18]]), computed and dropped, raises in eager for these shapes
// COMPILED: CASE 1 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 1 RESULT ok
// COMPILED: guard failed: 'd' (line [[@LINE+19]]), computed and dropped, raises in eager for these shapes
// COMPILED: CASE 2 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 2 RESULT ok
// COMPILED: guard failed: 'd' (line [[@LINE+20]]), computed and dropped, raises in eager for these shapes
// COMPILED: CASE 3 STATS compiled=1 fallback=1 guard_failures=1
// CHECK: CASE 3 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] Tensor dead_argmax(const Tensor &x) {
  Tensor d = kiln::argmax(kiln::exp(x), 0);
  return kiln::sin(x);
}
[[kiln::compile]] Tensor dead_add(const Tensor &x, const Tensor &y) {
  Tensor d = x + y;
  return kiln::sin(x);
}
[[kiln::compile]] Tensor dead_amax(const Tensor &x) {
  Tensor d = kiln::amax(x);
  return kiln::cos(x);
}
[[kiln::compile]] Tensor dead_sum_dim(const Tensor &x) {
  Tensor d = kiln::sum(x, 2);
  return kiln::cos(x);
}

static fuzz::Outputs case_argmax(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{0, 3}, kiln::Dims{2, 3}}, kiln::DType::f32);
  return {dead_argmax(x), x};
}
static fuzz::Outputs case_add(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{2, 3}, kiln::Dims{2, 3}}, kiln::DType::f32);
  Tensor y = e.input({kiln::Dims{4}, kiln::Dims{3}}, kiln::DType::f32);
  return {dead_add(x, y), x, y};
}
static fuzz::Outputs case_amax(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{0}, kiln::Dims{5}}, kiln::DType::f16);
  return {dead_amax(x), x};
}
static fuzz::Outputs case_sum_dim(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{2, 3}, kiln::Dims{2, 3, 4}}, kiln::DType::f32);
  return {dead_sum_dim(x), x};
}

static const fuzz::Case kCases[] = {{"dead_argmax", case_argmax, 1},
                                    {"dead_add", case_add, 2},
                                    {"dead_amax", case_amax, 3},
                                    {"dead_sum_dim", case_sum_dim, 4}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 4); }
