// The cases of test/plugin/capture/exec-host-scalars*.cpp: host scalar
// expressions (<cmath> on doubles, conversions, sizes) inside annotated
// functions, computed once per call on the host and passed to the one fused
// kernel, compiled against eager on one device over every variant.
#pragma once

#include "capture_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

using kiln::Tensor;

// Attention's scale, from the last dim's size.
COMPILE Tensor scaled(const Tensor &x) {
  return x * (1.0 / std::sqrt(double(x.size(-1))));
}

// The same scale feeding a row reduction.
COMPILE Tensor scaled_softmax(const Tensor &x) {
  double scale = 1.0 / std::sqrt(double(x.size(-1)));
  return kiln::softmax(x * scale, -1);
}

// <cmath> of a double parameter, of an int, integer abs, a constant (folded).
COMPILE Tensor math(const Tensor &x, double t, int n) {
  return x * std::exp(t) + std::sqrt(n) - std::abs(n) * std::pow(t, 2.0) +
         std::tanh(t) / std::sqrt(2.0) + std::log(std::fabs(t) + 1);
}

// Conversions between kinds truncate and test as C++ does.
COMPILE Tensor conversions(const Tensor &x, double t, int64_t n) {
  double whole = double(int64_t(t));
  bool on = bool(n);
  return x * whole + double(on) + double(n) / 4;
}

// std::max and std::min of runtime doubles and integers: `(a < b) ? b : a`
// and `(b < a) ? b : a`, so the first argument wins ties and NaN
// comparisons, as the standard says (std::max of a temporary, too).
COMPILE Tensor clipped(const Tensor &x, double t, int64_t n) {
  double lo = std::min(t, 0.5);
  double hi = std::max(t * 2.0, lo);
  int64_t k = std::max<int64_t>(n, 2);
  return x * std::max(lo, -1.0) + hi + double(std::min(k, int64_t(5))) +
         std::max(0.25, t);
}

// rms_norm's default eps is x's machine epsilon (per variant), and so is a
// negative runtime eps (chosen on the host).
COMPILE Tensor rms_default(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w);
}
COMPILE Tensor rms_eps(const Tensor &x, const Tensor &w, double eps) {
  return kiln::rms_norm(x, w, eps);
}

inline int run_host_scalars(kiln::Device dev) {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  bool eager_backend = std::strcmp(BACKEND, "backend=eager") == 0;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({6, 64}, dt, 1, dev), big = input({37, 4097}, dt, 2, dev);
    // One fused kernel each with the kiln backend (the scalars are host
    // work); with backend=eager, one eager kernel per tensor op.
    auto k = [&](int eager_ops) { return eager_backend ? eager_ops : 1; };
    check("scaled", dt, [&] { return V{scaled(x)}; }, 1, 0, k(1));
    check("scaled_softmax", dt, [&] { return V{scaled_softmax(big)}; }, 1, 0,
          k(2));
    for (double t : {0.75, -2.5})
      for (int n : {3, -7}) {
        check("math", dt, [&] { return V{math(x, t, n)}; }, 1, 0, k(5));
        check("conversions", dt, [&] { return V{conversions(x, t, n)}; }, 1, 0,
              k(3));
      }
    check("conversions 0", dt, [&] { return V{conversions(x, 2.99, 0)}; }, 1, 0,
          k(3));
    for (double t : {0.75, -2.5, 0.5, 0.25, double(NAN)})
      for (int64_t n : {3, -7, 9})
        check("clipped", dt, [&] { return V{clipped(x, t, n)}; }, 1, 0, k(4));
    // Tiny rows, where eps decides the result.
    Tensor tiny = input({4, 16}, dt, 3, dev) * 1e-3, w = input({16}, dt, 4, dev);
    check("rms_default", dt, [&] { return V{rms_default(tiny, w)}; }, 1, 0, 1);
    for (double eps : {-1.0, 1e-3})
      check("rms_eps", dt, [&] { return V{rms_eps(tiny, w, eps)}; }, 1, 0, 1);
  }
  return capture_compare::summary();
}
