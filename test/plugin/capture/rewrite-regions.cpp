// The rewritten bodies, as clang prints them: each region calls its fast
// path and keeps its statements as the fallback; locals it declares and
// later code uses are hoisted before it; a graph break stays in place
// between regions; a branch on a host scalar picks one fast path per
// specialisation; a loop with a runtime trip count keeps its shape with
// its body compiled; out-parameters are assigned, parameters updated in
// place get copy_(), behind aliasing guards (the fast path's result starts
// as the parameter: the kernel may write into it, and the copy of a tensor
// onto itself does nothing); members and tensor sizes are
// passed from the call site.
// RUN: %kiln_cxx -fsyntax-only %kiln_dump %s 2>&1 | FileCheck %s
#include <kiln/kiln.h>

#include <utility>

using kiln::Tensor;

void log_tensor(const Tensor &);

// CHECK-LABEL: // kiln-dump: rewrite around_break
// CHECK-NEXT: Tensor around_break(const Tensor &x, double a) {
// CHECK-NEXT:     Tensor y;
// CHECK-NEXT:     kiln::Tensor [[T:__kiln_t[0-9]+]];
// CHECK-NEXT:     const Tensor &r = [[T]];
// CHECK-NEXT:     int n;
// CHECK-NEXT:     {
// CHECK-NEXT:         kiln::Tensor __kiln_o1_0;
// CHECK-NEXT:         kiln::Tensor __kiln_o1_1;
// CHECK-NEXT:         if ([[R1:kiln_around_break_[0-9a-f]+]](x, a, &__kiln_o1_0, &__kiln_o1_1)) {
// CHECK-NEXT:             y = __kiln_o1_0;
// CHECK-NEXT:             [[T]] = __kiln_o1_1;
// CHECK-NEXT:             n = 3;
// CHECK-NEXT:         } else {
// CHECK-NEXT:             y = kiln::sin(x) * a;
// CHECK-NEXT:             [[T]] = kiln::cos(x);
// CHECK-NEXT:             n = 3;
// CHECK-NEXT:         }
// CHECK-NEXT:     }
// CHECK-NEXT:     log_tensor(y);
// CHECK-NEXT:     {
// CHECK-NEXT:         kiln::Tensor __kiln_o2_0;
// CHECK-NEXT:         if ([[R2:kiln_around_break_[0-9a-f]+]](y, r, n, &__kiln_o2_0)) {
// CHECK-NEXT:             return __kiln_o2_0;
// CHECK-NEXT:         } else {
// CHECK-NEXT:             return kiln::exp(y) + r * n;
// CHECK-NEXT:         }
// CHECK-NEXT:     }
// CHECK-NEXT: }
// CHECK: // kiln-dump: graph around_break (region 1)
// CHECK: // kiln-dump: graph around_break (region 2)
// CHECK-NEXT: graph @around_break(%y: f32[*] loc("{{.*}}rewrite-regions.cpp":{{[0-9]+:[0-9]+}}), %r: f32[*] loc("{{.*}}rewrite-regions.cpp":{{[0-9]+:[0-9]+}}), %n: i64 loc("{{.*}}rewrite-regions.cpp":{{[0-9]+:[0-9]+}})) {
[[kiln::compile]] Tensor around_break(const Tensor &x, double a) {
  Tensor y = kiln::sin(x) * a;
  const Tensor &r = kiln::cos(x);
  int n = 3;
  log_tensor(y);
  return kiln::exp(y) + r * n;
}

// CHECK-LABEL: // kiln-dump: rewrite branches
// CHECK-NEXT: Tensor branches(const Tensor &x, bool flag) {
// CHECK-NEXT:     {
// CHECK-NEXT:         bool __kiln_ok1 = false;
// CHECK-NEXT:         if (flag) {
// CHECK-NEXT:             kiln::Tensor __kiln_o1_0;
// CHECK-NEXT:             if ([[T:kiln_branches_[0-9a-f]+]](x, &__kiln_o1_0)) {
// CHECK-NEXT:                 return __kiln_o1_0;
// CHECK-NEXT:             }
// CHECK-NEXT:         } else {
// CHECK-NEXT:             kiln::Tensor __kiln_o1_0;
// CHECK-NEXT:             if ([[F:kiln_branches_[0-9a-f]+]](x, &__kiln_o1_0)) {
// CHECK-NEXT:                 return __kiln_o1_0;
// CHECK-NEXT:             }
// CHECK-NEXT:         }
// CHECK-NEXT:         if (!__kiln_ok1) {
// CHECK-NEXT:             Tensor y = kiln::relu(x);
// CHECK-NEXT:             if (flag)
// CHECK-NEXT:                 y = y * 2;
// CHECK-NEXT:             return y - 1;
// CHECK-NEXT:         }
// CHECK-NEXT:     }
// CHECK-NEXT: }
// The specialisation for `flag` has the multiplication, the other not.
// CHECK: // kiln-dump: graph branches (region 1, specialisation 1)
// CHECK: mul
// CHECK: // kiln-dump: graph branches (region 1, specialisation 2)
// CHECK-NOT: mul
// CHECK: return
[[kiln::compile]] Tensor branches(const Tensor &x, bool flag) {
  Tensor y = kiln::relu(x);
  if (flag)
    y = y * 2;
  return y - 1;
}

// CHECK-LABEL: // kiln-dump: rewrite runtime_loop
// CHECK-NEXT: Tensor runtime_loop(const Tensor &x, int n) {
// CHECK-NEXT:     Tensor y = x;
// CHECK-NEXT:     for (int i = 0; i < n; ++i) {
// CHECK-NEXT:         kiln::Tensor __kiln_o1_0;
// CHECK-NEXT:         if (kiln_runtime_loop_{{[0-9a-f]+}}(y, i, &__kiln_o1_0)) {
// CHECK-NEXT:             y = __kiln_o1_0;
// CHECK-NEXT:         } else {
// CHECK-NEXT:             y = kiln::tanh(y) + i;
// CHECK-NEXT:         }
// CHECK-NEXT:     }
// CHECK-NEXT:     return y;
// CHECK-NEXT: }
[[kiln::compile]] Tensor runtime_loop(const Tensor &x, int n) {
  Tensor y = x;
  for (int i = 0; i < n; ++i)
    y = kiln::tanh(y) + i;
  return y;
}

// CHECK-LABEL: // kiln-dump: rewrite outputs
// CHECK-NEXT: void outputs(Tensor &y, const Tensor &x, Tensor &out) {
// CHECK-NEXT:     {
// CHECK-NEXT:         kiln::Tensor __kiln_o1_0 = y;
// CHECK-NEXT:         kiln::Tensor __kiln_o1_1;
// CHECK-NEXT:         if ([[S:kiln_outputs_[0-9a-f]+]]_aliased(&y != &x, &y != &out, y.storage() != x.storage()) && [[S]](y, x, &__kiln_o1_0, &__kiln_o1_1)) {
// CHECK-NEXT:             y.copy_(__kiln_o1_0);
// CHECK-NEXT:             out = __kiln_o1_1;
// CHECK-NEXT:         } else {
// CHECK-NEXT:             y += x;
// CHECK-NEXT:             out = kiln::sigmoid(x);
// CHECK-NEXT:         }
// CHECK-NEXT:     }
// CHECK-NEXT: }
[[kiln::compile]] void outputs(Tensor &y, const Tensor &x, Tensor &out) {
  y += x;
  out = kiln::sigmoid(x);
}

struct Layer {
  Tensor w;
  // CHECK-LABEL: // kiln-dump: rewrite Layer::forward
  // CHECK-NEXT: std::pair<Tensor, Tensor> forward(const Tensor &x) const {
  // CHECK-NEXT:     kiln::Tensor __kiln_out0;
  // CHECK-NEXT:     kiln::Tensor __kiln_out1;
  // CHECK-NEXT:     if (kiln_Layer_forward_{{[0-9a-f]+}}(x, this->w, x.size(-1), &__kiln_out0, &__kiln_out1))
  // CHECK-NEXT:         return {__kiln_out0, __kiln_out1};
  // CHECK-NEXT:     {
  // CHECK-NEXT:         return {x * this->w, x.size(-1) * this->w};
  // CHECK-NEXT:     }
  // CHECK-NEXT: }
  [[kiln::compile]] std::pair<Tensor, Tensor> forward(const Tensor &x) const {
    return {x * w, x.size(-1) * w};
  }
};
