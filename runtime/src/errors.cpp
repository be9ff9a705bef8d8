// Error text helpers: every kiln::Error names the function and the values.
#include "detail.h"

#include <cstdio>
#include <vector>

namespace kiln::detail {

static std::string vformat(const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  char buf[512];
  int n = std::vsnprintf(buf, sizeof buf, fmt, copy);
  va_end(copy);
  if (n < 0)
    return fmt;
  if (size_t(n) < sizeof buf)
    return std::string(buf, size_t(n));
  std::vector<char> big(size_t(n) + 1);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  return std::string(big.data(), size_t(n));
}

std::string format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  throw Error(s);
}

int wrap_dim(int d, int rank, const char *fn) {
  // A 0-d tensor accepts dims -1 and 0, as in PyTorch.
  int r = rank > 0 ? rank : 1;
  if (d < -r || d >= r)
    fail("%s: dim %d is out of range for a tensor of rank %d (expected %d to "
         "%d)",
         fn, d, rank, -r, r - 1);
  return d < 0 ? d + r : d;
}

} // namespace kiln::detail
