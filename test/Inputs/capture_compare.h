// Compiled against eager for the capture tests (test/plugin/capture): each
// case builds its inputs afresh (so in-place updates start from the same
// state both times), runs with the fast paths on and then off
// (kiln::set_compiled_enabled), and compares every tensor the case hands
// back: results, out-parameters, inputs updated in place, members. The
// counters of the compiled run must show how many fast paths ran (one per
// compiled region executed) and how many fell back, and, where the case
// gives them, how many kernels it launched and a float64 reference for
// each tensor (which decides where eager rounded a 16-bit intermediate).
#pragma once

#include "compare.h"

#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

// The backend the tests' functions compile with: -DBACKEND='"backend=eager"'
// makes every fast path run the captured graph op by op.
#ifndef BACKEND
#define BACKEND "backend=kiln"
#endif
#define COMPILE [[kiln::compile(BACKEND)]]

namespace capture_compare {

// Kernels a case expects: n with the kiln backend; with the eager backend
// one per captured op, so not checked (-1).
inline int64_t kernels(int64_t n) {
  return std::string(BACKEND) == "backend=eager" ? -1 : n;
}

inline int g_cases = 0, g_mismatches = 0;

inline void check(const std::string &name, kiln::DType dt,
                  const std::function<std::vector<kiln::Tensor>()> &fn,
                  uint64_t compiled_calls = 1, uint64_t fallback_calls = 0,
                  int64_t kernels = -1,
                  const std::vector<kiln::Tensor> &refs = {}) {
  ++g_cases;
  kiln::set_fill_uninitialized(true); // NaN in what a kernel forgets to write
  kiln::reset_stats();
  std::vector<kiln::Tensor> compiled = fn();
  kiln::Stats s = kiln::stats();
  kiln::set_compiled_enabled(false);
  std::vector<kiln::Tensor> eager = fn();
  kiln::set_compiled_enabled(true);
  const double tol = kiln_compare::tolerance(dt);
  double diff = compiled.size() == eager.size() ? 0 : INFINITY;
  bool close = compiled.size() == eager.size();
  for (size_t i = 0; i < compiled.size() && i < eager.size(); ++i) {
    const bool has_ref = i < refs.size() && !kiln::force_guard_failure() &&
                         refs[i].defined() && compiled[i].defined() &&
                         eager[i].defined();
    const double d = kiln_compare::difference(
        compiled[i], eager[i], has_ref ? refs[i] : kiln::Tensor());
    diff = std::fmax(diff, d);
    if (!has_ref) {
      close = close && kiln_compare::acceptable(d, tol);
      continue;
    }
    auto f64 = [](const kiln::Tensor &t) { return t.to(kiln::DType::f64); };
    close = close && kiln_compare::acceptable(
                         d, tol, kiln_compare::difference(f64(compiled[i]), f64(refs[i])),
                         kiln_compare::difference(f64(eager[i]), f64(refs[i])));
  }
  bool counters = s.compiled_calls == compiled_calls &&
                  s.fallback_calls == fallback_calls &&
                  (kernels < 0 || int64_t(s.kernel_launches) == kernels);
  // With every guard made to fail, each call runs the original body (whose
  // calls of other compiled functions fall back too): eager's results
  // exactly, and no fast path.
  if (kiln::force_guard_failure())
    counters = s.compiled_calls == 0 &&
               s.fallback_calls >= compiled_calls + fallback_calls;
  if (!close || !counters) {
    ++g_mismatches;
    std::printf("MISMATCH %s [%s]: max diff %g; compiled calls %llu (expected "
                "%llu), fallbacks %llu (expected %llu), kernels %llu "
                "(expected %lld)\n",
                name.c_str(), kiln::dtype_name(dt), diff,
                (unsigned long long)s.compiled_calls,
                (unsigned long long)compiled_calls,
                (unsigned long long)s.fallback_calls,
                (unsigned long long)fallback_calls,
                (unsigned long long)s.kernel_launches, (long long)kernels);
  }
}

inline kiln::Tensor input(kiln::Dims shape, kiln::DType dt, uint64_t seed,
                          kiln::Device dev = kiln::Device::cpu()) {
  kiln::manual_seed(seed);
  return kiln::randn(shape, kiln::DType::f32).to(dt).to(dev);
}

// What f returns with every fast path off: the original bodies, eagerly
// (on float64 copies of the inputs, a case's reference).
template <class F> auto eager_reference(F f) {
  kiln::set_compiled_enabled(false);
  auto r = f();
  kiln::set_compiled_enabled(true);
  return r;
}
inline kiln::Tensor on_cpu(const kiln::Tensor &t) {
  return t.to(kiln::Device::cpu());
}
inline kiln::Tensor as_f64(const kiln::Tensor &t) { return t.to(kiln::f64); }

// A call eager raises on raises compiled too (its guard fails and the
// original body raises): prints "ok: <what>", or counts a mismatch.
template <class F> void expect_raises(const std::string &what, F f) {
  bool raised = false;
  try {
    (void)f();
  } catch (const std::exception &) {
    raised = true;
  }
  std::printf("%s: %s\n", raised ? "ok" : "MISMATCH", what.c_str());
  g_mismatches += !raised;
}

inline int summary() {
  std::printf("%d cases, %d mismatches\n", g_cases, g_mismatches);
  return g_mismatches ? 1 : 0;
}

} // namespace capture_compare
