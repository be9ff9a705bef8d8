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

// Regions around a graph break, with an in-place update guarded against
// aliasing: the PCH stores what is needed to generate their fast paths
// again in each TU that uses it.
void pch_log(const kiln::Tensor &);
[[kiln::compile]] inline kiln::Tensor pch_regions(kiln::Tensor &acc,
                                                  const kiln::Tensor &x,
                                                  bool flag) {
  acc += x * 2.0;
  kiln::Tensor y = flag ? kiln::exp(x) : kiln::sin(x);
  pch_log(y);
  return y + acc;
}

// A parameter of its own dtype: the PCH keeps [[kiln::dtype]] for the
// fast paths generated again (else the i64 ids would fail the guard).
[[kiln::compile]] inline kiln::Tensor
pch_pinned(const kiln::Tensor &x, [[kiln::dtype("i64")]] const kiln::Tensor &ids) {
  return x + ids;
}
