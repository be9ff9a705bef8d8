// Folder names: `ns::f` becomes `ns.f`; overloads that share a name get a
// hash of their mangled name, stable from one build to the next; a member
// function is `Class.method`. KILN_DEBUG_DIR names the folder too, and the
// plugin argument wins over it; `debug-dir=` (empty) turns the dump off.
// RUN: rm -rf %t.dir %t.env %t.off
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: FileCheck %s < %t.dir/names.cpp/index.txt
// RUN: ls %t.dir/names.cpp | count 4
// RUN: cp %t.dir/names.cpp/index.txt %t.first
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: diff %t.first %t.dir/names.cpp/index.txt
// RUN: python3 %S/Inputs/flatjson.py %t.dir/names.cpp/Layer.forward/explain.json | FileCheck %s --check-prefix=MEMBER
// The environment variable, and the argument winning over it.
// RUN: env KILN_DEBUG_DIR=%t.env %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off %s
// RUN: FileCheck %s < %t.env/names.cpp/index.txt
// RUN: rm -rf %t.env
// RUN: env KILN_DEBUG_DIR=%t.env %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: not ls %t.env
// RUN: env KILN_DEBUG_DIR=%t.off %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir= %s
// RUN: not ls %t.off
#include <kiln/kiln.h>

using kiln::Tensor;

// CHECK:      compiled  ns::scale      [[A:ns.scale-[0-9a-f]{8}]]/
// CHECK-NEXT: compiled  ns::scale      [[B:ns.scale-[0-9a-f]{8}]]/
// CHECK-NEXT: compiled  Layer::forward Layer.forward/
// CHECK-NOT: [[A]]/
namespace ns {
[[kiln::compile]] Tensor scale(const Tensor &x) { return x * 2; }
[[kiln::compile]] Tensor scale(const Tensor &x, const Tensor &y) {
  return x * y;
}
} // namespace ns

// MEMBER: function = "Layer::forward"
// MEMBER: status = "compiled"
struct Layer {
  [[kiln::compile]] Tensor forward(const Tensor &x) { return kiln::relu(x); }
};
