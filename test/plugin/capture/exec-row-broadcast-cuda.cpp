// Operands broadcast across a fused reduction's rows in any layout, on a
// CUDA GPU: the cases of exec-row-broadcast.cpp, in every launch mode
// (rows in registers, re-read rows, rows split over blocks).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "row_broadcast_cases.h"

int main() { return run_row_broadcast(kiln::Device::cuda(0)); }
