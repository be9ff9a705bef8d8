// Layout ops inside compiled functions, on the CPU: views of arguments and
// of kernels' results read through their strides, views handed out as
// eager's (test/Inputs/views_cases.h).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: views handed out share storage and strides as eager's
// CHECK: ok: a view eager raises on raises
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "views_cases.h"

int main() { return run_views(kiln::Device::cpu()); }
