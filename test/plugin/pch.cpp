// A PCH built with the plugin already holds rewritten bodies: a TU using it
// does not rewrite them again, and still gets their fast paths.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %kiln_cxx -x c++-header %S/../Inputs/pch_ops.h -o %t.dir/ops.pch
// RUN: %kiln_cxx -include-pch %t.dir/ops.pch -fsyntax-only %kiln_dump %s 2>&1 | FileCheck --check-prefix=DUMP %s
// RUN: %kiln_cxx -include-pch %t.dir/ops.pch -c %s -o %t.dir/a.o
// RUN: %kiln_cxx_eager %t.dir/a.o %kiln_link -o %t.dir/a && %t.dir/a | FileCheck %s
#include "kiln_check.h"

// DUMP: // kiln-dump: rewrite pch_inline
// DUMP-NEXT: {{.*}} pch_inline(const kiln::Tensor &x) {
// DUMP-NEXT: kiln::Tensor __kiln_out0;
// DUMP-NEXT: if (__kiln__Z10pch_inlineRKN4kiln6TensorE_{{[0-9a-f]+}}(x, &__kiln_out0))
// DUMP-NEXT: return __kiln_out0;
// DUMP-NEXT: {
// DUMP-NEXT: return kiln::sqrt(x) + 1.;

// CHECK: inline: 1.0000 2.0000 2.4142
// CHECK: outline: 0.0000 3.0000 6.0000
// CHECK: compiled=2 fallback=0
int main() {
  kiln::Tensor x = kiln::arange(3);
  kiln_check::print("inline", pch_inline(x));
  kiln_check::print("outline", pch_outline(x));
  kiln_check::print_stats();
}
