// NVTX ranges for Nsight Systems, seen by a stand-in tool: one per eager op
// (named after it) and per kernel launch inside it (named after the
// kernel: a compiled function's say whose they are), one per compiled call
// (named after the user's function) around its kernels; none with
// KILN_NVTX=0.
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clangxx -std=c++20 -shared -fPIC -I%cuda_include %S/../Inputs/nvtx_recorder.cpp -o %t/tool.so
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off %s %kiln_link -o %t/a.out
// RUN: env NVTX_INJECTION64_PATH=%t/tool.so %t/a.out 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// RUN: env NVTX_INJECTION64_PATH=%t/tool.so KILN_NVTX=0 %t/a.out 2>&1 | FileCheck --check-prefix=OFF %s
// CHECK: nvtx: push kiln/kiln::sin
// CHECK-NEXT: nvtx: push kiln/sin
// CHECK-NEXT: nvtx: pop kiln
// CHECK-NEXT: nvtx: pop kiln
// COMPILED-NEXT: nvtx: push kiln/scaled_sin
// COMPILED-NEXT: nvtx: push kiln/kiln_scaled_sin_{{[0-9a-f]+}}_k0_f32_
// COMPILED-NEXT: nvtx: pop kiln
// COMPILED-NEXT: nvtx: pop kiln
// COMPILED: compiled_calls 1
// With every guard made to fail, the original body's eager ops instead.
// FORCED-NEXT: nvtx: push kiln/kiln::sin
// FORCED: compiled_calls 0
// OFF-NOT: nvtx:
// OFF: compiled_calls {{[01]}}
#include <kiln/kiln.h>

#include <cstdio>

[[kiln::compile]] kiln::Tensor scaled_sin(const kiln::Tensor &x) {
  return kiln::sin(x) * 3.0;
}

int main() {
  kiln::Tensor x = kiln::arange(8);
  kiln::Tensor eager = kiln::sin(x);
  kiln::Tensor compiled = scaled_sin(x);
  std::fflush(stderr);
  std::printf("compiled_calls %llu\n",
              (unsigned long long)kiln::stats().compiled_calls);
}
