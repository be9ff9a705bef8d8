// cat, stack and integer division of sizes inside compiled functions, on
// a CUDA GPU (test/Inputs/join_cases.h).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: rope with cos [3, 9] against q [.., 8] raises
// CHECK: ok: split(4, 0).at(2) of 7 rows raises
// CHECK: ok: a piece past the last runs the original body
// CHECK: ok: chunk(3) of 4 columns (two pieces) runs the original body
// CHECK: ok: chunk(3) of 4 columns joins two pieces
// CHECK: ok: cat of [3, 4] and [5, 3] along dim 0 raises
// CHECK: ok: a cat eager rejects runs the original body
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "join_cases.h"

int main() { return run_join(kiln::Device::cuda(0)); }
