// Host scalar expressions on a CUDA GPU: the cases of exec-host-scalars.cpp
// (test/Inputs/host_scalar_cases.h), computed on the host once per call
// and passed to the one fused kernel.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "host_scalar_cases.h"

int main() { return run_host_scalars(kiln::Device::cuda(0)); }
