// Operands broadcast across a fused reduction's rows in any layout (masks
// and biases of [T, T] beside [B, H, T, T] scores, per-head scales, a [B,
// 1, D] gain), on the CPU: one kernel each, no guard failure, compiled vs
// eager vs float64 (test/Inputs/row_broadcast_cases.h).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "row_broadcast_cases.h"

int main() { return run_row_broadcast(kiln::Device::cpu()); }
