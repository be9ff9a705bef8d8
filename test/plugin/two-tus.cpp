// Two TUs compile functions of the same names (an inline function from a
// shared header, functions with internal linkage): each TU's generated code
// is internal to its object, so they link, and each calls its own.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %kiln_cxx -c %s -o %t.dir/a.o
// RUN: %kiln_cxx -c %S/../Inputs/two_tus_second.cpp -o %t.dir/b.o
// RUN: %kiln_cxx_eager %t.dir/a.o %t.dir/b.o %kiln_link -o %t.dir/ab && %t.dir/ab | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// RUN: %kiln_cxx_eager %t.dir/b.o %t.dir/a.o %kiln_link -o %t.dir/ba && %t.dir/ba | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// At -O0 the inline function is emitted (not inlined) in both objects.
// RUN: %kiln_cxx -O0 -c %s -o %t.dir/a0.o
// RUN: %kiln_cxx -O0 -c %S/../Inputs/two_tus_second.cpp -o %t.dir/b0.o
// RUN: %kiln_cxx_eager %t.dir/a0.o %t.dir/b0.o %kiln_link -o %t.dir/ab0 && %t.dir/ab0 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
#include "kiln_check.h"
#include "shared_ops.h"

kiln::Tensor second(const kiln::Tensor &x);

namespace {
[[kiln::compile]] kiln::Tensor local_op(const kiln::Tensor &x) {
  return x + 2.0;
}
} // namespace

[[kiln::compile]] static kiln::Tensor helper(const kiln::Tensor &x) {
  return -x;
}

// CHECK: first: 3.0000 13.0000 23.0000
// CHECK: second: -1.0000 11.0000 25.0000
// COMPILED: compiled=6 fallback=0
// FORCED: compiled=0 fallback=6
int main() {
  kiln::Tensor x = kiln::arange(3);
  kiln_check::print("first", shared_op(x) + local_op(x) + helper(x));
  kiln_check::print("second", second(x));
  kiln_check::print_stats();
}
