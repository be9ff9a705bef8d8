// The seeds' first program: torch.compile's hello world, sin(x) + cos(y).
// With the Kiln plugin this is one fused kernel (CUDA) or loop (CPU).
#include "example.h"

using kiln::Tensor;

[[kiln::compile]]
Tensor sin_plus_cos(const Tensor &x, const Tensor &y) {
  Tensor a = kiln::sin(x);
  Tensor b = kiln::cos(y);
  return a + b;
}

int main() {
  kiln::Device dev = example::pick_device();
  int64_t n = dev.is_cuda() ? (int64_t(1) << 26) : (int64_t(1) << 22);
  Tensor x = kiln::randn({n}, kiln::f32, dev);
  Tensor y = kiln::randn({n}, kiln::f32, dev);
  return example::report("sin+cos", sin_plus_cos, dev, x, y);
}
