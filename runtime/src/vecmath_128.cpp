// Kiln's vector math on 128-bit registers (vecmath_impl.h), and the vector
// math of the runtime's own eager CPU kernels.
//
// The eager kernels are built with -fveclib=libmvec (runtime/CMakeLists.txt):
// clang's loop vectoriser then calls glibc's vector ABI names for the libm
// functions it knows (sin, cos, tan, exp, log, pow: _ZGVbN4v_sinf for 4
// floats, _ZGVdN8v_sinf for 8, ...). The definitions here are hidden, so
// those calls bind to SLEEF inside libkiln_rt without taking the names from
// the rest of the process.
//
// LLVM 19 maps 8 floats (4 doubles) to the AVX2 forms ('d') even in code
// built without AVX, where the vector travels split over two SSE registers
// (xmm0:xmm1 in and out, the second operand of pow in xmm2:xmm3), not in
// one ymm register as glibc's ABI has it; it does so for loops that widen
// bf16, f16 or bool inputs. Built without AVX, the 'd' forms here therefore
// take and return that split vector, computing it as two 128-bit halves.
//
// Where SLEEF's form is slower than glibc's scalar function at a width
// (kiln/vecmath.def's bits columns), the form loops over the lanes with the
// scalar function instead.
#define KILN_VM_F32 4
#define KILN_VM_F64 2
#include "vecmath.h"
#include "vecmath_impl.h"

#include <math.h>

#if defined(__x86_64__)

#define KILN_VM_GNU_1 v
#define KILN_VM_GNU_2 vv
// _ZGV<isa>N<lanes><v|vv>_<libm name>
#define KILN_VM_GNU(isa, lanes, arity, fn)                                     \
  KILN_VM_CAT5(_ZGV##isa##N, lanes, KILN_VM_GNU_##arity, _, fn)
#define KILN_VM_HIDDEN extern "C" __attribute__((visibility("hidden")))

// Lane by lane, glibc's scalar function: where SLEEF's form is slower at
// this width (the bits column of kiln/vecmath.def).
#define KILN_VM_SCALAR_1(fn, k) ::fn(a[k])
#define KILN_VM_SCALAR_2(fn, k) ::fn(a[k], b[k])
#define KILN_VM_BODY(name, arity, V, t, lanes, fn, bits, width)                \
  if constexpr (kiln::detail::uses_sleef(bits, width))                         \
    return KILN_VM_SLEEF(name, t, lanes)(KILN_VM_ARGS_##arity);                \
  else {                                                                       \
    V r;                                                                       \
    for (int k = 0; k < lanes; ++k)                                            \
      r[k] = KILN_VM_SCALAR_##arity(fn, k);                                    \
    return r;                                                                  \
  }

// 'b' (SSE): the 128-bit SLEEF functions, or glibc's scalar ones.
#define KILN_VM_GNU_B(name, arity, V, t, lanes, fn, bits)                      \
  KILN_VM_HIDDEN V KILN_VM_GNU(b, lanes, arity, fn)(KILN_VM_PARAMS_##arity(V)) { \
    KILN_VM_BODY(name, arity, V, t, lanes, fn, bits, 128)                      \
  }

#if defined(__AVX__)
// Built for AVX: callers pass ymm registers, as glibc's ABI has it.
namespace {
typedef float vf32x8 __attribute__((vector_size(32)));
typedef double vf64x4 __attribute__((vector_size(32)));
} // namespace
#define KILN_VM_GNU_D(name, arity, V, t, lanes, fn, bits)                      \
  extern "C" V KILN_VM_SLEEF(name, t, lanes)(KILN_VM_PARAMS_##arity(V));       \
  KILN_VM_HIDDEN V KILN_VM_GNU(d, lanes, arity, fn)(KILN_VM_PARAMS_##arity(V)) { \
    KILN_VM_BODY(name, arity, V, t, lanes, fn, bits, 256)                      \
  }
#define KILN_VM_GNU_D_F32(name, arity, fn, bits)                               \
  KILN_VM_GNU_D(name, arity, vf32x8, f, 8, fn, bits)
#define KILN_VM_GNU_D_F64(name, arity, fn, bits)                               \
  KILN_VM_GNU_D(name, arity, vf64x4, d, 4, fn, bits)
#else
// Built without AVX: two calls of the 'b' form above (SLEEF's 128-bit
// function or the scalar loop), the halves kept on the stack (16-byte
// aligned: 8 mod 16 on entry, less 40 or 56).
#define KILN_VM_STR(x) KILN_VM_STR_(x)
#define KILN_VM_STR_(x) #x
#define KILN_VM_SPLIT_1(half)                                                  \
  "sub $40, %rsp\n\t"                                                          \
  "movaps %xmm1, 16(%rsp)\n\t"                                                 \
  "call " half "@PLT\n\t"                                                      \
  "movaps %xmm0, (%rsp)\n\t"                                                   \
  "movaps 16(%rsp), %xmm0\n\t"                                                 \
  "call " half "@PLT\n\t"                                                      \
  "movaps %xmm0, %xmm1\n\t"                                                    \
  "movaps (%rsp), %xmm0\n\t"                                                   \
  "add $40, %rsp\n\t"                                                          \
  "ret"
#define KILN_VM_SPLIT_2(half)                                                  \
  "sub $56, %rsp\n\t"                                                          \
  "movaps %xmm1, 16(%rsp)\n\t"                                                 \
  "movaps %xmm3, 32(%rsp)\n\t"                                                 \
  "movaps %xmm2, %xmm1\n\t"                                                    \
  "call " half "@PLT\n\t"                                                      \
  "movaps %xmm0, (%rsp)\n\t"                                                   \
  "movaps 16(%rsp), %xmm0\n\t"                                                 \
  "movaps 32(%rsp), %xmm1\n\t"                                                 \
  "call " half "@PLT\n\t"                                                      \
  "movaps %xmm0, %xmm1\n\t"                                                    \
  "movaps (%rsp), %xmm0\n\t"                                                   \
  "add $56, %rsp\n\t"                                                          \
  "ret"
#define KILN_VM_GNU_D_SPLIT(arity, lanes, half_lanes, fn)                      \
  KILN_VM_HIDDEN __attribute__((naked)) void KILN_VM_GNU(d, lanes, arity,      \
                                                         fn)() {               \
    asm(KILN_VM_SPLIT_##arity(                                                 \
        KILN_VM_STR(KILN_VM_GNU(b, half_lanes, arity, fn))));                  \
  }
#define KILN_VM_GNU_D_F32(name, arity, fn, bits)                               \
  KILN_VM_GNU_D_SPLIT(arity, 8, 4, fn)
#define KILN_VM_GNU_D_F64(name, arity, fn, bits)                               \
  KILN_VM_GNU_D_SPLIT(arity, 4, 2, fn)
#endif

#define KILN_VECMATH(name, arity, f32fn, f64fn, f32bits, f64bits)              \
  KILN_VM_GNU_B(name, arity, vf32, f, 4, f32fn, f32bits)                       \
  KILN_VM_GNU_B(name, arity, vf64, d, 2, f64fn, f64bits)                       \
  KILN_VM_GNU_D_F32(name, arity, f32fn, f32bits)                               \
  KILN_VM_GNU_D_F64(name, arity, f64fn, f64bits)
#include "kiln/vecmath.def"
#undef KILN_VECMATH

#endif // __x86_64__
