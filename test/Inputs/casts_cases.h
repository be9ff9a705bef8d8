// The cases of test/plugin/capture/exec-casts*.cpp: dtype casts
// (Tensor::to) compiled against eager on one device over every variant.
#pragma once

#include "capture_compare.h"

#include <cstring>

using kiln::Tensor;

// RMS norm as model code writes it: statistics in f32, the result back in
// the activation's dtype, then the weight.
COMPILE Tensor rms_norm_mixed(const Tensor &x, const Tensor &w, double eps) {
  Tensor xf = x.to(kiln::f32);
  Tensor r = xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + eps);
  return r.to(x.dtype()) * w;
}

// Casts to integers and bools read the value eager rounds (16-bit
// intermediates), truncate, and mix with floats again.
COMPILE Tensor discrete(const Tensor &x) {
  Tensor i = (x * 3).to(kiln::i64);
  Tensor j = (x * 7 + 1).to(kiln::i32);
  Tensor b = x.to(kiln::b8);
  return kiln::where(b, i + j, x.to(kiln::f16).to(kiln::f32));
}

// to(y.dtype()) of a value of another dtype, and of the variant's own.
COMPILE Tensor like(const Tensor &x, const Tensor &y) {
  Tensor s = (x > 0).to(y.dtype());
  return (x.to(kiln::f64) * 2).to(y.dtype()) + s + x.to(x.dtype());
}

// A cast of a reduced value, and a reduction of a cast.
COMPILE Tensor reduced(const Tensor &x) {
  Tensor n = kiln::sum((x * 4).to(kiln::i32), -1, true);
  Tensor m = kiln::amax(x, -1, true).to(kiln::bf16);
  return (x - m) * n.to(kiln::f32);
}

// Identity in the f32 variant (Tensor::to returns its object): the result
// is x itself there, a new tensor in the others.
COMPILE Tensor maybe_same(const Tensor &x) { return x.to(kiln::f32); }

// The float64 reference of rms_norm_mixed: f32 statistics are exact in f64.
inline Tensor rms_ref(const Tensor &x, const Tensor &w, double eps) {
  Tensor xf = x.to(kiln::f32).to(kiln::f64);
  Tensor r = xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + eps);
  return r * w.to(kiln::f64);
}

inline int run_casts(kiln::Device dev) {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  bool eager_backend = std::strcmp(BACKEND, "backend=eager") == 0;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({5, 64}, dt, 1, dev), w = input({64}, dt, 2, dev);
    Tensor big = input({33, 4099}, dt, 3, dev), wb = input({4099}, dt, 4, dev);
    Tensor y = input({5, 64}, dt, 5, dev);
    // One fused kernel with the kiln backend; one eager kernel per op
    // (7 ops, an identity cast of the f32 variant launching none) with
    // backend=eager.
    auto k = [&](int fused, int ops) { return eager_backend ? ops : fused; };
    for (auto [in, wt] : {std::pair{x, w}, std::pair{big, wb}}) {
      // Compared with eager and, where eager rounded, the reference; then
      // with the reference directly at f32's tolerance (the statistics are
      // f32 in every variant) plus the output dtype's rounding.
      Tensor ref = rms_ref(in, wt, 1e-6).to(dt);
      // (f64's tolerance is f32's: the statistics are f32, summed in
      // another order than eager's.)
      check("rms_norm_mixed", dt == kiln::DType::f64 ? kiln::DType::f32 : dt,
            [&] { return V{rms_norm_mixed(in, wt, 1e-6)}; },
            1, 0, k(1, dt == kiln::DType::f32 ? 6 : 8), {ref});
      double d = kiln_compare::difference(rms_norm_mixed(in, wt, 1e-6), ref);
      double tol = dt == kiln::DType::f32 || dt == kiln::DType::f64
                       ? 1e-5
                       : kiln_compare::tolerance(dt);
      if (!(d <= tol) && !kiln::force_guard_failure())
        std::printf("MISMATCH rms_norm_mixed vs float64 [%s]: %g\n",
                    kiln::dtype_name(dt), d);
    }
    check("discrete", dt, [&] { return V{discrete(x)}; }, 1, 0, k(1, -1));
    check("like", dt, [&] { return V{like(x, y)}; }, 1, 0, k(1, -1));
    check("reduced", dt, [&] { return V{reduced(big)}; }, 1, 0, -1);
    check("maybe_same", dt, [&] { return V{maybe_same(x)}; }, 1, 0,
          dt == kiln::DType::f32 ? 0 : k(1, 1));
    // The f32 variant hands back x itself, as eager does.
    if (dt == kiln::DType::f32 && !kiln::force_guard_failure() &&
        maybe_same(x).data_ptr() != x.data_ptr())
      std::printf("MISMATCH maybe_same: not x itself in the f32 variant\n");
  }
  return capture_compare::summary();
}
