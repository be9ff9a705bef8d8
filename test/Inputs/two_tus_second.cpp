// The second TU of plugin/two-tus.cpp: same function names as the first.
#include "shared_ops.h"

namespace {
[[kiln::compile]] kiln::Tensor local_op(const kiln::Tensor &x) {
  return x - 2.0;
}
} // namespace

[[kiln::compile]] static kiln::Tensor helper(const kiln::Tensor &x) {
  return x * x;
}

kiln::Tensor second(const kiln::Tensor &x) {
  return shared_op(x) + local_op(x) + helper(x);
}
