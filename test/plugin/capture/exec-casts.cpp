// dtype casts (Tensor::to) captured as graph ops and fused into the
// surrounding kernel, compiled against eager on the CPU over every variant:
// mixed-precision RMS norm (f32 statistics of a 16-bit activation, one
// kernel), casts to integers and bools, to(y.dtype()), casts of reduced
// values, a cast that is the identity in one variant. Each case asserts its
// fast path ran and how many kernels it launched; the RMS norm is also
// compared with a float64 reference.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// The same with every fast path running the captured graph op by op.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "casts_cases.h"

int main() { return run_casts(kiln::Device::cpu()); }
