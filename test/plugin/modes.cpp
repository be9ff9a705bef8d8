// The plugin rewrites the AST, not the text, so every output mode keeps
// working, prints its diagnostics once, and the objects link and run.
//
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %kiln_cxx -fsyntax-only -Wall %s 2>&1 | count 0
// RUN: %kiln_cxx -E %s -o %t.dir/pp.ii && FileCheck --check-prefix=PP %s < %t.dir/pp.ii
// RUN: %kiln_cxx -O0 -S -emit-llvm %s -o %t.dir/m.ll && FileCheck --check-prefix=IR %s < %t.dir/m.ll
// RUN: %kiln_cxx -S %s -o %t.dir/m.s && FileCheck --check-prefix=ASM %s < %t.dir/m.s
// RUN: %kiln_cxx -c -MD -MF %t.dir/m.d %s -o %t.dir/m.o && FileCheck --check-prefix=DEP %s < %t.dir/m.d
// RUN: %kiln_cxx_eager %t.dir/m.o %kiln_link -o %t.dir/m && %t.dir/m | FileCheck --allow-unused-prefixes --check-prefixes=OUT,%compiled %s
// RUN: %kiln_cxx -c -g -O0 %s -o %t.dir/g.o && %kiln_cxx_eager %t.dir/g.o %kiln_link -o %t.dir/g && %t.dir/g | FileCheck --allow-unused-prefixes --check-prefixes=OUT,%compiled %s
// RUN: %kiln_cxx -c -save-temps=obj %s -o %t.dir/st.o && %kiln_cxx_eager %t.dir/st.o %kiln_link -o %t.dir/st && %t.dir/st | FileCheck --allow-unused-prefixes --check-prefixes=OUT,%compiled %s
// RUN: %kiln_cxx -g -O0 -save-temps=obj %s %kiln_link -o %t.dir/stg && %t.dir/stg | FileCheck --allow-unused-prefixes --check-prefixes=OUT,%compiled %s
// Without the plugin the same source is an eager program.
// RUN: %kiln_cxx_eager -Wno-unknown-attributes %s %kiln_link -o %t.dir/eager && %t.dir/eager | FileCheck --check-prefixes=OUT,EAGER %s
#include "kiln_check.h"

// PP: {{\[\[}}kiln::compile{{\]\]}} kiln::Tensor sin_plus_cos

// The fast path is declared with its symbol, called, and defined in the
// same module with internal linkage.
// IR: define {{.*}} @_Z12sin_plus_cosRKN4kiln6TensorES2_(
// IR: {{call|invoke}} {{.*}} i1 @[[SYM:kiln_sin_plus_cos_[0-9a-f]+]](
// IR: define internal {{.*}} i1 @[[SYM]](

// ASM: _Z12sin_plus_cosRKN4kiln6TensorES2_:
// ASM-NOT: .globl kiln_

// DEP: m.o:
// DEP-NEXT: modes.cpp
// DEP: kiln_check.h
// DEP-NOT: kiln.cpp

[[kiln::compile]] kiln::Tensor sin_plus_cos(const kiln::Tensor &x,
                                            const kiln::Tensor &y) {
  return kiln::sin(x) + kiln::cos(y);
}

// OUT: OUT: 0.5403 1.3818 1.4496 0.6814
// COMPILED: compiled=1 fallback=0
// FORCED: compiled=0 fallback=1
// EAGER: compiled=0 fallback=0
int main() {
  kiln::Tensor x = kiln::arange(4);
  kiln::Tensor y = kiln::ones({4});
  kiln_check::print("OUT", sin_plus_cos(x, y));
  kiln_check::print_stats();
}
