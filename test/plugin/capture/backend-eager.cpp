// "backend=eager": the captured graph runs node by node with the eager ops
// (kiln/ops.h) behind the same rewrite and guards, for telling a capture
// bug from a codegen bug. The host code shows the graph's ops as calls.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %kiln_dump %s -o %t.o 2>&1 | FileCheck %s
// RUN: %kiln_cxx -fsyntax-only %kiln_remarks %s 2>&1 | FileCheck --check-prefix=REMARK %s
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);

// REMARK: backend-eager.cpp:[[@LINE+4]]:3: remark: kiln: compiled 'eager (region 1)' with backend=eager: 3 ops captured, run one by one with eager ops
// REMARK: backend-eager.cpp:[[@LINE+5]]:3: remark: kiln: compiled 'eager (region 2)' with backend=eager: 2 ops captured
// REMARK: backend-eager.cpp:[[@LINE+3]]:3: remark: kiln: graph break in 'eager': call to 'log_tensor'
[[kiln::compile("backend=eager")]] Tensor eager(const Tensor &x, double a) {
  Tensor y = kiln::softmax(x * a, -1) + 1;
  log_tensor(y);
  return kiln::sum(y, 0, true) * a;
}

// CHECK-LABEL: // kiln-dump: rewrite eager
// CHECK: if (kiln_eager_{{[0-9a-f]+}}(x, a, &__kiln_o1_0)) {
// CHECK: log_tensor(y);
// CHECK-LABEL: // kiln-dump: host
// CHECK: ---- 'eager (region 1)' with backend=eager: the captured graph, one eager op per node ----
// CHECK: #include <kiln/ops.h>
// CHECK: bool [[S:kiln_eager_[0-9a-f]+]](const kiln::Tensor &a0, double a1, kiln::Tensor *out0) __asm__("[[S]]");
// CHECK: const kiln::Tensor &v0 = a0;
// CHECK-NEXT: const double v1 = a1;
// CHECK-NEXT: kiln::Tensor v2 = kiln::pointwise(kiln::OpId::Mul, {v0, kiln::Operand(v1)});
// CHECK-NEXT: kiln::Tensor v3 = kiln::softmax(v2, -1);
// CHECK-NEXT: const int64_t v4 = int64_t(1);
// CHECK-NEXT: kiln::Tensor v5 = kiln::pointwise(kiln::OpId::Add, {v3, kiln::Operand(v4)});
// CHECK-NEXT: *out0 = v5;
// CHECK-NEXT: kiln::rt::count_compiled();
// CHECK: ---- 'eager (region 2)' with backend=eager
// CHECK: kiln::sum(v{{[0-9]+}}, 0, true);
