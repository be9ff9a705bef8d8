// The cases of test/plugin/capture/exec-dtype-profile*.cpp: functions with
// no [[kiln::dtype]], called with tensor arguments of mixed dtypes,
// integers and bools. Built without a dtype profile (`phase` 1) such calls
// fail the dtype guard and run the eager body, and a run with
// KILN_DTYPE_PROFILE set records each combination. Built again with
// -fplugin-arg-kiln-dtype-profile (`phase` 2), each combination recorded
// is a variant of its own: the call runs its fused kernel. Every call is
// compared with eager (and, where given, a float64 reference) in both.
#pragma once

#include "capture_compare.h"

using kiln::Tensor;

// Integer indices scaling a float activation (promotion to x's dtype).
COMPILE Tensor scale_idx(const Tensor &x, const Tensor &idx) {
  return x * idx + 1;
}

// Integers only: wrapping arithmetic and truncating division.
COMPILE Tensor int_only(const Tensor &a, const Tensor &b) {
  return (a * 3 + b) - kiln::trunc_div(a, kiln::abs(b) + 1);
}

// A bool tensor as a factor (not a where condition: that one is b8 in
// every variant already).
COMPILE Tensor mask_mul(const Tensor &x, const Tensor &keep) {
  return kiln::exp(x) * keep;
}

// Mixed-precision RMS norm with no annotation: a 16-bit activation and an
// f32 weight.
COMPILE Tensor rms_mixed(const Tensor &x, const Tensor &w) {
  Tensor xf = x.to(kiln::f32);
  return xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + 1e-6) * w;
}

// A row op over a product with integer counts.
COMPILE Tensor softmax_counts(const Tensor &x, const Tensor &counts) {
  return kiln::softmax(x * counts, -1);
}

// An f32 master weight updated in place by a 16-bit gradient.
COMPILE void sgd_master(Tensor &p, const Tensor &grad, double lr) {
  p -= lr * grad;
}

// In-place updates whose result has another dtype than the updated
// tensor in the recorded combination: an integer count by a float (eager
// raises: that variant is not compiled, a remark says why, and such calls
// keep running the eager body and raise) and a bf16 accumulator by an f32
// value (eager casts, and so does the variant, where the update happens:
// code after it reads the rounded value).
COMPILE void count_up(Tensor &c, const Tensor &x) { c += x; }
COMPILE void accumulate(Tensor &acc, const Tensor &v) { acc += v * 2; }
COMPILE Tensor accumulate_read(Tensor &acc, const Tensor &v) {
  acc += v * 2;
  return acc * 3;
}

inline Tensor int_tensor(kiln::Dims shape, kiln::DType dt, uint64_t seed,
                         kiln::Device dev) {
  kiln::manual_seed(seed);
  return (kiln::randn(shape, kiln::DType::f32) * 5).to(kiln::i64).to(dt).to(dev);
}

inline int run_dtype_profile(int phase, kiln::Device dev) {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  // Phase 1: a mixed combination falls back; phase 2: it is compiled.
  const uint64_t c = phase == 2 ? 1 : 0, f = 1 - c;
  auto k = [&](int n) { return phase == 2 ? n : -1; };
  for (kiln::DType dt : {kiln::f32, kiln::bf16}) {
    Tensor x = input({7, 96}, dt, 1, dev);
    for (kiln::DType it : {kiln::i64, kiln::i32}) {
      Tensor idx = int_tensor({96}, it, 2, dev);
      check(std::string("scale_idx/") + kiln::dtype_name(dt) + "," +
                kiln::dtype_name(it),
            dt, [&] { return V{scale_idx(x, idx)}; }, c, f, k(1));
    }
    Tensor keep = input({96}, kiln::f32, 3, dev) > 0;
    check(std::string("mask_mul/") + kiln::dtype_name(dt), dt,
          [&] { return V{mask_mul(x, keep)}; }, c, f, k(1));
    Tensor counts = int_tensor({7, 1}, kiln::i64, 4, dev);
    check(std::string("softmax_counts/") + kiln::dtype_name(dt), dt,
          [&] { return V{softmax_counts(x, counts)}; }, c, f, k(1));
    // One dtype throughout: compiled in both phases, recorded in neither.
    check(std::string("scale_idx/one dtype ") + kiln::dtype_name(dt), dt,
          [&] { return V{scale_idx(x, input({96}, dt, 5, dev))}; }, 1, 0);
  }
  for (kiln::DType it : {kiln::i32, kiln::i64}) {
    Tensor a = int_tensor({9, 40}, it, 6, dev), b = int_tensor({40}, it, 7, dev);
    check(std::string("int_only/") + kiln::dtype_name(it), it,
          [&] { return V{int_only(a, b)}; }, c, f, k(1));
  }
  Tensor x16 = input({33, 4099}, kiln::bf16, 8, dev);
  Tensor w = input({4099}, kiln::f32, 9, dev);
  Tensor xf = x16.to(kiln::f64);
  Tensor ref = xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + 1e-6) *
               w.to(kiln::f64);
  check("rms_mixed/bf16,f32", kiln::bf16,
        [&] { return V{rms_mixed(x16, w)}; }, c, f, k(1), {ref});
  Tensor p0 = input({96}, kiln::f32, 10, dev), g = input({96}, kiln::bf16, 11, dev);
  check("sgd_master/f32,bf16", kiln::f32, [&] {
    Tensor p = p0.clone();
    sgd_master(p, g, 0.1);
    return V{p};
  }, c, f, k(2));
  Tensor c0 = int_tensor({96}, kiln::i64, 12, dev);
  capture_compare::expect_raises("count_up/i64,f32 raises as eager does", [&] {
    Tensor c = c0.clone();
    count_up(c, input({96}, kiln::f32, 15, dev));
    return c;
  });
  Tensor acc0 = input({96}, kiln::bf16, 13, dev), v = input({96}, kiln::f32, 14, dev);
  Tensor acc_ref = acc0.to(kiln::f64) + v.to(kiln::f64) * 2;
  check("accumulate/bf16,f32 (eager: a cast)", kiln::bf16, [&] {
    Tensor acc = acc0.clone();
    accumulate(acc, v);
    return V{acc};
  }, c, f, k(2), {acc_ref});
  check("accumulate_read/bf16,f32", kiln::bf16, [&] {
    Tensor acc = acc0.clone();
    Tensor r = accumulate_read(acc, v);
    return V{acc, r};
  }, c, f, k(2));
  return capture_compare::summary();
}
