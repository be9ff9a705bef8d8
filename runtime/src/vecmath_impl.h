// vecmath_impl.h - Kiln's vector math on one register width (kiln/vecmath.def
// says what and why): for each row of the table, kiln_vm_<name>_f32x<N> and
// kiln_vm_<name>_f64x<N/2>, exported wrappers over SLEEF's 1.0-ULP functions
// that the plugin's generated loops call (the user links libkiln_rt, nothing
// more, and gets SLEEF whatever else the process has loaded). SLEEF's
// untargeted entry points (Sleef_sinf4_u10, no ISA suffix) choose the best
// code for the CPU at the first call.
//
// clang passes a 256- or 512-bit vector in a register only in a TU built for
// AVX or AVX-512 (a target attribute does not change the ABI), so each
// register width has a TU of its own, built for the ISA its callers have:
// vecmath_128.cpp (the library's own flags), vecmath_256.cpp (-mavx),
// vecmath_512.cpp (-mavx512f). Each defines KILN_VM_F32 and KILN_VM_F64
// (the lane counts) and includes this.
#pragma once
#if defined(__x86_64__)

#include "kiln/export.h"

namespace {
typedef float vf32 __attribute__((vector_size(KILN_VM_F32 * 4)));
typedef double vf64 __attribute__((vector_size(KILN_VM_F64 * 8)));
} // namespace

#define KILN_VM_PARAMS_1(V) V a
#define KILN_VM_PARAMS_2(V) V a, V b
#define KILN_VM_ARGS_1 a
#define KILN_VM_ARGS_2 a, b

#define KILN_VM_CAT5(a, b, c, d, e) KILN_VM_CAT5_(a, b, c, d, e)
#define KILN_VM_CAT5_(a, b, c, d, e) a##b##c##d##e
// Sleef_<name><f|d><lanes>_u10
#define KILN_VM_SLEEF(name, t, lanes) KILN_VM_CAT5(Sleef_, name, t, lanes, _u10)

// kiln_vm_<name>_<f32|f64>x<lanes>
#define KILN_VM_TYPE_f _f32
#define KILN_VM_TYPE_d _f64
#define KILN_VM_WIDTH(name, arity, V, t, lanes)                                \
  extern "C" V KILN_VM_SLEEF(name, t, lanes)(KILN_VM_PARAMS_##arity(V));       \
  extern "C" KILN_EXPORT V KILN_VM_CAT5(kiln_vm_, name, KILN_VM_TYPE_##t, x,    \
                                        lanes)(KILN_VM_PARAMS_##arity(V)) {    \
    return KILN_VM_SLEEF(name, t, lanes)(KILN_VM_ARGS_##arity);                \
  }
#define KILN_VECMATH(name, arity, f32fn, f64fn, f32bits, f64bits)              \
  KILN_VM_WIDTH(name, arity, vf32, f, KILN_VM_F32)                             \
  KILN_VM_WIDTH(name, arity, vf64, d, KILN_VM_F64)
#include "kiln/vecmath.def"
#undef KILN_VECMATH

#endif // __x86_64__
