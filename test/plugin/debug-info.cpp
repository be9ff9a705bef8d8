// -g: the generated host code has its own compile unit naming the file kept
// on disk, so a debugger can show it; the user's code keeps its lines.
// RUN: rm -rf %t.cache
// RUN: %kiln_cxx -g -O0 -S -emit-llvm -fplugin-arg-kiln-cache-dir=%t.cache %s -o %t.ll
// RUN: FileCheck %s < %t.ll
// RUN: grep -c "distinct !DICompileUnit" %t.ll | FileCheck --check-prefix=CUS %s
// RUN: ls %t.cache/src | FileCheck --check-prefix=FILE %s
#include <kiln/kiln.h>

// CHECK-DAG: !DIFile(filename: "{{.*}}debug-info.cpp"
// CHECK-DAG: !DIFile(filename: "{{.*}}src{{/|\\\\}}debug_info-{{[0-9a-f]+}}.kiln.cpp"
// CHECK-DAG: distinct !DISubprogram(name: "gelu_scale", {{.*}}line: [[@LINE+1]]
[[kiln::compile]] kiln::Tensor gelu_scale(const kiln::Tensor &x, double s) {
  return kiln::gelu(x) * s;
}
// CUS: 2
// FILE: debug_info-{{[0-9a-f]+}}.kiln.cpp
