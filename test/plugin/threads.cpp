// Compiled functions from 16 threads at once, the first call included
// (Inputs/threads_cases.h). On the CPU; the CUDA twin is in
// threads-cuda.cpp, ThreadSanitizer's run in threads-tsan.cpp.
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: MISMATCH
// COMPILED: compiled=1600 fallback=0 (of 1600)
// FORCED: compiled=0 fallback={{[0-9]+}} (of 1600)
// CHECK: 16 threads, 0 mismatches
#include "threads_cases.h"

int main() { return threads_cases::run(20); }
