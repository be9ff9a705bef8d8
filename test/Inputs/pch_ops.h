// A header made into a PCH with the plugin (plugin/pch.cpp): the PCH holds
// the rewritten bodies.
#pragma once

#include <kiln/kiln.h>

[[kiln::compile]] inline kiln::Tensor pch_inline(const kiln::Tensor &x) {
  return kiln::sqrt(x) + 1.0;
}

[[kiln::compile]] kiln::Tensor pch_outline(const kiln::Tensor &x) {
  return x * 3.0;
}
