// mode=reduce-overhead on a CUDA GPU: calls replay CUDA graphs, and give
// eager's results whatever the caller does between them (new values, held
// results, new shapes and scalars, in-place updates, another stream, the
// allocator's cache emptied): Inputs/graphs_cases.h.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: MISMATCH
// COMPILED: chain: 1 captures, 4 replays
// FORCED: chain: 0 captures, 0 replays
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "graphs_cases.h"

int main() { return graphs_cases::run(kiln::Device::cuda(0)); }
