// Multi-output fusion on the CPU: an Adam step's m, v and p from one fused
// loop, two results of different inputs from one loop when their shapes
// agree and from two when they do not, (mean, rstd, y) from one row loop.
// Each case asserts its fast path ran and how many kernels it launched.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// The same with every fast path running the captured graph op by op.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// The remark says how many kernels run, and how many when the shapes differ.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off %kiln_remarks %s 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: kiln: compiled 'adam_assign': {{.*}} fused into 1 kernel (3 when the outputs' shapes differ)
// REMARK: remark: kiln: compiled 'two': {{.*}} fused into 1 kernel (2 when the outputs' shapes differ)
// REMARK: remark: kiln: compiled 'normalize': {{.*}} fused into 1 kernel (
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "multi_output_cases.h"

int main() { return run_multi_output(kiln::Device::cpu()); }
