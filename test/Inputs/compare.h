// How far a compiled result is from eager, for the execution tests'
// harnesses (exec_compare.h, capture_compare.h): one tolerance table and one
// element-wise rule.
#pragma once

#include <kiln/kiln.h>

#include <cmath>
#include <vector>

namespace kiln_compare {

// The fused code keeps intermediates in the compute type (f32 for 16-bit
// floats) where eager rounds after every op. With every guard made to fail
// (kiln::set_force_guard_failure) the compiled side runs eager code too.
inline double tolerance(kiln::DType dt) {
  if (kiln::force_guard_failure()) // both sides run eager code: exactly
    return 0;
  switch (dt) {
  case kiln::DType::f64:
    return 1e-12;
  case kiln::DType::f32:
    return 2e-6;
  default:
    return 3e-2;
  }
}

// The largest |got - want| relative to the largest finite |want| (at least
// 1). NaN must meet NaN and an infinity the same infinity: otherwise, and
// where definedness, dtype or shape differ, the difference is infinite.
// With `ref` (the float64 reference, same shape): where `want` is not finite
// but the reference is (eager rounded an intermediate to a 16-bit type and
// overflowed where the fused code, keeping f32, did not), `got` is compared
// with the reference instead.
inline double difference(const kiln::Tensor &got, const kiln::Tensor &want,
                         const kiln::Tensor &ref = kiln::Tensor()) {
  if (got.defined() != want.defined())
    return INFINITY;
  if (!got.defined())
    return 0;
  if (got.dtype() != want.dtype() || !(got.sizes() == want.sizes()) ||
      (ref.defined() && !(ref.sizes() == want.sizes())))
    return INFINITY;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  std::vector<double> r = ref.defined() ? ref.to_vector<double>() : w;
  for (size_t i = 0; i < w.size(); ++i)
    if (!std::isfinite(w[i]) && std::isfinite(r[i]))
      w[i] = r[i];
  double scale = 1, diff = 0;
  for (double v : w)
    if (std::isfinite(v))
      scale = std::fmax(scale, std::fabs(v));
  for (size_t i = 0; i < w.size(); ++i) {
    double d;
    if (std::isnan(g[i]) || std::isnan(w[i]))
      d = std::isnan(g[i]) && std::isnan(w[i]) ? 0 : INFINITY;
    else if (std::isinf(g[i]) || std::isinf(w[i]))
      d = g[i] == w[i] ? 0 : INFINITY;
    else
      d = std::fabs(g[i] - w[i]);
    diff = std::fmax(diff, d);
  }
  return diff / scale;
}

// Whether a compiled result that differs from eager's by `vs_eager` is
// acceptable: within eager's tolerance, or (with a float64 reference) about
// as close to it as eager: within 4x, since summation orders differ and an
// ill-conditioned output (1 / a sum near 0, tanh of a long sum) magnifies
// either's luck. err_c and err_e are compiled's and eager's difference from
// the reference. With every guard made to fail both ran eager code, so only
// equality passes. Without a reference (err_c and err_e not given) only
// eager's tolerance passes: the defaults were INFINITY once, and
// INFINITY <= INFINITY let every difference through.
inline bool acceptable(double vs_eager, double tol, double err_c = NAN,
                       double err_e = NAN) {
  if (vs_eager <= tol)
    return true;
  if (kiln::force_guard_failure())
    return false;
  return err_c <= std::fmax(4 * err_e, tol);
}

} // namespace kiln_compare
