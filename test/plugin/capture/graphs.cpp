// What the capture puts in the graph (the dumped KIR of each region): an
// unrolled loop repeats its body with the counter as constants; inlined
// helpers and lambdas bring their ops (located in their own bodies), a
// lambda's copy keeps the value it captured; `if constexpr` keeps one arm;
// compound assignment rebinds (a copy of the handle sees the update); a
// returned aggregate is several outputs; scalar parameters are runtime
// inputs.
// RUN: %kiln_cxx -fsyntax-only %kiln_dump %s 2>&1 | FileCheck %s
#include <kiln/kiln.h>

using kiln::Tensor;

// CHECK-LABEL: // kiln-dump: graph unrolled
// CHECK-NEXT: graph @unrolled(%x: f32[*] loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}})) {
// CHECK-NEXT:   %1: f32[*] = sin %x
// CHECK-NEXT:   %2: i64 = const 0
// CHECK-NEXT:   %3: f32[*] = mul %1, %2
// CHECK-NEXT:   %4: f32[*] = sin %3
// CHECK-NEXT:   %5: i64 = const 1
// CHECK-NEXT:   %6: f32[*] = mul %4, %5
// CHECK-NEXT:   %7: f32[*] = sin %6
// CHECK-NEXT:   %8: i64 = const 2
// CHECK-NEXT:   %9: f32[*] = mul %7, %8
// CHECK-NEXT:   return %9
[[kiln::compile]] Tensor unrolled(const Tensor &x) {
  Tensor y = x;
  for (int i = 0; i < 3; ++i)
    y = kiln::sin(y) * i;
  return y;
}

static Tensor swish(const Tensor &t, double beta) {
  return t * kiln::sigmoid(t * beta);
}
// CHECK-LABEL: // kiln-dump: graph inlined
// CHECK-NEXT: graph @inlined(%beta: f64 loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}}), %x: f32[*] loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}})) {
// CHECK-NEXT:   %2: f32[*] = mul %x, %beta loc("{{.*}}graphs.cpp":[[#@LINE-4]]:30)
// CHECK-NEXT:   %3: f32[*] = sigmoid %2 loc("{{.*}}graphs.cpp":[[#@LINE-5]]:
// CHECK-NEXT:   %4: f32[*] = mul %x, %3 loc("{{.*}}graphs.cpp":[[#@LINE-6]]:
// CHECK-NEXT:   %5: f64 = const 0.25
// CHECK-NEXT:   %6: f32[*] = mul %4, %5
// CHECK-NEXT:   %7: f64 = const 4.0
// CHECK-NEXT:   %8: f32[*] = mul %6, %7
// CHECK-NEXT:   return %8
[[kiln::compile]] Tensor inlined(const Tensor &x, double beta) {
  double k = 0.25;
  auto scale = [k](const Tensor &t) { return t * k; };
  k = 4.0;
  return scale(swish(x, beta)) * k;
}

// CHECK-LABEL: // kiln-dump: graph constexpr_if
// CHECK-NEXT: graph @constexpr_if(%x: f32[*] loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}})) {
// CHECK-NEXT:   %1: f32[*] = relu %x
// CHECK-NEXT:   return %1
[[kiln::compile]] Tensor constexpr_if(const Tensor &x) {
  if constexpr (sizeof(int) == 4)
    return kiln::relu(x);
  else
    return kiln::exp(x);
}

// CHECK-LABEL: // kiln-dump: graph accumulate
// CHECK-NEXT: graph @accumulate(%x: f32[*] loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}})) {
// CHECK-NEXT:   %1: i64 = const 2
// CHECK-NEXT:   %acc: f32[*] = mul %x, %1
// CHECK-NEXT:   %3: f32[*] = add %acc, %x
// CHECK-NEXT:   %4: f32[*] = to_into %3, %acc
// CHECK-NEXT:   return %4
[[kiln::compile]] Tensor accumulate(const Tensor &x) {
  Tensor acc = x * 2;
  Tensor alias = acc;
  acc += x;
  return alias;
}

struct Pair {
  Tensor a, b;
};
// CHECK-LABEL: // kiln-dump: graph aggregate
// CHECK-NEXT: graph @aggregate(%x: f32[*] loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}}), %n: i64 loc("{{.*}}graphs.cpp":{{[0-9]+:[0-9]+}})) {
// CHECK-NEXT:   %2: f32[*] = mul %x, %n
// CHECK-NEXT:   %3: f32[*] = sub %x, %n
// CHECK-NEXT:   return %2, %3
[[kiln::compile]] Pair aggregate(const Tensor &x, long n) {
  return {x * n, x - n};
}
