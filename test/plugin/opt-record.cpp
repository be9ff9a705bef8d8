// -fsave-optimization-record keeps Kiln's remarks (pass "kiln") beside
// LLVM's, whether or not they are printed: what was compiled (Passed), each
// graph break (Missed), the rest (Analysis), at their source lines.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t/a.o -fsave-optimization-record -foptimization-record-file=%t/a.yaml 2>&1 | count 0
// RUN: FileCheck %s < %t/a.yaml
// Only Kiln's with -foptimization-record-passes=kiln; none with another pass.
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t/b.o -fsave-optimization-record -foptimization-record-file=%t/b.yaml -foptimization-record-passes=kiln
// RUN: FileCheck --check-prefix=ONLY %s < %t/b.yaml
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t/c.o -fsave-optimization-record -foptimization-record-file=%t/c.yaml -foptimization-record-passes=inline
// RUN: not grep -q "Pass: *kiln" %t/c.yaml
//
// CHECK: --- !Passed
// CHECK-NEXT: Pass: kiln
// CHECK-NEXT: Name: Compiled
// CHECK-NEXT: DebugLoc: { File: '{{.*}}opt-record.cpp',{{[[:space:]]+}}Line: [[@LINE+18]],{{[[:space:]]+}}Column: {{[0-9]+}}{{[[:space:]]*}}}
// CHECK-NEXT: Function: scaled
// CHECK-NEXT: Args:
// CHECK-NEXT: - String: 'kiln: compiled ''scaled'': 2 ops captured
// CHECK: --- !Missed
// CHECK-NEXT: Pass: kiln
// CHECK-NEXT: Name: GraphBreak
// CHECK-NEXT: DebugLoc: { File: '{{.*}}opt-record.cpp',{{[[:space:]]+}}Line: [[@LINE+17]],{{[[:space:]]+}}Column: {{[0-9]+}}{{[[:space:]]*}}}
// CHECK-NEXT: Function: with_break
// CHECK-NEXT: Args:
// CHECK-NEXT: - String: 'kiln: graph break in ''with_break'': call to ''opaque''
//
// ONLY: Pass: kiln
// ONLY-NOT: Pass: {{[a-jl-z]}}
#include <kiln/kiln.h>

void opaque(const kiln::Tensor &);

[[kiln::compile]] kiln::Tensor scaled(const kiln::Tensor &x) {
  return kiln::sin(x) * 2.0;
}

[[kiln::compile]] kiln::Tensor with_break(const kiln::Tensor &x) {
  kiln::Tensor y = kiln::sin(x);
  opaque(y);
  return kiln::cos(y);
}
