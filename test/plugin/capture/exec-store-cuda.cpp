// Tensor::copy_ into a tensor argument or a view of one inside compiled
// functions, on a CUDA GPU (test/Inputs/store_cases.h).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// RUN: env KILN_FORCE_GUARD_FAILURE=1 %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: copy_ of [3, 6] into [2, 6] raises
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "store_cases.h"

int main() { return run_store(kiln::Device::cuda(0)); }
