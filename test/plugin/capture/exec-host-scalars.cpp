// Host scalar expressions in annotated functions on the CPU: <cmath> of
// doubles, conversions between int, double and bool, tensor sizes; each
// computed once per call on the host and passed to the one fused kernel
// (cases: test/Inputs/host_scalar_cases.h).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// The same with every fast path running the captured graph op by op.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// The generated host code computes the scale before the launch.
// RUN: rm -rf %t.dbg && %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dbg %s -o %t.dbg.o
// RUN: FileCheck %s --check-prefix=HOST < %t.dbg/exec-host-scalars.cpp/scaled/host.cpp
// HOST: const double [[N:v[0-9]+]] = kiln::scalar::op_to<double>(a{{[0-9]+}}); // to(x.size(-1), f64)
// HOST: const double [[R:v[0-9]+]] = kiln::scalar::op_sqrt([[N]]);
// HOST: const double [[S:v[0-9]+]] = kiln::scalar::op_div(1.0, [[R]]);
// HOST: double s0 = [[S]];
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "host_scalar_cases.h"

int main() { return run_host_scalars(kiln::Device::cpu()); }
