// Matrix products as graph ops, on a CUDA GPU (cuBLASLt, its epilogues):
// the cases of exec-products.cpp.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: shapes that do not fit raise
// CHECK: ok: bmm's batches must be equal
// CHECK: ok: bmm takes 3-D operands
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "product_cases.h"

int main() { return run_products(kiln::Device::cuda(0)); }
