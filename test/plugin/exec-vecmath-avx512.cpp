// The compiled CPU loops' vector math built for AVX-512, preferring
// 512-bit vectors (the 16-float and 8-double forms), against long double
// in ULPs (Inputs/vecmath_cases.h).
// REQUIRES: cpu-avx512f
// RUN: %kiln_cxx -mavx512f -mfma -mprefer-vector-width=512 -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: sin f32: max
// CHECK: 30 cases, 0 mismatches
#include "vecmath_cases.h"

int main() { return vecmath_cases::run("avx512"); }
