// Graphviz's `dot`, when on PATH, draws every .dot of the dump as .svg;
// without it there are no .svg files and no complaint.
// REQUIRES: graphviz
// RUN: rm -rf %t.dir %t.nodot
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: FileCheck %s < %t.dir/svg.cpp/f/captured.svg
// RUN: FileCheck %s --check-prefix=FINAL < %t.dir/svg.cpp/f/final/f32.svg
// RUN: ls %t.dir/svg.cpp/f/passes/f32/01-infer-types.svg
// RUN: not ls %t.dir/svg.cpp/f/captured.dot.svg
// RUN: env PATH=%t.nodot %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.nodot %s 2>&1 | count 0
// RUN: ls %t.nodot/svg.cpp/f/captured.dot
// RUN: not ls %t.nodot/svg.cpp/f/captured.svg
#include <kiln/kiln.h>

// CHECK: <svg
// CHECK: %a = sin
// FINAL: kernel 0
[[kiln::compile("dtypes=f32")]] kiln::Tensor f(const kiln::Tensor &x) {
  kiln::Tensor a = kiln::sin(x);
  return a * a;
}
