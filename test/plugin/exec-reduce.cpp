// Fused reductions on the CPU: compiled vs eager vs float64, every mode.
// CPU code only (cuda=off): exec-cuda-reduce.cpp compiles and runs the same
// cases' 1472 CUDA kernels, which cost this test ten minutes of nvcc on a
// cold cache where nothing runs them.
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "reduce_cases.h"

int main() {
  reduce_cases::run_all(kiln::Device::cpu());
  return exec_compare::summary();
}
