// The seed model: forward(input) = (self.x + input) * (self.x - input),
// with the member tensor passed in (member functions come with capture of
// members). Three eager kernels, one compiled.
#include "example.h"

using kiln::Tensor;

[[kiln::compile]]
Tensor seed_model(const Tensor &c, const Tensor &x) {
  Tensor x1 = c + x;
  Tensor x2 = c - x;
  return x1 * x2;
}

int main() {
  kiln::Device dev = example::pick_device();
  int64_t rows = dev.is_cuda() ? 8192 : 1024, cols = 4096;
  Tensor c = kiln::randn({rows, cols}, kiln::f32, dev);
  Tensor x = kiln::randn({rows, cols}, kiln::f32, dev);
  int rc = example::report("seed model", seed_model, dev, c, x);
  // The seed's shapes: c is 3x3, the input broadcasts against it.
  Tensor c3 = kiln::randn({3, 3}, kiln::f32, dev);
  Tensor row = kiln::randn({3}, kiln::f32, dev);
  return rc | example::report("seed 3x3+[3]", seed_model, dev, c3, row);
}
