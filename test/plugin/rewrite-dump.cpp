// The rewritten body as clang prints it: the original body kept as the
// fallback behind a call of the fast path, all parameters passed (scalars
// as runtime values), and the result returned from a local.
// RUN: %kiln_cxx -fsyntax-only %kiln_dump %s 2>&1 | FileCheck %s
#include <kiln/kiln.h>

// CHECK-LABEL: // kiln-dump: rewrite sin_plus_cos
// CHECK-NEXT: {{.*}}kiln::Tensor sin_plus_cos(const kiln::Tensor &x, const kiln::Tensor &y) {
// CHECK-NEXT:     kiln::Tensor __kiln_out0;
// CHECK-NEXT:     if ([[SYM:kiln_sin_plus_cos_[0-9a-f]+]](x, y, &__kiln_out0))
// CHECK-NEXT:         return __kiln_out0;
// CHECK-NEXT:     {
// CHECK-NEXT:         kiln::Tensor a = kiln::sin(x);
// CHECK-NEXT:         auto b = kiln::cos(y);
// CHECK-NEXT:         return a + b;
// CHECK-NEXT:     }
// CHECK-NEXT: }
[[kiln::compile]] kiln::Tensor sin_plus_cos(const kiln::Tensor &x,
                                            const kiln::Tensor &y) {
  kiln::Tensor a = kiln::sin(x);
  auto b = kiln::cos(y);
  return a + b;
}

namespace model {
// Functions inside namespaces and scalar parameters; only what the body
// reads is passed (not `flag`, nor the unnamed parameter).
// CHECK-LABEL: // kiln-dump: rewrite model::scale
// CHECK:     if (kiln_model_scale_{{[0-9a-f]+}}(x, alpha, n, &__kiln_out0))
// CHECK-NEXT:         return __kiln_out0;
[[kiln::compile]] kiln::Tensor scale(kiln::Tensor x, double alpha, long n,
                                     bool flag, int) {
  return kiln::clamp(x * alpha, -n, n);
}
} // namespace model

// In-class definitions come through HandleInlineFunctionDefinition.
struct Layer {
  // CHECK-LABEL: // kiln-dump: rewrite Layer::forward
  // CHECK:     if (kiln_Layer_forward_{{[0-9a-f]+}}(x, &__kiln_out0))
  [[kiln::compile]] kiln::Tensor forward(const kiln::Tensor &x) {
    return kiln::gelu(x, "tanh");
  }
};

// extern "C" functions keep their plain name in the symbol.
// CHECK-LABEL: // kiln-dump: rewrite c_api
// CHECK:     if (kiln_c_api_{{[0-9a-f]+}}(x, &__kiln_out0))
extern "C" {
[[kiln::compile]] kiln::Tensor c_api(const kiln::Tensor &x) {
  return kiln::relu(x);
}
}

// Not marked: not rewritten.
// CHECK-NOT: kiln-dump: rewrite plain
kiln::Tensor plain(const kiln::Tensor &x) { return kiln::exp(x); }

// A std::vector the region fills and later code reads (after a call Kiln
// cannot see): declared before the region, emptied and filled with the
// fast path's tensors in order; the fallback assigns its initialiser.
void opaque_use(const kiln::Tensor &);
// CHECK-LABEL: // kiln-dump: rewrite heads_then_log
// CHECK:      std::vector<kiln::Tensor> outs;
// CHECK-NEXT: {
// CHECK-NEXT:     kiln::Tensor __kiln_o1_0;
// CHECK-NEXT:     kiln::Tensor __kiln_o1_1;
// CHECK-NEXT:     kiln::Tensor __kiln_o1_2;
// CHECK-NEXT:     if (kiln_heads_then_log_{{[0-9a-f]+}}(x, &__kiln_o1_0, &__kiln_o1_1, &__kiln_o1_2)) {
// CHECK-NEXT:         outs.clear();
// CHECK-NEXT:         outs.push_back(__kiln_o1_0);
// CHECK-NEXT:         outs.push_back(__kiln_o1_1);
// CHECK-NEXT:         outs.push_back(__kiln_o1_2);
// CHECK-NEXT:     } else {
// CHECK-NEXT:         outs = {x};
// CHECK-NEXT:         for (int h = 1; h < 3; ++h)
// CHECK-NEXT:             outs.push_back(kiln::sin(x * double(h)));
// CHECK-NEXT:     }
// CHECK-NEXT: }
// CHECK-NEXT: opaque_use(outs[0]);
[[kiln::compile]] kiln::Tensor heads_then_log(const kiln::Tensor &x) {
  std::vector<kiln::Tensor> outs = {x};
  for (int h = 1; h < 3; ++h)
    outs.push_back(kiln::sin(x * double(h)));
  opaque_use(outs[0]);
  return kiln::cat(outs, -1);
}
