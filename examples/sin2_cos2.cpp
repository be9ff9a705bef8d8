// sin(x)^2 + cos(x)^2: four pointwise ops, one fused kernel. (The identity
// "= 1" is a value-changing rewrite; Kiln applies it only when asked,
// with [[kiln::compile("unsafe-math")]].)
#include "example.h"

using kiln::Tensor;

[[kiln::compile]]
Tensor sin2_cos2(const Tensor &x) {
  return kiln::pow(kiln::sin(x), 2) + kiln::pow(kiln::cos(x), 2);
}

int main() {
  kiln::Device dev = example::pick_device();
  int64_t n = dev.is_cuda() ? (int64_t(1) << 26) : (int64_t(1) << 22);
  Tensor x = kiln::randn({n}, kiln::f32, dev);
  return example::report("sin^2+cos^2", sin2_cos2, dev, x);
}
