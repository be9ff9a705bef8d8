// Compiled functions from 16 threads at once under ThreadSanitizer: the
// test and the host code the plugin generates for it are instrumented
// (the nested compile inherits -fsanitize=thread). OMP_NUM_THREADS=1 keeps
// libomp's threads, which TSan cannot see into, out of it; races inside
// libomp itself are suppressed (Inputs/tsan-suppressions.txt). With an
// instrumented runtime too: scripts/sanitize.sh thread (CI).
// UNSUPPORTED: sanitized
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -fsanitize=thread -g -c %s -o %t.o
// RUN: %kiln_cxx_eager -fsanitize=thread %t.o %kiln_link -o %t
// RUN: env OMP_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1:suppressions=%S/../Inputs/tsan-suppressions.txt %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: WARNING: ThreadSanitizer
// CHECK-NOT: MISMATCH
// COMPILED: compiled=240 fallback=0 (of 240)
// CHECK: 16 threads, 0 mismatches
#include "threads_cases.h"

int main() { return threads_cases::run(3); }
