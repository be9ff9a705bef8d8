// An independent float64 model of the eager ops for the unit tests: the
// op table's rules and a reference formula per op, written here without
// kiln/scalar.h, and rounding to each dtype done a different way from the
// runtime (_Float16 for half, scaling and nearbyint for bfloat16).
#pragma once

#include "runtime_test_util.h"

#include <kiln/op_traits.h>

#include <algorithm>
#include <cmath>

namespace kt {

enum class Rule { SAME, FLOAT, COMPARE, WHERE };

struct OpEntry {
  kiln::OpId op;
  const char *name;
  int arity;
  Rule rule;
  bool no_b8; // the NO_B8 trait: eager raises on b8 operands
};

inline const std::vector<OpEntry> &all_ops() {
  using namespace kiln::op_traits;
  static const std::vector<OpEntry> ops = {
#define KILN_POINTWISE(Name, name, ar, rl, traits, identity, cxx, formula,     \
                       decomposition)                                          \
  {kiln::OpId::Name, #name, ar, Rule::rl, ((traits) & NO_B8) != 0},
#include <kiln/ops.def>
  };
  return ops;
}

inline const std::vector<kiln::DType> &all_dtypes() {
  using namespace kiln;
  static const std::vector<DType> d = {f32, f16, bf16, f64, i32, i64, b8};
  return d;
}

// Rounds to bfloat16 (8 significant bits, f32's exponent range) by scaling.
inline double round_bf16(double x) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  int q = std::max(std::ilogb(x) - 7, -133);
  double y = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);
  if (std::fabs(y) > 3.3895313892515355e38)
    return std::copysign(INFINITY, x);
  return y;
}

// The value `x` takes when stored as `t`.
inline double round_to(kiln::DType t, double x) {
  switch (t) {
  case kiln::DType::f64:
    return x;
  case kiln::DType::f32:
    return double(float(x));
  case kiln::DType::f16:
    return double(_Float16(x));
  case kiln::DType::bf16:
    return round_bf16(x);
  case kiln::DType::i32:
  case kiln::DType::i64:
    return std::trunc(x);
  case kiln::DType::b8:
    return x != 0 ? 1.0 : 0.0;
  }
  return x;
}

inline double nan_max(double a, double b) { return (std::isnan(a) || a > b) ? a : b; }
inline double nan_min(double a, double b) { return (std::isnan(a) || a < b) ? a : b; }

// Integer power as PyTorch defines it (negative exponents: 0 unless the
// base is 1 or -1).
inline double int_pow(double base, double exp) {
  long long b = std::llround(base), e = std::llround(exp);
  if (e < 0)
    return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
  long long r = 1;
  for (long long i = 0; i < e; ++i)
    r *= b;
  return double(r);
}

// The exact result of `op` on compute-type values (integral: integer math).
// `compute` is the compute type (f32 for f16/bf16/f32): trunc_div truncates
// the quotient rounded to it, as the formula (and torch) do.
inline double reference(kiln::OpId op, double a, double b, double c,
                        bool integral, kiln::DType compute = kiln::DType::f64) {
  using kiln::OpId;
  switch (op) {
  case OpId::Add: return a + b;
  case OpId::Sub: return a - b;
  case OpId::Mul: return a * b;
  case OpId::Div: return a / b;
  case OpId::TruncDiv:
    if (integral)
      return b == 0 ? 0.0 : std::trunc(a / b);
    return std::trunc(compute == kiln::DType::f64 ? a / b
                                                  : double(float(a / b)));
  case OpId::Fmod:
    if (integral)
      return b == 0 ? 0.0 : std::fmod(a, b);
    return std::fmod(a, b);
  case OpId::Atan2: return std::atan2(a, b);
  case OpId::Neg: return -a;
  case OpId::Abs: return std::fabs(a);
  case OpId::Floor: return std::floor(a);
  case OpId::Ceil: return std::ceil(a);
  case OpId::Trunc: return std::trunc(a);
  case OpId::Round: return std::nearbyint(a); // halves to even
  case OpId::Pow: return integral ? int_pow(a, b) : std::pow(a, b);
  case OpId::Maximum: return nan_max(a, b);
  case OpId::Minimum: return nan_min(a, b);
  case OpId::Sin: return std::sin(a);
  case OpId::Cos: return std::cos(a);
  case OpId::Tan: return std::tan(a);
  case OpId::Tanh: return std::tanh(a);
  case OpId::Exp: return std::exp(a);
  case OpId::Log: return std::log(a);
  case OpId::Log1p: return std::log1p(a);
  case OpId::Expm1: return std::expm1(a);
  case OpId::Log2: return std::log2(a);
  case OpId::Log10: return std::log10(a);
  case OpId::Sqrt: return std::sqrt(a);
  case OpId::Rsqrt: return 1.0 / std::sqrt(a);
  case OpId::Erf: return std::erf(a);
  case OpId::Reciprocal: return 1.0 / a;
  case OpId::Relu: return a < 0 ? 0.0 : a;
  case OpId::Sigmoid: return 1.0 / (1.0 + std::exp(-a));
  case OpId::Silu: return a * (1.0 / (1.0 + std::exp(-a)));
  case OpId::Gelu: return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
  case OpId::GeluTanh:
    return 0.5 * a *
           (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
  case OpId::Clamp: return nan_min(nan_max(a, b), c);
  case OpId::Gt: return a > b;
  case OpId::Lt: return a < b;
  case OpId::Ge: return a >= b;
  case OpId::Le: return a <= b;
  case OpId::Eq: return a == b;
  case OpId::Ne: return a != b;
  case OpId::Where: return a != 0 ? b : c;
  default:
    ADD_FAILURE() << "no float64 reference for op " << kiln::op_name(op);
    return NAN;
  }
}

// Ops that are one correctly rounded operation: in every dtype the result
// is the exact value rounded once (f32 math then f16/bf16 rounding is
// innocuous double rounding for these).
inline bool is_exact_op(kiln::OpId op) {
  using kiln::OpId;
  switch (op) {
  case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div:
  case OpId::Neg: case OpId::Abs: case OpId::Maximum: case OpId::Minimum:
  case OpId::Floor: case OpId::Ceil: case OpId::Trunc: case OpId::Round:
  case OpId::Fmod: case OpId::Sqrt: case OpId::Reciprocal: case OpId::Relu: case OpId::Clamp:
  case OpId::Gt: case OpId::Lt: case OpId::Ge: case OpId::Le: case OpId::Eq:
  case OpId::Ne: case OpId::Where:
    return true;
  default:
    return false;
  }
}

// Ops whose formula cancels (1 + erf(-x), 1 + tanh(-x)): their error is
// absolute, proportional to |x|.
inline bool cancels(kiln::OpId op) {
  return op == kiln::OpId::Gelu || op == kiln::OpId::GeluTanh;
}

inline double epsilon(kiln::DType t) {
  switch (t) {
  case kiln::DType::f64: return std::ldexp(1.0, -52);
  case kiln::DType::f16: return std::ldexp(1.0, -10);
  case kiln::DType::bf16: return std::ldexp(1.0, -7);
  default: return std::ldexp(1.0, -23);
  }
}
inline double min_normal(kiln::DType t) {
  switch (t) {
  case kiln::DType::f64: return 2.2250738585072014e-308;
  case kiln::DType::f16: return 6.103515625e-05;
  default: return 1.1754943508222875e-38;
  }
}

// A tolerance for one element: exact ops and non-float results match
// exactly; others within a few ulps of the result dtype.
struct Tolerance {
  bool exact = true;
  double rtol = 0, atol = 0;
  bool ok(double got, double want) const {
    if (std::isnan(want) || std::isnan(got))
      return std::isnan(want) && std::isnan(got);
    if (exact || std::isinf(want) || std::isinf(got))
      return got == want;
    return std::fabs(got - want) <= rtol * std::fabs(want) + atol;
  }
};

inline Tolerance tolerance_for(kiln::OpId op, kiln::DType result, bool integral,
                               double a0) {
  Tolerance t;
  t.exact = is_exact_op(op) || !kiln::is_floating(result) || integral;
  if (t.exact)
    return t;
  bool narrow = result == kiln::DType::f16 || result == kiln::DType::bf16;
  t.rtol = (narrow ? 2 : 16) * epsilon(result);
  t.atol = min_normal(result);
  if (cancels(op)) {
    double eps = result == kiln::DType::f64 ? epsilon(kiln::DType::f64)
                                            : epsilon(kiln::DType::f32);
    t.atol += 16 * eps * (1 + std::fabs(a0));
  }
  return t;
}

} // namespace kt
