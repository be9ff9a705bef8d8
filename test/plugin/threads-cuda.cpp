// Compiled functions from 16 threads at once on a CUDA GPU, the first call
// included: the first calls load the embedded fatbin and look the kernels
// up concurrently (Inputs/threads_cases.h).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: MISMATCH
// COMPILED: compiled=1600 fallback=0 (of 1600)
// FORCED: compiled=0 fallback={{[0-9]+}} (of 1600)
// CHECK: 16 threads, 0 mismatches
#include "threads_cases.h"

int main() { return threads_cases::run(20, kiln::Device::cuda()); }
