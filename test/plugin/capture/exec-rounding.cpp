// kiln::floor, ceil, trunc and round on the CPU, compiled (one fused loop
// each) against eager (cases: test/Inputs/rounding_cases.h).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "rounding_cases.h"

int main() { return run_rounding(kiln::Device::cpu()); }
