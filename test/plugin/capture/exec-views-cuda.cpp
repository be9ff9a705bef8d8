// Layout ops inside compiled functions, on a CUDA GPU: the cases of
// exec-views.cpp.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: views handed out share storage and strides as eager's
// CHECK: ok: a view eager raises on raises
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "views_cases.h"

int main() { return run_views(kiln::Device::cuda(0)); }
