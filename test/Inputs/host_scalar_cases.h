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

// Conversions that round or wrap, as static_cast does: to float (a local,
// a functional cast, a compound update) and to int32_t (modulo 2^32).
COMPILE Tensor narrowing(const Tensor &x, double t, int64_t n) {
  float s = t / 3.0;
  int32_t k = n;
  int32_t j = 1;
  j += n; // computed in int64_t, stored back wrapped
  float f = 1;
  f += t; // computed in double, stored back rounded
  return x * s + double(k) * 1e-9 + float(t * 7.1) - double(int32_t(n * 3)) +
         double(j) * 1e-9 + f;
}

// float arithmetic: each step rounds to float, as C++ computes it. The
// values are where double would differ: 2^24 + 1 is not a float, so with
// t = 1 and n = 2^24 + 1, d and e are 0 in float and 1 in double.
COMPILE Tensor float_steps(const Tensor &x, float t, int64_t n) {
  float big = t * 16777216.0f;
  float d = (big + 1.0f) - big;
  float e = n * 1.0f - 16777216.0f;
  float g = t / 3.0f;
  g *= 3.0f;
  float h = std::sqrt(t * 2.0f) + std::abs(-t) + std::max(t, 0.5f);
  return x * g + d + e + double(h) * 1e-3;
}

// <cmath> of floats, std:: and C's names: computed in double and rounded
// to float (the correctly rounded value, where the float functions are
// within their ulp bounds of it).
COMPILE Tensor float_math(const Tensor &x, float t) {
  float a = std::exp(t) + expf(t * 0.5f) + std::sin(t) + cosf(t) + std::log(t) +
            std::pow(t, 1.5f) + std::tanh(t) + erff(t) + sqrtf(t) + fabsf(-t);
  return x * a;
}
// Rounding of host values: floor, ceil, trunc, and rint / nearbyint
// (halves to even), of doubles, floats and an int.
COMPILE Tensor rounding(const Tensor &x, double t, float f, int64_t n) {
  double a = std::floor(t) + 2 * std::ceil(t) + 4 * std::trunc(-t) + 8 * std::rint(t * 2.0) +
             16 * std::nearbyint(t + 0.5) + floorf(f) * ceilf(-f) + truncf(f) + rintf(f) +
             std::floor(n);
  return x * a;
}
// std::round (halves away from zero, unlike rint), fmod and atan2 of
// host values, of doubles and floats.
COMPILE Tensor round_away(const Tensor &x, double t, float f) {
  double a = std::round(t) + 2 * roundf(f) + 4 * std::round(-t * 2.0) +
             8 * std::fmod(t, 0.75) + std::atan2(t, -2.0) + fmodf(f, 1.5f) +
             std::atan2(f, 0.5f);
  return x * a;
}

// <cmath> functions outside the op table (cbrt, hypot, atan, C's cbrtf)
// of parameters and sizes: called where the region starts and passed in;
// and the table's log1p, expm1, log2, log10 of host values.
COMPILE Tensor outside_table(const Tensor &x, double t, float f) {
  double a = std::cbrt(t) + std::hypot(t, double(x.size(-1))) + cbrtf(f) +
             std::atan(f) + std::log1p(std::fabs(t)) + std::expm1(t * 0.1) +
             std::log2(std::fabs(t) + 1) + log10f(std::fabs(f) + 1);
  return x * a;
}

// size(d) of tensors the function computes: the host reads it from the
// shape it computed for the kernel writing the tensor (a reduction's, a
// GEMM's, a view's); what reads the size runs in a later kernel.
COMPILE Tensor mean_by_size(const Tensor &x) {
  Tensor s = kiln::sum(x, 0);
  return s / s.size(0) + double(s.size(-1) % 5);
}
// numel() of computed tensors: of a reduction's result and of a view.
COMPILE Tensor mean_by_numel(const Tensor &x) {
  Tensor s = kiln::sum(x, 0);
  Tensor f = (x * 2.0).reshape({-1});
  return s / s.numel() + double(s.numel() % 7) - double(f.numel()) * 1e-3;
}
COMPILE Tensor size_only(const Tensor &x) {
  Tensor r = kiln::amax(x, -1);
  return x * double(r.size(0));
}
COMPILE Tensor heads(const Tensor &x, const Tensor &w, int64_t nh) {
  Tensor q = kiln::matmul(x, w);
  int64_t d = q.size(-1) / nh;
  Tensor r = q.reshape({x.size(0), nh, d});
  Tensor t = (r * 2.0).transpose(0, 1);
  return kiln::softmax(t * (1.0 / std::sqrt(double(d))), -1) + double(t.size(0));
}

// Conversions that wrap to unsigned and 8/16-bit types, as C++20 defines
// them (the value modulo 2^N in the type's range); to size_t of sizes
// (never negative) as they are.
COMPILE Tensor wrapping(const Tensor &x, int64_t n) {
  uint8_t a = (uint8_t)n;
  int8_t b = static_cast<int8_t>(n);
  uint16_t c = uint16_t(n / 3);
  int16_t d = (int16_t)(n - 7);
  uint32_t e = n;
  int ai = a, bi = b, ci = c, di = d;
  return x * double(ai) + double(bi) - double(ci) * 1e-3 + double(di) * 1e-4 +
         double(e) * 1e-9;
}
COMPILE Tensor sizes_unsigned(const Tensor &x) {
  size_t rows = x.size(0);
  const std::size_t d = x.size(-1);
  size_t total = x.numel() * 2 + x.size(0);
  int64_t half = int64_t(total) / 2;
  return x * (1.0 / std::sqrt(double(d))) + double(rows) + double(half) * 1e-3;
}

// A dim passed at run time: the region is specialised for the last dim
// (d == -1, or d == x.dim() - 1 of a tensor from outside the region); a
// call with another dim runs eagerly.
COMPILE Tensor softmax_dim(const Tensor &x, int64_t d) {
  return kiln::softmax(x, d) * 2.0;
}
COMPILE Tensor sum_dim(const Tensor &x, int d) {
  Tensor y = x * 3.0;
  return kiln::sum(y, d);
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
    for (float t : {1.0f, 0.1f, 3.0f, 7.25f})
      check("float_math", dt, [&] { return V{float_math(x, t)}; }, 1, 0, k(1));
    for (double t : {1.5, 2.5, -0.5, 0.1, -3.7})
      check("rounding", dt,
            [&] { return V{rounding(x, t, float(t) * 3.0f, int64_t(t * 10))}; }, 1, 0,
            k(1));
    for (double t : {1.5, 2.5, -0.5, 0.1, -3.7, 0.49999999999999994, -2.5, 0.25})
      check("round_away", dt,
            [&] { return V{round_away(x, t, float(t) * 3.0f)}; }, 1, 0, k(1));
    for (double t : {0.75, -2.5, 1e-9})
      check("outside_table", dt,
            [&] { return V{outside_table(x, t, float(t) * 3.0f)}; }, 1, 0, k(1));
    for (float t : {1.0f, 0.1f, 3.0f})
      check("float_steps", dt,
            [&] { return V{float_steps(x, t, (int64_t(1) << 24) + 1)}; }, 1, 0,
            eager_backend ? -1 : 1);
    // -2.5e10 * x is past f16's range: eager rounds each op to f16 (inf),
    // the fused kernel only its result, as Inductor's (so not in f16).
    for (double t : {0.1, -2.5e10})
      for (int64_t n : {int64_t(7), (int64_t(1) << 32) + 5, -(int64_t(1) << 31) - 3})
        if (dt != kiln::DType::f16 || t > -1e5)
          check("narrowing", dt, [&] { return V{narrowing(x, t, n)}; }, 1, 0, k(6));
    for (int64_t n : {int64_t(0), int64_t(-1), int64_t(127), int64_t(128),
                      int64_t(255), int64_t(-129), int64_t(70000),
                      int64_t(-70000), int64_t(5000000000),
                      int64_t(-5000000000), INT64_MAX, INT64_MIN + 7})
      check("wrapping", dt, [&] { return V{wrapping(x, n)}; }, 1, 0, k(5));
    check("sizes_unsigned", dt, [&] { return V{sizes_unsigned(big)}; }, 1, 0,
          k(3));
    // (A specialisation that runs the original code counts as neither a
    // compiled call nor a fallback.)
    for (int64_t d : {int64_t(-1), int64_t(1)})
      check("softmax_dim " + std::to_string(d), dt,
            [&] { return V{softmax_dim(big, d)}; }, 1, 0, k(2));
    check("softmax_dim 0", dt, [&] { return V{softmax_dim(big, 0)}; }, 0, 0);
    // Of y, which the region computes, only d == -1 is known to be the last
    // dim at the region's start.
    check("sum_dim -1", dt, [&] { return V{sum_dim(big, -1)}; }, 1, 0, k(2));
    for (int d : {1, 0, -2})
      check("sum_dim " + std::to_string(d), dt,
            [&] { return V{sum_dim(big, d)}; }, 0, 0);
    // Sizes of computed tensors: two kernels where one reads the other's
    // size (a column sum's launches differ by device: not counted).
    check("mean_by_size", dt, [&] { return V{mean_by_size(big)}; }, 1, 0,
          eager_backend ? 3 : -1);
    check("size_only", dt, [&] { return V{size_only(big)}; }, 1, 0, 2);
    check("mean_by_numel", dt, [&] { return V{mean_by_numel(big)}; }, 1, 0, -1);
    Tensor wq = input({64, 24}, dt, 5, dev);
    for (int64_t nh : {2, 3, 8}) // GEMM, r * 2, softmax
      check("heads", dt, [&] { return V{heads(x, wq, nh)}; }, 1, 0,
            eager_backend ? -1 : 3);
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
