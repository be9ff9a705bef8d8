// The tanh approximation of GELU written out by hand, as in GPT-2:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Eight eager kernels,
// one compiled; bf16 in and out with f32 arithmetic inside.
#include "example.h"

using kiln::Tensor;

[[kiln::compile]]
Tensor gelu_tanh(const Tensor &x) {
  Tensor inner = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + kiln::tanh(inner));
}

int main() {
  kiln::Device dev = example::pick_device();
  int64_t n = dev.is_cuda() ? (int64_t(1) << 26) : (int64_t(1) << 22);
  Tensor x = kiln::randn({n}, kiln::f32, dev);
  int rc = example::report("gelu-tanh f32", gelu_tanh, dev, x);
  Tensor xb = x.to(kiln::bf16);
  return rc | example::report("gelu-tanh bf16", gelu_tanh, dev, xb);
}
