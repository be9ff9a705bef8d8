// sum-accuracy.cpp's cases on a CUDA GPU: the compiled sums (rows, split
// and combine kernels) at least as close to float64 as eager's CUDA sums.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -I%S/../Inputs -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../Inputs/fuzz_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: RESULT fail
// COMPILED: CASE 0 STATS compiled=2 fallback=0
// CHECK: CASE 0 RESULT ok
// CHECK: CASE 1 RESULT ok
// CHECK: CASE 2 RESULT ok
// CHECK: CASE 3 RESULT ok
#define FUZZ_CUDA 1
#include "sum-accuracy.cpp"
