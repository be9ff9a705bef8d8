// Found by the fuzzer (seed 7, f267_21 and f288_20): contiguous() returns
// its object when that is contiguous already, as PyTorch's does, so the
// result shares storage with its source.
//  - in_place_seen: t2 = t1.contiguous() of a tensor the region made is t1
//    itself, so `t1 *= 0.5` changes t2 too. The capture gave t2 storage of
//    its own and the compiled path compared erf(x) with x, not x * 0.5.
//  - returned: `return x.contiguous()` of an input hands out x itself
//    (two references to its storage); the compiled path returned a new
//    tensor. It now hands out `x.contiguous()`, which decides at run time.
//  - updated_then_returned: the same after x was updated in place.
//  - copy_not_updated: an in-place update of a contiguous() of an input,
//    which is that input or a copy as its layout decides, stayed eager; it
//    is now specialised on `x.is_contiguous()` (the update is x's, or a
//    copy's), and run both ways (copy_updated_transposed).
// RUN: %kiln_cxx -I%S/../Inputs -fplugin-arg-kiln-cuda=off -Rpass=kiln -c %s -o %t.o 2>&1 | FileCheck --check-prefix=REMARK %s
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t
// RUN: %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// REMARK-COUNT-2: remark: kiln: compiled 'copy_not_updated (region 1, specialisation {{[12]}})'
// COMPILED: CASE 0 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 0 RESULT ok
// COMPILED: CASE 1 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 1 RESULT ok
// COMPILED: CASE 2 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 2 RESULT ok
// COMPILED: CASE 3 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 3 RESULT ok
// COMPILED: CASE 4 STATS compiled=2 fallback=0 guard_failures=0
// CHECK: CASE 4 RESULT ok
#include "fuzz_harness.h"

using kiln::Tensor;

[[kiln::compile]] std::pair<Tensor, Tensor> in_place_seen(const Tensor &x) {
  Tensor t1 = kiln::where(x != -1.0, x, x);
  Tensor t2 = t1.contiguous();
  t1 *= 0.5;
  t1 = kiln::erf(x);
  return {t1, t1 >= t2};
}

[[kiln::compile]] std::pair<Tensor, Tensor> returned(const Tensor &x) {
  return {x.contiguous(), kiln::gelu(x)};
}

[[kiln::compile]] Tensor updated_then_returned(Tensor &x) {
  x -= 0.5;
  x *= x;
  return x.contiguous();
}

[[kiln::compile]] Tensor copy_not_updated(const Tensor &x) {
  Tensor y = x.contiguous();
  Tensor z = kiln::exp(y);
  y += 1.0;
  return z + y;
}

static fuzz::Outputs case_in_place_seen(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{33}, kiln::Dims{3}}, kiln::DType::f16, 0);
  auto [a, b] = in_place_seen(x);
  return {a, b, x};
}
static fuzz::Outputs case_returned(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{4, 33}, kiln::Dims{16}}, kiln::DType::f32, 0);
  auto [a, b] = returned(x);
  return {a, b, x};
}
static fuzz::Outputs case_updated_then_returned(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{131}, kiln::Dims{16}}, kiln::DType::f32, 1);
  Tensor r = updated_then_returned(x);
  return {r, x};
}
static fuzz::Outputs case_copy_not_updated(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{5, 7}, kiln::Dims{3}}, kiln::DType::f32, 0);
  Tensor r = copy_not_updated(x);
  return {r, x};
}
static fuzz::Outputs case_copy_updated_transposed(fuzz::Env &e) {
  Tensor x = e.input({kiln::Dims{5, 7}, kiln::Dims{3, 2}}, kiln::DType::f32, 0)
                 .transpose(0, 1);
  Tensor r = copy_not_updated(x);
  return {r, x};
}

static const fuzz::Case kCases[] = {
    {"in_place_seen", case_in_place_seen, 21},
    {"returned", case_returned, 22},
    {"updated_then_returned", case_updated_then_returned, 23},
    {"copy_not_updated", case_copy_not_updated, 24},
    {"copy_updated_transposed", case_copy_updated_transposed, 25}};
int main(int argc, char **argv) { return fuzz::main(argc, argv, kCases, 5); }
