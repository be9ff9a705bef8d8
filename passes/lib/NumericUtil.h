// Scalar values of the IR: constants are stored as double and rounded to
// their dtype exactly as the runtime stores a value of that dtype.
#pragma once

#include <kiln/dtype.h>
#include <kiln/scalar.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kiln::ir {

// Float -> integer as a C++ cast, but defined for NaN and out-of-range
// values (which C++ leaves undefined): NaN is 0, others saturate.
template <class I> inline I saturating_cast(double v) {
  if (std::isnan(v))
    return 0;
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<I>::min();
  if (v >= 9223372036854775808.0)
    return std::numeric_limits<I>::max();
  int64_t i = static_cast<int64_t>(v);
  if (i < std::numeric_limits<I>::min())
    return std::numeric_limits<I>::min();
  if (i > std::numeric_limits<I>::max())
    return std::numeric_limits<I>::max();
  return static_cast<I>(i);
}

inline double round_to_dtype(double v, DType dt) {
  switch (dt) {
  case DType::f64:
    return v;
  case DType::f32:
    return double(float(v));
  case DType::f16:
    return double(scalar::to_float(scalar::to_half(float(v))));
  case DType::bf16:
    return double(scalar::to_float(scalar::to_bfloat16(float(v))));
  case DType::i32:
    return double(saturating_cast<int32_t>(v));
  case DType::i64:
    return double(saturating_cast<int64_t>(v));
  case DType::b8:
    return v != 0 ? 1.0 : 0.0;
  }
  return v;
}

inline uint64_t double_bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

} // namespace kiln::ir
