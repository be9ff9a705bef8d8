// Matrix products as graph ops, on the CPU (OpenBLAS): each a library GEMM
// with its bias, residual and activation fused where the library can, the
// work around it as fused kernels; compiled vs eager vs float64, kernel
// counts asserted (test/Inputs/product_cases.h).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: shapes that do not fit raise
// CHECK: ok: bmm's batches must be equal
// CHECK: ok: bmm takes 3-D operands
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "product_cases.h"

int main() { return run_products(kiln::Device::cpu()); }
