// kiln/dtype.h - element types and PyTorch's type-promotion rules.
//
// Shared by the runtime (eager ops), the compiler (type inference) and
// generated code, so that all three agree on what `x * 2.0` produces.
// Usable from host C++ and from nvcc device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__
#else
#define KILN_HD
#endif

namespace kiln {

#define KILN_DTYPES(X)                                                         \
  X(f32, float, 4)                                                             \
  X(f16, half, 2)                                                              \
  X(bf16, bfloat16, 2)                                                         \
  X(f64, double, 8)                                                            \
  X(i32, int32_t, 4)                                                           \
  X(i64, int64_t, 8)                                                           \
  X(b8, bool, 1)

enum class DType : uint8_t {
#define KILN_X(name, ctype, size) name,
  KILN_DTYPES(KILN_X)
#undef KILN_X
};
inline constexpr int kNumDTypes = 7;

#define KILN_X(name, ctype, size) inline constexpr DType name = DType::name;
KILN_DTYPES(KILN_X)
#undef KILN_X

// torch.finfo(dtype).eps of the floating dtypes (rms_norm's default eps).
constexpr double machine_epsilon(DType t) {
  switch (t) {
  case DType::f16:
    return 0.0009765625; // 2^-10
  case DType::bf16:
    return 0.0078125; // 2^-7
  case DType::f64:
    return 2.220446049250313e-16; // 2^-52
  default:
    return 1.1920928955078125e-07; // 2^-23
  }
}

KILN_HD constexpr int element_size(DType t) {
  switch (t) {
#define KILN_X(name, ctype, size)                                              \
  case DType::name:                                                            \
    return size;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return 0;
}

constexpr const char *dtype_name(DType t) {
  switch (t) {
#define KILN_X(name, ctype, size)                                              \
  case DType::name:                                                            \
    return #name;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return "?";
}

KILN_HD constexpr bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 ||
         t == DType::f64;
}
KILN_HD constexpr bool is_integral(DType t) {
  return t == DType::i32 || t == DType::i64;
}

// Whether an op's result of dtype `from` may be written into a tensor of
// dtype `to` (an in-place op, an out= argument), as PyTorch's canCast: no
// floating to integer or bool, no integer to bool.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to))
    return false;
  return !(is_integral(from) && to == DType::b8);
}

// Category order used by promotion: bool < integer < floating.
constexpr int dtype_category(DType t) {
  return t == DType::b8 ? 0 : is_integral(t) ? 1 : 2;
}

// Promotion between two tensors (both "strong"), as torch.promote_types.
constexpr DType promote_types(DType a, DType b) {
  if (a == b)
    return a;
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 1) // i32 vs i64
    return DType::i64;
  // Floating: f16 and bf16 together promote to f32.
  if ((a == DType::f16 && b == DType::bf16) ||
      (a == DType::bf16 && b == DType::f16))
    return DType::f32;
  auto rank = [](DType t) {
    return t == DType::f64 ? 3 : t == DType::f32 ? 2 : 1;
  };
  return rank(a) >= rank(b) ? a : b;
}

// A C++ scalar operand (`x * 2.0`, `x + n`) is "weak", like a Python
// number in PyTorch: it only changes the result type when it is of a
// higher category than the tensor. A floating scalar with an integer or
// bool tensor gives the default float type (f32); an integer scalar with
// a bool tensor gives i64.
constexpr DType promote_with_scalar(DType tensor, DType scalar) {
  int ct = dtype_category(tensor), cs = dtype_category(scalar);
  if (cs <= ct)
    return tensor;
  return cs == 2 ? DType::f32 : DType::i64;
}

// Type of the result of a "float op" (sin, exp, true division, ...):
// integers and bools compute in the default float type.
constexpr DType to_floating(DType t) { return is_floating(t) ? t : DType::f32; }

} // namespace kiln
