// Tensor arguments of their own dtype ([[kiln::dtype]]) on a CUDA GPU: the
// cases of exec-arg-dtypes.cpp (test/Inputs/arg_dtypes_cases.h), each one
// fused kernel.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "arg_dtypes_cases.h"

int main() { return run_arg_dtypes(kiln::Device::cuda(0)); }
