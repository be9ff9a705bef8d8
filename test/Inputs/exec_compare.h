// Compiled vs eager in one program, for the plugin's execution tests: each
// case runs a [[kiln::compile]] function with its fast path on, then off
// (kiln::set_compiled_enabled), and compares the results.
#pragma once

#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace exec_compare {

inline int g_cases = 0, g_mismatches = 0;

// Tolerance by dtype: the fused code keeps intermediates in the compute
// type (f32 for 16-bit floats) where eager rounds after every op.
inline double tolerance(kiln::DType dt) {
  switch (dt) {
  case kiln::DType::f64:
    return 1e-12;
  case kiln::DType::f32:
    return 2e-6;
  default:
    return 2e-2;
  }
}

// Runs `fn` compiled and eager; prints a line only on a mismatch, and says
// whether the compiled path was taken (`expect_compiled`).
inline void check(const std::string &name, kiln::DType dt,
                  const std::function<kiln::Tensor()> &fn,
                  bool expect_compiled = true) {
  ++g_cases;
  kiln::reset_stats();
  kiln::Tensor compiled = fn();
  kiln::Stats s = kiln::stats();
  kiln::set_compiled_enabled(false);
  kiln::Tensor eager = fn();
  kiln::set_compiled_enabled(true);
  bool took = s.compiled_calls == 1 && s.fallback_calls == 0;
  bool same_meta = compiled.dtype() == eager.dtype() &&
                   compiled.sizes() == eager.sizes();
  double scale = 1, diff = same_meta ? 0 : INFINITY;
  if (same_meta) {
    std::vector<double> c = compiled.to_vector<double>();
    std::vector<double> e = eager.to_vector<double>();
    for (size_t i = 0; i < e.size(); ++i) {
      scale = std::fmax(scale, std::fabs(e[i]));
      // NaN where the other is not NaN is a mismatch.
      double d = std::isnan(c[i]) || std::isnan(e[i])
                     ? (std::isnan(c[i]) == std::isnan(e[i]) ? 0 : INFINITY)
                     : std::fabs(c[i] - e[i]);
      diff = std::fmax(diff, d);
    }
  }
  if (!same_meta || !(diff <= tolerance(dt) * scale) ||
      took != expect_compiled) {
    ++g_mismatches;
    std::printf("MISMATCH %s [%s]: compiled %s eager %s, max diff %g, "
                "compiled path %s (expected %s)\n",
                name.c_str(), kiln::dtype_name(dt), compiled.str().c_str(),
                eager.str().c_str(), diff, took ? "taken" : "not taken",
                expect_compiled ? "taken" : "not taken");
  }
}

inline int summary() {
  std::printf("%d cases, %d mismatches\n", g_cases, g_mismatches);
  return g_mismatches ? 1 : 0;
}

} // namespace exec_compare
