// Templates and lambdas on a CUDA GPU: the cases of exec-templates.cpp
// (test/Inputs/templates_cases.h).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -Wno-c++23-lambda-attributes -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "templates_cases.h"

int main() { return run_templates(kiln::Device::cuda(0)); }
