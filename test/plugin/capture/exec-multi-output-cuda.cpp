// Multi-output fusion on a CUDA GPU: the cases of exec-multi-output.cpp
// (test/Inputs/multi_output_cases.h), with their kernel counts.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "multi_output_cases.h"

int main() { return run_multi_output(kiln::Device::cuda(0)); }
