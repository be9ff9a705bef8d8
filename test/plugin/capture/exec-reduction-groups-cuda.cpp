// Functions one reduction kernel cannot compute, as several kernels in one
// compiled call, on a CUDA GPU: the cases of exec-reduction-groups.cpp, in
// every launch mode (rows in registers, re-read rows, rows split over
// blocks).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: shapes that do not broadcast raise
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "reduction_groups_cases.h"

int main() { return run_reduction_groups(kiln::Device::cuda(0)); }
