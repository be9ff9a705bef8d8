// A PCH built with the plugin already holds rewritten bodies: a TU using it
// does not rewrite them again, and still gets their fast paths.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %kiln_cxx -x c++-header %S/../Inputs/pch_ops.h -o %t.dir/ops.pch
// RUN: %kiln_cxx -include-pch %t.dir/ops.pch -fsyntax-only %kiln_dump %s 2>&1 | FileCheck --check-prefix=DUMP %s
// RUN: %kiln_cxx -include-pch %t.dir/ops.pch -c %s -o %t.dir/a.o
// RUN: %kiln_cxx_eager %t.dir/a.o %kiln_link -o %t.dir/a && %t.dir/a | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
#include "kiln_check.h"

// DUMP: // kiln-dump: rewrite pch_inline
// DUMP-NEXT: {{.*}} pch_inline(const kiln::Tensor &x) {
// DUMP-NEXT: kiln::Tensor __kiln_out0;
// DUMP-NEXT: if (kiln_pch_inline_{{[0-9a-f]+}}(x, &__kiln_out0))
// DUMP-NEXT: return __kiln_out0;
// DUMP-NEXT: {
// DUMP-NEXT: return kiln::sqrt(x) + 1.;

// A function of several regions: its rewrite is read from the PCH, its
// fast paths (and aliasing guards) generated again here.
// DUMP: // kiln-dump: rewrite pch_regions
// DUMP: if (flag) {
// DUMP: pch_log(y);
// DUMP: // kiln-dump: graph pch_regions (region 1, specialisation 1)
// DUMP: exp
// DUMP: // kiln-dump: graph pch_regions (region 1, specialisation 2)
// DUMP: sin
// DUMP: // kiln-dump: graph pch_regions (region 2)

static int logged = 0;
void pch_log(const kiln::Tensor &) { ++logged; }

// CHECK: inline: 1.0000 2.0000 2.4142
// CHECK: outline: 0.0000 3.0000 6.0000
// CHECK: regions exp: 2.0000 5.7183 12.3891
// CHECK-NEXT: acc: 1.0000 3.0000 5.0000
// CHECK: regions sin: 1.0000 3.8415 5.9093
// CHECK-NEXT: acc: 1.0000 3.0000 5.0000
// CHECK: aliased: 0.0000 9.0000 36.0000
// CHECK: logged 3
// CHECK: pinned: 0.0000 2.0000 4.0000
// COMPILED: compiled=8 fallback=1
// FORCED: compiled=0 fallback=9
int main() {
  kiln::Tensor x = kiln::arange(3);
  kiln_check::print("inline", pch_inline(x));
  kiln_check::print("outline", pch_outline(x));
  for (bool flag : {true, false}) {
    kiln::Tensor acc = kiln::ones({3});
    kiln::Tensor r = pch_regions(acc, x, flag);
    kiln_check::print(flag ? "regions exp" : "regions sin", r);
    kiln_check::print("acc", acc);
  }
  // acc and x are one tensor: the guard sends region 1 to its original
  // statements (acc = 3x, y = sin(3x)); region 2 is compiled.
  kiln::Tensor a = kiln::arange(3);
  kiln::Tensor r = pch_regions(a, a, false);
  kiln_check::print("aliased", a * a);
  (void)r;
  std::printf("logged %d\n", logged);
  kiln_check::print("pinned", pch_pinned(x, kiln::arange(3).to(kiln::i64)));
  kiln_check::print_stats();
}
