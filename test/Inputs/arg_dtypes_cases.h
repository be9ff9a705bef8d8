// The cases of test/plugin/capture/exec-arg-dtypes*.cpp: tensor arguments
// whose dtype differs from the others' ([[kiln::dtype]] on the parameter):
// an f32 weight of a 16-bit activation, integer labels and ids, a bool
// mask, arguments all pinned. Each is compiled against eager on one device
// for every dtype of the unpinned arguments and every pinned dtype, asserts
// its fast path ran as one kernel, and a dtype combination compiled for
// none falls back (the right answer, from the eager body).
#pragma once

#include "capture_compare.h"

#include <cstring>

using kiln::Tensor;

// Mixed-precision RMS norm: a 16-bit activation, its f32 statistics and an
// f32 weight; the result is f32 (promotion), as eager's.
COMPILE Tensor rms_f32_weight(const Tensor &x,
                              [[kiln::dtype("f32")]] const Tensor &w,
                              double eps) {
  Tensor xf = x.to(kiln::f32);
  return xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + eps) * w;
}

// Integer labels of either width: a comparison, and promotion to x's dtype.
COMPILE Tensor by_label(const Tensor &x,
                        [[kiln::dtype("i64", "i32")]] const Tensor &labels) {
  return kiln::where(labels > 0, x * 2.0, x) + labels;
}

// Only integer arguments: integer arithmetic (wrapping, truncating
// division) and an integer result; true division gives f32.
COMPILE Tensor int_math([[kiln::dtype("i64")]] const Tensor &ids,
                        [[kiln::dtype("i64", "i32")]] const Tensor &offs) {
  return (ids * 3 + offs) - kiln::trunc_div(ids, kiln::abs(offs) + 1);
}
COMPILE Tensor int_ratio([[kiln::dtype("i32")]] const Tensor &a,
                         [[kiln::dtype("i32")]] const Tensor &b) {
  return a / (kiln::abs(b) + 1) + (a > b);
}

// A bool mask: multiplied (b8 promotes to x's dtype) and as a condition.
COMPILE Tensor masked(const Tensor &x, [[kiln::dtype("b8")]] const Tensor &keep) {
  return x * keep + kiln::where(keep, kiln::exp(x), x * 0.5);
}

// A row reduction with an integer operand.
COMPILE Tensor weighted_rows(const Tensor &x,
                             [[kiln::dtype("i64")]] const Tensor &counts) {
  return kiln::softmax(x * counts, -1);
}

// to(w.dtype()) of an activation is w's dtype, not x's (x is itself only
// where the variant makes them equal).
COMPILE Tensor to_weight_dtype(const Tensor &x,
                               [[kiln::dtype("f32")]] const Tensor &w) {
  return x.to(w.dtype()) * w + x.to(w.dtype());
}

// An in-place update of an integer tensor by a float: eager raises (the
// result is not cast back to an integer), and so does the compiled call.
COMPILE Tensor int_update([[kiln::dtype("i32")]] const Tensor &x0) {
  Tensor t = kiln::amax(x0, -1, true);
  t /= 2.0;
  return t;
}

// A mixed-precision optimizer step: an f32 master weight updated in place
// by a 16-bit gradient (the result is f32, stored into p), and an integer
// counter updated by a comparison.
COMPILE void sgd_f32_master([[kiln::dtype("f32")]] Tensor &p,
                            const Tensor &grad, double lr) {
  p -= lr * grad;
}
COMPILE void count_positive([[kiln::dtype("i64")]] Tensor &count,
                            const Tensor &x) {
  count += x > 0;
}

inline Tensor int_input(kiln::Dims shape, kiln::DType dt, uint64_t seed,
                        kiln::Device dev) {
  kiln::manual_seed(seed);
  return (kiln::randn(shape, kiln::DType::f32) * 5).to(kiln::i64).to(dt).to(dev);
}

inline int run_arg_dtypes(kiln::Device dev) {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  const bool eager_backend = std::strcmp(BACKEND, "backend=eager") == 0;
  auto k = [&](int fused) { return eager_backend ? -1 : fused; };
  // A dtype combination compiled for none: the guard sends the call to
  // the eager body (backend=eager's fast path runs any dtypes).
  const uint64_t fb = eager_backend ? 0 : 1;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    for (kiln::Dims shape : {kiln::Dims{5, 64}, kiln::Dims{33, 4099}}) {
      Tensor x = input(shape, dt, 1, dev);
      Tensor w = input({shape[1]}, kiln::f32, 2, dev);
      // The float64 reference: the f32 statistics are exact in f64.
      Tensor xf = x.to(kiln::f32).to(kiln::f64);
      Tensor ref = xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + 1e-6) *
                   w.to(kiln::f64);
      check("rms_f32_weight", dt == kiln::f64 ? kiln::f32 : dt,
            [&] { return V{rms_f32_weight(x, w, 1e-6)}; }, 1, 0, k(1), {ref});
    }
    Tensor x = input({7, 96}, dt, 3, dev);
    for (kiln::DType it : {kiln::i64, kiln::i32}) {
      Tensor labels = int_input({7, 96}, it, 4, dev);
      check(std::string("by_label/") + kiln::dtype_name(it), dt,
            [&] { return V{by_label(x, labels)}; }, 1, 0, k(1));
    }
    check("to_weight_dtype", kiln::f32,
          [&] { return V{to_weight_dtype(x, input({96}, kiln::f32, 2, dev))}; },
          1, 0, k(1));
    // Updated in place: a fresh copy per run (one more launch, the clone).
    Tensor p0 = input({96}, kiln::f32, 11, dev), g = input({96}, dt, 13, dev);
    check("sgd_f32_master", kiln::f32, [&] {
      Tensor p = p0.clone();
      sgd_f32_master(p, g, 0.1);
      return V{p};
    }, 1, 0, k(2));
    Tensor c0 = int_input({7, 96}, kiln::i64, 12, dev);
    check("count_positive", kiln::i64, [&] {
      Tensor c = c0.clone();
      count_positive(c, x);
      return V{c};
    }, 1, 0, k(2));
    Tensor keep = (input({96}, kiln::f32, 5, dev) > 0).to(kiln::b8);
    check("masked", dt, [&] { return V{masked(x, keep)}; }, 1, 0, k(1));
    Tensor counts = int_input({7, 1}, kiln::i64, 6, dev);
    check("weighted_rows", dt, [&] { return V{weighted_rows(x, counts)}; }, 1,
          0, k(1));
    // Labels of a dtype no variant was compiled for (f32 here, i16 has no
    // tensors): the guard sends the call to the eager body.
    Tensor flabels = int_input({7, 96}, kiln::f32, 4, dev);
    check("by_label/f32 labels (fallback)", dt,
          [&] { return V{by_label(x, flabels)}; }, 1 - fb, fb);
    // An f16 weight where f32 was pinned: the same.
    check("rms_f32_weight/f16 weight (fallback)", dt,
          [&] { return V{rms_f32_weight(x, input({96}, kiln::f16, 2, dev), 1e-6)}; },
          1 - fb, fb);
  }
  for (kiln::DType ot : {kiln::i64, kiln::i32}) {
    Tensor ids = int_input({9, 40}, kiln::i64, 7, dev);
    Tensor offs = int_input({40}, ot, 8, dev);
    check(std::string("int_math/") + kiln::dtype_name(ot), kiln::i64,
          [&] { return V{int_math(ids, offs)}; }, 1, 0, k(1));
  }
  Tensor a = int_input({9, 40}, kiln::i32, 9, dev),
         b = int_input({9, 40}, kiln::i32, 10, dev);
  check("int_ratio", kiln::f32, [&] { return V{int_ratio(a, b)}; }, 1, 0, k(1));
  check("int_math/i32 ids (fallback)", kiln::i32,
        [&] { return V{int_math(a, b)}; }, 1 - fb, fb);
  capture_compare::expect_raises("int_update raises as eager does", [&] {
    return int_update(a);
  });
  return capture_compare::summary();
}
