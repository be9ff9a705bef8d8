// mode=reduce-overhead on the CPU: there are no CUDA graphs, and every call
// runs the fast path (Inputs/graphs_cases.h says what is checked; the GPU
// twin, exec-graphs-cuda.cpp, checks the captures and replays). CPU code
// only (cuda=off): the twin compiles and runs the same cases' CUDA kernels.
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: chain: 0 captures, 0 replays
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "graphs_cases.h"

int main() { return graphs_cases::run(kiln::Device::cpu()); }
