// A compiled inline function used by two TUs of one program (plugin tests).
#pragma once

#include <kiln/kiln.h>

[[kiln::compile]] inline kiln::Tensor shared_op(const kiln::Tensor &x) {
  return x * 10.0 + 1.0;
}
