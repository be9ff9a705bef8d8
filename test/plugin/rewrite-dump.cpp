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
