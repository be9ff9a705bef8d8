// Three [[kiln::compile]] functions in one file: the cold/warm build cost
// bench/build_cost.py measures beside the examples.
#include <kiln/kiln.h>
using kiln::Tensor;

[[kiln::compile]] Tensor sin_plus_cos(const Tensor &x, const Tensor &y) {
  return kiln::sin(x) + kiln::cos(y);
}

[[kiln::compile]] Tensor gelu_tanh(const Tensor &x) {
  return 0.5 * x * (1.0 + kiln::tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
}

[[kiln::compile]] Tensor softmax_rows(const Tensor &x) {
  Tensor e = kiln::exp(x - kiln::amax(x, -1, true));
  return e / kiln::sum(e, -1, true);
}
