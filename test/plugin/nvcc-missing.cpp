// Without nvcc the TU still builds: one warning for the whole TU, and the
// compiled functions run their CPU path.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %kiln_cxx -c -fplugin-arg-kiln-nvcc=%t.dir/no-such-nvcc -Xclang -verify %s -o %t.dir/a.o
// RUN: %kiln_cxx_eager %t.dir/a.o %kiln_link -o %t.dir/a && %t.dir/a | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// -fsyntax-only does not need nvcc, so it does not warn.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-nvcc=%t.dir/no-such-nvcc %s 2>&1 | count 0
// cuda=off is a choice, not a problem: no warning either.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.dir/b.o 2>&1 | count 0
// RUN: %kiln_cxx_eager %t.dir/b.o %kiln_link -o %t.dir/b && %t.dir/b | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
#include "kiln_check.h"

// expected-warning@+1 {{kiln: nvcc not found; CUDA kernels not built, compiled functions run their CPU path only}}
[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) { return kiln::exp(-x); }
[[kiln::compile]] kiln::Tensor g(const kiln::Tensor &x) { return x * x; }

// CHECK: f: 1.0000 0.3679 0.1353
// CHECK: g: 0.0000 1.0000 4.0000
// COMPILED: compiled=2 fallback=0
// FORCED: compiled=0 fallback=2
int main() {
  kiln::Tensor x = kiln::arange(3);
  kiln_check::print("f", f(x));
  kiln_check::print("g", g(x));
  kiln_check::print_stats();
}
