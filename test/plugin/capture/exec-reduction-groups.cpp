// Functions one reduction kernel cannot compute run as several kernels in
// one compiled call (reductions over different dims, reductions of reduced
// values, keepdim=false values broadcast by trailing dims), on the CPU:
// compiled vs eager vs float64, the kernel count asserted
// (test/Inputs/reduction_groups_cases.h).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: shapes that do not broadcast raise
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "reduction_groups_cases.h"

int main() { return run_reduction_groups(kiln::Device::cpu()); }
