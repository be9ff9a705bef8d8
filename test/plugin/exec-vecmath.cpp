// The compiled CPU loops' vector math at the x86-64 baseline (SSE2: the
// 4-float and 2-double forms), against long double in ULPs
// (Inputs/vecmath_cases.h). exec-vecmath-avx2.cpp and -avx512.cpp run the
// same cases built for the wider registers.
// REQUIRES: x86_64
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: sin f32: max
// CHECK: 30 cases, 0 mismatches
#include "vecmath_cases.h"

int main() { return vecmath_cases::run("sse2"); }
