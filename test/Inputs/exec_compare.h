// Compiled vs eager in one program, for the plugin's execution tests: each
// case runs a [[kiln::compile]] function with its fast path on, then off
// (kiln::set_compiled_enabled), and compares the results.
#pragma once

#include "compare.h"

#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace exec_compare {

inline int g_cases = 0, g_mismatches = 0;

// Runs `fn` compiled and eager, new tensors filled with NaN (an element the
// compiled code forgets to write shows); prints a line only on a mismatch
// (kiln_compare::difference, with `ref`, the float64 reference, where the
// case has one), and says whether the compiled path was taken
// (`expect_compiled`).
inline void check(const std::string &name, kiln::DType dt,
                  const std::function<kiln::Tensor()> &fn,
                  bool expect_compiled = true,
                  const kiln::Tensor &ref = kiln::Tensor()) {
  ++g_cases;
  kiln::set_fill_uninitialized(true);
  kiln::reset_stats();
  kiln::Tensor compiled = fn();
  kiln::Stats s = kiln::stats();
  kiln::set_compiled_enabled(false);
  kiln::Tensor eager = fn();
  kiln::set_compiled_enabled(true);
  bool took = s.compiled_calls == 1 && s.fallback_calls == 0;
  if (kiln::force_guard_failure()) // every call falls back
    expect_compiled = false;
  // With every guard made to fail both sides run eager code: no float64
  // reference decides, they must agree exactly.
  double diff = kiln_compare::difference(
      compiled, eager, kiln::force_guard_failure() ? kiln::Tensor() : ref);
  if (!(diff <= kiln_compare::tolerance(dt)) || took != expect_compiled) {
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
