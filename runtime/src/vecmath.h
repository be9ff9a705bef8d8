// vecmath.h - the runtime's direct calls of its vector math (kiln/vecmath.def).
//
// The eager CPU kernels reach most of SLEEF through clang's vectoriser
// (-fveclib=libmvec, vecmath_128.cpp), but LLVM 19 knows no vector form of
// tanh or erf; their contiguous kernels call the 128-bit functions here
// directly, a vector at a time, so every element gets the same 1.0-ULP
// function. Empty where there is no vector math (not x86-64).
#pragma once

#include <kiln/ops.h>

#include <type_traits>

namespace kiln::detail {

// Whether a row whose SLEEF form pays from `bits` (kiln/vecmath.def; 0:
// never) uses it on registers of `width` bits, or glibc's scalar function.
constexpr bool uses_sleef(int bits, int width) {
  return bits != 0 && bits <= width;
}

#if defined(__x86_64__)
typedef float vm_f32x4 __attribute__((vector_size(16)));
typedef double vm_f64x2 __attribute__((vector_size(16)));
extern "C" {
#define KILN_VM_DECLARE_1(name)                                                \
  vm_f32x4 kiln_vm_##name##_f32x4(vm_f32x4);                                   \
  vm_f64x2 kiln_vm_##name##_f64x2(vm_f64x2);
#define KILN_VM_DECLARE_2(name)                                                \
  vm_f32x4 kiln_vm_##name##_f32x4(vm_f32x4, vm_f32x4);                         \
  vm_f64x2 kiln_vm_##name##_f64x2(vm_f64x2, vm_f64x2);
#define KILN_VECMATH(name, arity, f32, f64, f32bits, f64bits)                  \
  KILN_VM_DECLARE_##arity(name)
#include <kiln/vecmath.def>
#undef KILN_VECMATH
#undef KILN_VM_DECLARE_1
#undef KILN_VM_DECLARE_2
}

// The narrowest width at which each row's SLEEF form is used (0: never).
struct VecMathBits {
  int f32, f64;
};
#define KILN_VECMATH(name, arity, f32, f64, f32bits, f64bits)                  \
  inline constexpr VecMathBits kVecMath_##name{f32bits, f64bits};
#include <kiln/vecmath.def>
#undef KILN_VECMATH

// The 128-bit vector form of unary op Op on compute type A, when its
// eager kernel calls one directly (and it beats the scalar function at 128
// bits); nullptr otherwise.
template <OpId Op, class A> constexpr auto direct_vector_math() {
  constexpr bool f = std::is_same_v<A, float>, d = std::is_same_v<A, double>;
  if constexpr (Op == OpId::Tanh && f && uses_sleef(kVecMath_tanh.f32, 128))
    return &kiln_vm_tanh_f32x4;
  else if constexpr (Op == OpId::Tanh && d && uses_sleef(kVecMath_tanh.f64, 128))
    return &kiln_vm_tanh_f64x2;
  else if constexpr (Op == OpId::Erf && f && uses_sleef(kVecMath_erf.f32, 128))
    return &kiln_vm_erf_f32x4;
  else if constexpr (Op == OpId::Erf && d && uses_sleef(kVecMath_erf.f64, 128))
    return &kiln_vm_erf_f64x2;
  else
    return nullptr;
}
#else
template <OpId Op, class A> constexpr auto direct_vector_math() { return nullptr; }
#endif

} // namespace kiln::detail
