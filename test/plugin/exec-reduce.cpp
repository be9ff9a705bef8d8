// Fused reductions on the CPU: compiled vs eager vs float64, every mode.
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "reduce_cases.h"

int main() {
  reduce_cases::run_all(kiln::Device::cpu());
  return exec_compare::summary();
}
