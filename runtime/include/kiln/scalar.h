// kiln/scalar.h - scalar element types and the op table's formulas.
//
// This header is compiled by the host compiler (eager CPU kernels and
// generated CPU loops) and by nvcc (eager CUDA kernels and generated CUDA
// kernels). It defines, for every entry of kiln/ops.def, the function
//   kiln::scalar::op_<name>(a[, b[, c]])
// on compute types, so that every path evaluates the same formula.
#pragma once

#include <kiln/dtype.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <math.h>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace kiln {

// 16-bit floats are stored as their bit patterns; arithmetic happens in f32.
struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};

namespace scalar {

KILN_HD inline uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
KILN_HD inline float bits_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

KILN_HD inline float to_float(half h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h.bits));
#else
  uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t man = h.bits & 0x3ffu;
  if (exp == 0x1f) // inf / nan
    return bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) { // zero / subnormal: man * 2^-24
    float v = float(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
#endif
}

KILN_HD inline half to_half(float f) {
#if defined(__CUDA_ARCH__)
  return half{__half_as_ushort(__float2half_rn(f))};
#else
  // Round to nearest even, with overflow to inf and NaN kept NaN.
  uint32_t u = f32_bits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) // inf or nan
    return half{uint16_t(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u))};
  if (a >= 0x477ff000u) // rounds to >= 65520: overflow
    return half{uint16_t(sign | 0x7c00u)};
  if (a < 0x38800000u) { // below the smallest normal half: subnormal or zero
    // Adding 0.5 makes the FPU round the mantissa at the subnormal step.
    float r = bits_f32(a) + 0.5f;
    return half{uint16_t(sign | uint16_t(f32_bits(r) - 0x3f000000u))};
  }
  uint32_t odd = (a >> 13) & 1u;
  a += 0xc8000fffu + odd; // rebias exponent (-112 << 23) and round
  return half{uint16_t(sign | uint16_t(a >> 13))};
#endif
}

KILN_HD inline float to_float(bfloat16 h) { return bits_f32(uint32_t(h.bits) << 16); }

KILN_HD inline bfloat16 to_bfloat16(float f) {
#if defined(__CUDA_ARCH__)
  // One cvt.rn.bf16.f32 (round to nearest even, as below).
  return bfloat16{__bfloat16_as_ushort(__float2bfloat16_rn(f))};
#endif
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
    return bfloat16{uint16_t((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even
  return bfloat16{uint16_t(u >> 16)};
}

// Compute ("opmath") type of each storage type.
template <class T> struct opmath {
  using type = T;
};
template <> struct opmath<half> {
  using type = float;
};
template <> struct opmath<bfloat16> {
  using type = float;
};
template <class T> using opmath_t = typename opmath<T>::type;

// Storage -> compute and compute -> storage conversions.
template <class T> KILN_HD inline opmath_t<T> load(T v) { return v; }
KILN_HD inline float load(half v) { return to_float(v); }
KILN_HD inline float load(bfloat16 v) { return to_float(v); }

template <class T, class C> KILN_HD inline T store(C v) { return static_cast<T>(v); }
template <> KILN_HD inline half store<half, float>(float v) { return to_half(v); }
template <> KILN_HD inline half store<half, double>(double v) { return to_half(float(v)); }
template <> KILN_HD inline bfloat16 store<bfloat16, float>(float v) { return to_bfloat16(v); }
template <> KILN_HD inline bfloat16 store<bfloat16, double>(double v) {
  return to_bfloat16(float(v));
}

// dtype conversion, the one formula of Tensor::to's converting copy and of
// the compiler's `to` op: a compute-type value (or a stored element, once
// loaded) written as storage type T and read back as T's compute type.
// 16-bit floats round from f32 (an f64 goes through f32 first, as PyTorch's
// CPU conversion does); bools are `v != 0`; integers truncate.
template <class T, class C> KILN_HD inline opmath_t<T> op_to(C v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return load(store<T>(float(v)));
  else
    return static_cast<T>(v);
}

// Math on compute types. Integer overloads exist where the op table allows
// integer operands (SAME rule); FLOAT ops only ever see float or double.
#define KILN_UNARY_MATH(name, f32fn, f64fn)                                    \
  KILN_HD inline float name(float a) { return ::f32fn(a); }                    \
  KILN_HD inline double name(double a) { return ::f64fn(a); }
KILN_UNARY_MATH(sin, sinf, sin)
KILN_UNARY_MATH(cos, cosf, cos)
KILN_UNARY_MATH(tan, tanf, tan)
KILN_UNARY_MATH(tanh, tanhf, tanh)
KILN_UNARY_MATH(exp, expf, exp)
KILN_UNARY_MATH(log, logf, log)
KILN_UNARY_MATH(sqrt, sqrtf, sqrt)
KILN_UNARY_MATH(erf, erff, erf)
#undef KILN_UNARY_MATH

// sin(a) and cos(a) of one value, as op_sin and op_cos give them: on the GPU
// one sincosf shares the argument reduction (CUDA's sincosf returns exactly
// sinf's and cosf's results; nvcc does not merge the two calls itself).
// Fused code calls this when a kernel needs both.
KILN_HD inline void sincos(float a, float &s, float &c) {
#if defined(__CUDA_ARCH__)
  ::sincosf(a, &s, &c);
#else
  s = ::sinf(a);
  c = ::cosf(a);
#endif
}
KILN_HD inline void sincos(double a, double &s, double &c) {
#if defined(__CUDA_ARCH__)
  ::sincos(a, &s, &c);
#else
  s = ::sin(a);
  c = ::cos(a);
#endif
}

KILN_HD inline float rsqrt(float a) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(a);
#else
  return 1.0f / ::sqrtf(a);
#endif
}
KILN_HD inline double rsqrt(double a) {
#if defined(__CUDA_ARCH__)
  return ::rsqrt(a);
#else
  return 1.0 / ::sqrt(a);
#endif
}

KILN_HD inline float abs(float a) { return ::fabsf(a); }
KILN_HD inline double abs(double a) { return ::fabs(a); }
KILN_HD inline int32_t abs(int32_t a) { return a < 0 ? -a : a; }
KILN_HD inline int64_t abs(int64_t a) { return a < 0 ? -a : a; }
KILN_HD inline bool abs(bool a) { return a; }

KILN_HD inline float pow(float a, float b) { return ::powf(a, b); }
KILN_HD inline double pow(double a, double b) { return ::pow(a, b); }
template <class I> KILN_HD inline I ipow(I base, I exp) {
  if (exp < 0) // as PyTorch: 1 for base 1, +-1 for base -1, else 0
    return base == 1 ? I(1) : base == -1 ? ((exp & 1) ? I(-1) : I(1)) : I(0);
  I r = 1;
  while (exp) {
    if (exp & 1)
      r *= base;
    base *= base;
    exp >>= 1;
  }
  return r;
}
KILN_HD inline int32_t pow(int32_t a, int32_t b) { return ipow(a, b); }
KILN_HD inline int64_t pow(int64_t a, int64_t b) { return ipow(a, b); }
KILN_HD inline bool pow(bool a, bool b) { return a || !b; }

// Rounding to an integral value (floor, ceil, trunc, round_even: halves to
// even, as torch.round and rint in the default rounding mode). Integers
// are integral already.
KILN_HD inline float floor(float a) { return ::floorf(a); }
KILN_HD inline double floor(double a) { return ::floor(a); }
template <class I> KILN_HD inline I floor(I a) { return a; }
KILN_HD inline float ceil(float a) { return ::ceilf(a); }
KILN_HD inline double ceil(double a) { return ::ceil(a); }
template <class I> KILN_HD inline I ceil(I a) { return a; }
KILN_HD inline float trunc(float a) { return ::truncf(a); }
KILN_HD inline double trunc(double a) { return ::trunc(a); }
template <class I> KILN_HD inline I trunc(I a) { return a; }
KILN_HD inline float round_even(float a) { return ::rintf(a); }
KILN_HD inline double round_even(double a) { return ::rint(a); }
template <class I> KILN_HD inline I round_even(I a) { return a; }

// Division rounded toward zero (trunc_div). Integers: C++'s `/`, with 0
// for a zero divisor and the most negative value / -1 wrapping, where C++
// is undefined.
KILN_HD inline float trunc_div(float a, float b) { return ::truncf(a / b); }
KILN_HD inline double trunc_div(double a, double b) { return ::trunc(a / b); }
template <class I> KILN_HD inline I trunc_div(I a, I b) {
  if constexpr (sizeof(I) == 1) {
    return a; // bool: never called (NO_B8)
  } else {
    if (b == 0)
      return I(0);
    if (b == I(-1))
      return I(0ull - static_cast<unsigned long long>(a));
    return a / b;
  }
}

// fmod: the remainder with a's sign. Integers: C++'s `%`, with 0 for a
// zero divisor and the most negative value % -1 giving 0, where C++ is
// undefined.
KILN_HD inline float fmod(float a, float b) { return ::fmodf(a, b); }
KILN_HD inline double fmod(double a, double b) { return ::fmod(a, b); }
template <class I> KILN_HD inline I fmod(I a, I b) {
  if constexpr (sizeof(I) == 1) {
    return a; // bool: never called (NO_B8)
  } else {
    if (b == 0 || b == I(-1))
      return I(0);
    return a % b;
  }
}

KILN_HD inline float atan2(float a, float b) { return ::atan2f(a, b); }
KILN_HD inline double atan2(double a, double b) { return ::atan2(a, b); }

// libm's by name here: kiln::log1p (a Tensor op of kiln/ops.h) would hide
// the global one from the formulas.
KILN_HD inline float log1p(float a) { return ::log1pf(a); }
KILN_HD inline double log1p(double a) { return ::log1p(a); }
KILN_HD inline float expm1(float a) { return ::expm1f(a); }
KILN_HD inline double expm1(double a) { return ::expm1(a); }
KILN_HD inline float log2(float a) { return ::log2f(a); }
KILN_HD inline double log2(double a) { return ::log2(a); }
KILN_HD inline float log10(float a) { return ::log10f(a); }
KILN_HD inline double log10(double a) { return ::log10(a); }

// NaN-propagating max/min (torch.maximum / torch.minimum).
template <class T> KILN_HD inline T maximum(T a, T b) { return (a != a || a > b) ? a : b; }
template <class T> KILN_HD inline T minimum(T a, T b) { return (a != a || a < b) ? a : b; }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// The same in one instruction where the form above takes four (a row max
// per element bounds 16-bit softmax). Only the sign of a zero result may
// differ: max.NaN orders -0 below +0.
__device__ inline float maximum(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
__device__ inline float minimum(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

template <class T> KILN_HD inline T relu(T a) { return a < T(0) ? T(0) : a; }
template <class T> KILN_HD inline T sigmoid(T a) { return T(1) / (T(1) + exp(-a)); }
template <class T> KILN_HD inline T gelu(T a) {
  return T(0.5) * a * (T(1) + erf(a * T(0.7071067811865476)));
}
template <class T> KILN_HD inline T gelu_tanh(T a) {
  T inner = T(0.7978845608028654) * (a + T(0.044715) * a * a * a);
  return T(0.5) * a * (T(1) + tanh(inner));
}

// Extremes of a compute type: the identities of amax and amin.
template <class A> KILN_HD constexpr A lowest() {
  if constexpr (sizeof(A) == 1)
    return false;
  else if constexpr (A(0.5) != A(0))
    return -A(INFINITY);
  else
    return sizeof(A) == 4 ? A(-2147483647 - 1) : A(-9223372036854775807LL - 1);
}
template <class A> KILN_HD constexpr A highest() {
  if constexpr (sizeof(A) == 1)
    return true;
  else if constexpr (A(0.5) != A(0))
    return A(INFINITY);
  else
    return sizeof(A) == 4 ? A(2147483647) : A(9223372036854775807LL);
}

// argmax's accumulator: the best value so far and its index (-1: none).
template <class A> struct ArgAcc {
  A value;
  int64_t index;
};
// NaN beats everything (the first NaN wins); among equal values the
// smaller index wins, so the result does not depend on combine order.
template <class A>
KILN_HD inline ArgAcc<A> argmax_combine(ArgAcc<A> a, ArgAcc<A> b) {
  if (b.index < 0)
    return a;
  if (a.index < 0)
    return b;
  bool a_nan = a.value != a.value, b_nan = b.value != b.value;
  if (a_nan || b_nan) {
    if (a_nan && b_nan)
      return a.index <= b.index ? a : b;
    return a_nan ? a : b;
  }
  if (a.value != b.value)
    return a.value > b.value ? a : b;
  return a.index <= b.index ? a : b;
}

// The accumulator of sum_sq_dev, a reduction the compiler makes of
// sum((x - mean(x))^2) over a whole tensor (kiln::ir::Op::SumSqDev; var(x)
// reduces it): `n` elements' mean, shift + mean, and the sum of their squared
// deviations from it, m2. An element updates it by Welford's recurrence, a
// partial result by Chan, Golub and LeVeque's merge: one pass over the data
// where the decomposition takes two (the mean, then the squares), and no
// cancellation (as sum(x^2) - sum(x)^2 / n would have). The recurrence
// runs on x - shift, shift the first element: the running mean rounds to
// the spread of the data, not to its offset (f32 rows of mean 10^4 and
// deviation 1 lost 1e-3 of their m2 over 7 elements without it; with it,
// 2e-7 at every length and offset tried, where a two-pass f32 sum loses
// 1e-5 over 32000 elements: test/unit/runtime_reduce.cpp). n is kept in A,
// as Triton keeps its weight: exact in f32 to 2^24 elements per partial.
template <class A> struct MomentAcc {
  A shift, mean, m2, n;
};
template <class A> KILN_HD inline MomentAcc<A> init_sum_sq_dev() {
  return {A(0), A(0), A(0), A(0)};
}
// One element x. The division only moves the running mean, the point the
// next deviations are taken from; on the GPU an f32 one is MUFU.RCP's
// (relative error 2^-22 of the step d / n) instead of IEEE division's dozen
// instructions.
template <class A>
KILN_HD inline MomentAcc<A> combine_sum_sq_dev(MomentAcc<A> a, A x) {
  const A shift = a.n == A(0) ? x : a.shift;
  const A y = x - shift;
  const A n = a.n + A(1);
  const A d = y - a.mean;
#ifdef __CUDA_ARCH__
  A step;
  if constexpr (sizeof(A) == 4)
    step = __fdividef(d, n);
  else
    step = d / n;
#else
  const A step = d / n;
#endif
  const A mean = a.mean + step;
  return {shift, mean, a.m2 + d * (y - mean), n};
}
// Two partial results (either may be empty); the result keeps a's shift.
// b's weight in the merge, b.n / n, by MUFU.RCP's division in f32 on the
// GPU (relative error 2^-22, in the size of a step that is itself a
// rounding's worth of the result at most): the loop kernel merges a
// thread's slots every kTiles slots, and a block's threads in a tree.
template <class A>
KILN_HD inline MomentAcc<A> combine_sum_sq_dev(MomentAcc<A> a,
                                               MomentAcc<A> b) {
  if (b.n == A(0))
    return a;
  if (a.n == A(0))
    return b;
  const A n = a.n + b.n;
#ifdef __CUDA_ARCH__
  A f;
  if constexpr (sizeof(A) == 4)
    f = __fdividef(b.n, n);
  else
    f = b.n / n;
#else
  const A f = b.n / n;
#endif
  const A d = (b.shift - a.shift) + (b.mean - a.mean);
  return {a.shift, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f, n};
}

// The op table's formulas.
#define KILN_OP_1(name, formula)                                               \
  template <class A> KILN_HD inline auto op_##name(A a) { return formula; }
#define KILN_OP_2(name, formula)                                               \
  template <class A, class B> KILN_HD inline auto op_##name(A a, B b) {        \
    return formula;                                                            \
  }
#define KILN_OP_3(name, formula)                                               \
  template <class A, class B, class C>                                         \
  KILN_HD inline auto op_##name(A a, B b, C c) {                               \
    return formula;                                                            \
  }
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,         \
                       formula, decomposition)                                 \
  KILN_OP_##arity(name, formula)
#define KILN_REDUCTION(Name, name, rule, identity, combine)                    \
  template <class A> KILN_HD inline auto init_##name() { return identity; }    \
  template <class A> KILN_HD inline auto combine_##name(A a, A b) {            \
    return combine;                                                            \
  }
#include <kiln/ops.def>
#undef KILN_OP_1
#undef KILN_OP_2
#undef KILN_OP_3

// exp of a value the kernel rounds to f16 or bf16 (codegen picks it for an
// exp node of those dtypes): on the GPU, one MUFU.EX2 of x log2(e)
// (ex2.approx.ftz.f32: relative error about 2^-22, plus |x| 2^-24 from the
// product, where f16 rounds at 2^-11 and bf16 at 2^-8; results below 2^-126,
// bf16's subnormals, flush to 0), where expf's accurate argument reduction
// and subnormal handling cost eight more instructions, which bound 16-bit
// softmax. Elsewhere, and for a double, exp.
template <class A> KILN_HD inline auto op_exp_approx(A a) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<A, float>) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a * 1.44269504088896341f));
    return r;
  } else
#endif
    return op_exp(a);
}

// a / b and 1 / a of values the kernel rounds to f16 or bf16 (codegen
// picks them for div and reciprocal nodes of those dtypes, as exp_approx):
// on the GPU div.full.f32 (relative error at most 2^-22; a divisor above
// 2^126 in magnitude gives 0, below bf16's normal range), branch-free.
// IEEE division takes a range check and a branch per element, each a
// convergence region, so a thread's eight elements ran one after another:
// silu(a) * b over 16 x 11008 bf16 (a LLaMA decode's MLP) took 3.04 us on
// an H200 against Inductor's 2.34 (Triton divides f32 by div.full.f32).
// Elsewhere, and for a double, the IEEE division.
template <class A, class B> KILN_HD inline auto op_div_approx(A a, B b) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<A, float> && std::is_same_v<B, float>) {
    float r;
    asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
  } else
#endif
    return op_div(a, b);
}
template <class A> KILN_HD inline auto op_reciprocal_approx(A a) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<A, float>)
    return op_div_approx(1.0f, a);
  else
#endif
    return op_reciprocal(a);
}

} // namespace scalar
} // namespace kiln
