// kernel_types.h - building blocks of the eager element-wise kernels, shared
// by the CPU loops (pointwise_cpu*.cpp, copy_cpu.cpp) and the CUDA kernels
// (cuda/*.cu), so both evaluate the op table (kiln/ops.def) the same way.
#pragma once

#include <kiln/kernel_abi.h>
#include <kiln/ops.h>
#include <kiln/scalar.h>

#include <type_traits>

namespace kiln::detail {

enum class Rule : uint8_t { SAME, FLOAT, COMPARE, WHERE };

template <DType> struct CTypeOf;
#define KILN_X(name, ctype, size)                                              \
  template <> struct CTypeOf<DType::name> {                                    \
    using type = ctype;                                                        \
  };
KILN_DTYPES(KILN_X)
#undef KILN_X
template <DType D> using ctype_t = typename CTypeOf<D>::type;

template <class T> constexpr DType dtype_of();
#define KILN_X(name, ctype, size)                                              \
  template <> constexpr DType dtype_of<ctype>() { return DType::name; }
KILN_DTYPES(KILN_X)
#undef KILN_X

// Calls f.template operator()<T>() with the C type of a runtime dtype.
template <class F> void dispatch_dtype(DType d, F &&f) {
  switch (d) {
#define KILN_X(name, ctype, size)                                              \
  case DType::name:                                                            \
    f.template operator()<ctype>();                                            \
    return;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
}

// One entry of the op table: arity, type rule, and the formula of
// kiln/scalar.h (the only definition of each formula).
template <OpId> struct OpInfo;
#define KILN_POINTWISE(Name, name, ar, rl, traits, identity, cxx, formula,     \
                       decomposition)                                          \
  template <> struct OpInfo<OpId::Name> {                                      \
    static constexpr int arity = ar;                                           \
    static constexpr Rule rule = Rule::rl;                                     \
    template <class... A> KILN_HD static auto apply(A... a) {                  \
      return scalar::op_##name(a...);                                          \
    }                                                                          \
  };
#include <kiln/ops.def>

template <class T> struct FloatOf {
  using type = T;
};
template <> struct FloatOf<int32_t> {
  using type = float;
};
template <> struct FloatOf<int64_t> {
  using type = float;
};
template <> struct FloatOf<bool> {
  using type = float;
};

// Types of one instantiation of op `Op`: its tensor value operands are
// stored as `In` and promote to `Common` (In differs from Common only for a
// weak scalar of a higher category, e.g. an i32 tensor times 2.5).
template <OpId Op, class In, class Common> struct PwTypes {
  using Info = OpInfo<Op>;
  static constexpr Rule rule = Info::rule;
  static constexpr int arity = Info::arity;
  using Out = std::conditional_t<
      rule == Rule::FLOAT, typename FloatOf<Common>::type,
      std::conditional_t<rule == Rule::COMPARE, bool, Common>>;
  using C = scalar::opmath_t<std::conditional_t<rule == Rule::FLOAT, Out, Common>>;
  // WHERE's operand 0 is the b8 condition.
  template <int K>
  using Src = std::conditional_t<rule == Rule::WHERE && K == 0, bool, In>;
  template <int K>
  using Arg = std::conditional_t<rule == Rule::WHERE && K == 0, bool, C>;
};

// Storage (or compute) value -> storage type `To`, through the compute type.
template <class To, class From> KILN_HD inline To convert(From v) {
  return scalar::store<To>(scalar::op_to<To>(scalar::load(v)));
}

// Arguments of an element-wise op kernel, passed by value to CUDA kernels.
struct PwArgs {
  void *out = nullptr;
  const void *in[3] = {};
  double scalar[3] = {}; // weak scalar operands, converted in the kernel
  unsigned scalar_mask = 0; // bit k: operand k is a scalar, not a tensor
};

// Arguments of a converting copy (dst = convert(src)).
struct CopyArgs {
  void *out = nullptr;
  const void *in = nullptr;
};

// One element-wise op over n output elements, as the host prepared it.
// `calc` maps an output index to the offsets of (out, operand 0, 1, 2);
// `contiguous` says every tensor operand is contiguous with the output's
// shape (calc is then the trivial rank-1 map).
struct PwLaunch {
  OpId op;
  DType in, common;
  PwArgs args;
  OffsetCalc<4> calc;
  int64_t n = 0;
  bool contiguous = false;
  int device = 0; // CUDA device index (CUDA launches only)
};

// dst = convert(src) over n elements; calc maps to (dst, src) offsets.
struct CopyLaunch {
  DType src, dst;
  CopyArgs args;
  OffsetCalc<2> calc;
  int64_t n = 0;
  bool contiguous = false;
  int device = 0;
};

// Calls f.template operator()<T>() for every storage type.
template <class F> void for_each_ctype(F &&f) {
#define KILN_X(name, ctype, size) f.template operator()<ctype>();
  KILN_DTYPES(KILN_X)
#undef KILN_X
}

// The (In, Common) storage-type pairs each op is instantiated for: every
// dtype with itself, plus, for ops that take weak scalars and do not turn
// integers into floats anyway, an integer or bool tensor with a scalar of
// a higher category (i32 * 2.5: In i32, Common f32; b8 + 1: In b8, Common
// i64). Other mixes convert operands to Common first.
template <OpId Op, class F> void for_each_combo(F &&f) {
  for_each_ctype([&]<class T>() { f.template operator()<T, T>(); });
  if constexpr (OpInfo<Op>::rule != Rule::FLOAT && OpInfo<Op>::arity > 1) {
    f.template operator()<bool, float>();
    f.template operator()<int32_t, float>();
    f.template operator()<int64_t, float>();
    f.template operator()<bool, int64_t>();
  }
}

// Eager op groups compiled in separate files (parallel builds).
inline constexpr int kPwGroups = 4;

} // namespace kiln::detail
