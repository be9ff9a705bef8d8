// kiln::floor, ceil, trunc and round on a CUDA GPU: the cases of
// exec-rounding.cpp (test/Inputs/rounding_cases.h), one fused kernel each.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "rounding_cases.h"

int main() { return run_rounding(kiln::Device::cuda(0)); }
