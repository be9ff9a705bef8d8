// [[kiln::compile]] on templates and lambdas, on the CPU: each
// instantiation of a function template or of a member of a class template
// compiles on its own, and a lambda marked in the C++23 position
// (`[] [[kiln::compile]] (...)`) compiles with its captures as inputs
// (cases: test/Inputs/templates_cases.h).
// RUN: %kiln_cxx -Wno-c++23-lambda-attributes -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// The same with every fast path running the captured graph op by op.
// RUN: %kiln_cxx -Wno-c++23-lambda-attributes -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "templates_cases.h"

int main() { return run_templates(kiln::Device::cpu()); }
