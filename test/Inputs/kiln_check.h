// Helpers for the plugin's execution tests: print a tensor's values and
// the runtime counters in a form FileCheck can match.
#pragma once

#include <kiln/kiln.h>

#include <cstdio>

namespace kiln_check {

inline void print(const char *label, const kiln::Tensor &t) {
  std::printf("%s:", label);
  for (double v : t.to_vector<double>())
    std::printf(" %.4f", v);
  std::printf("\n");
}

// "compiled=<n> fallback=<n>": whether the fast path really ran.
inline void print_stats() {
  kiln::Stats s = kiln::stats();
  std::printf("compiled=%llu fallback=%llu\n",
              (unsigned long long)s.compiled_calls,
              (unsigned long long)s.fallback_calls);
}

} // namespace kiln_check
