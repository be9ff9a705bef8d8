// A debug build (-O0) still gets optimised, vectorised generated loops: the
// nested compile runs at O2 whatever the user's -O. The user's own code
// stays at -O0 (optnone).
// RUN: %kiln_cxx -O0 -g -S -emit-llvm -fplugin-arg-kiln-cuda=off %s -o %t.ll
// RUN: FileCheck %s < %t.ll
#include <kiln/kiln.h>

// CHECK: define dso_local void @_Z4axpbRKN4kiln6TensorES2_d({{.*}} #[[USER:[0-9]+]]
// CHECK: {{fmul|fadd}} {{.*}}<{{[0-9]+}} x float>
// CHECK: attributes #[[USER]] = { {{.*}}optnone
[[kiln::compile]] kiln::Tensor axpb(const kiln::Tensor &x,
                                    const kiln::Tensor &y, double a) {
  return x * a + y;
}

// Without the plugin nothing is vectorised at -O0.
// RUN: %kiln_cxx_eager -O0 -Wno-unknown-attributes -S -emit-llvm %s -o - | FileCheck --check-prefix=EAGER %s
// EAGER-NOT: {{fmul|fadd}} {{.*}}<{{[0-9]+}} x float>
