// Numerics helpers for comparing results (kiln/ops.h): allclose and
// max_abs_diff, computed on the host in float64 (they copy GPU tensors back).
#include "detail.h"

#include <kiln/ops.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln {

using detail::fail;

static void check_pair(const Tensor &a, const Tensor &b, const char *fn) {
  if (!a.defined() || !b.defined())
    fail("%s: %s tensor is undefined", fn, !a.defined() ? "the first" : "the second");
  if (!(a.sizes() == b.sizes()))
    fail("%s: shapes %s and %s differ", fn, a.sizes().str().c_str(),
         b.sizes().str().c_str());
}

// As torch.allclose(a, b, rtol, atol, equal_nan=False): |a - b| <=
// atol + rtol * |b| everywhere; infinities are close only to themselves.
bool allclose(const Tensor &a, const Tensor &b, double rtol, double atol) {
  check_pair(a, b, "kiln::allclose");
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i])
      continue;
    if (std::isnan(x[i]) || std::isnan(y[i]) || std::isinf(x[i]) ||
        std::isinf(y[i]))
      return false;
    if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i])))
      return false;
  }
  return true;
}

// The largest |a - b|: equal values (infinities included) and NaN against
// NaN count 0; a NaN against a number makes the result NaN.
double max_abs_diff(const Tensor &a, const Tensor &b) {
  check_pair(a, b, "kiln::max_abs_diff");
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    bool nx = std::isnan(x[i]), ny = std::isnan(y[i]);
    if (nx != ny)
      return NAN;
    if (nx || x[i] == y[i])
      continue;
    m = std::max(m, std::fabs(x[i] - y[i]));
  }
  return m;
}

} // namespace kiln
