// -Rpass=kiln (like -fplugin-arg-kiln-remarks) turns Kiln's remarks on: per
// function at its line what was fused, then one remark per guard, from the
// list explain.json shows. A function left eager stays a warning. Other
// -Rpass patterns do not turn them on.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass=kiln %s 2>&1 | FileCheck %s
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass-missed=kil. %s 2>&1 | FileCheck %s
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass=inline %s 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off %s 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: rm -rf %t.dir
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass=kiln -fplugin-arg-kiln-debug-dir=%t.dir %s 2>&1 | grep "remark: kiln: guard:" | sed -e 's/.*remark: kiln: guard: //' > %t.remarks
// RUN: python3 %S/Inputs/guard_checks.py %t.dir/remarks-rpass.cpp/f/explain.json %t.dir/remarks-rpass.cpp/g/explain.json > %t.json
// RUN: diff %t.json %t.remarks
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);

// OFF-NOT: remark:
// CHECK: remarks-rpass.cpp:[[@LINE+9]]:26: remark: kiln: compiled 'f': 2 ops captured, fused into 1 kernel (f32, f16, bf16, f64; CPU only)
// CHECK: remarks-rpass.cpp:[[@LINE+8]]:26: remark: kiln: guard: 'x' is a defined tensor
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+7]]:26: remark: kiln: guard: 'y' is a defined tensor
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+6]]:26: remark: kiln: guard: 'y' is on the device of 'x'
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+5]]:26: remark: kiln: guard: no tensor argument requires grad while autograd records
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+4]]:26: remark: kiln: guard: the dtype of 'x' is one of f32, f16, bf16, f64 (it picks the variant)
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+3]]:26: remark: kiln: guard: 'y' is f32 like 'x' (f32 variant)
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+2]]:26: remark: kiln: guard: kernel 0: the shapes of 'x', 'y' broadcast together
// CHECK-NEXT: remarks-rpass.cpp:[[@LINE+1]]:26: remark: kiln: guard: the tensors are on the CPU (no CUDA kernels were generated)
[[kiln::compile]] Tensor f(const Tensor &x, const Tensor &y) {
  return kiln::exp(x) * y;
}

// CHECK: remarks-rpass.cpp:[[@LINE+2]]:40: remark: kiln: compiled 'g': 1 op captured, fused into 1 kernel (f32; CPU only)
// CHECK: remarks-rpass.cpp:[[@LINE+1]]:40: remark: kiln: guard: the dtype of 'x' is f32 (the variant compiled)
[[kiln::compile("dtypes=f32")]] Tensor g(const Tensor &x) {
  return kiln::amax(x, 0);
}

// CHECK: remarks-rpass.cpp:[[@LINE+3]]:3: warning: kiln: cannot compile 'eager': call to 'log_tensor' is not supported yet
// OFF: remarks-rpass.cpp:[[@LINE+2]]:3: warning: kiln: cannot compile 'eager'
[[kiln::compile]] Tensor eager(const Tensor &x) {
  log_tensor(x);
  return x;
}
