// The compiled CPU loops' vector math built for AVX2 (the 8-float and
// 4-double forms), against long double in ULPs (Inputs/vecmath_cases.h).
// REQUIRES: cpu-avx2, cpu-fma
// RUN: %kiln_cxx -mavx2 -mfma -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: sin f32: max
// CHECK: 30 cases, 0 mismatches
#include "vecmath_cases.h"

int main() { return vecmath_cases::run("avx2"); }
