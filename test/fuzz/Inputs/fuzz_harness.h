// The run side of the differential fuzzer (test/fuzz/kiln_fuzz.py).
//
// A generated translation unit holds random [[kiln::compile]] functions and,
// for each, a case: a function that makes the inputs from an Env, calls the
// function and hands back every tensor the call produced or touched
// (results, out-parameters, inputs updated in place). This header runs each
// case three ways, on fresh inputs each time:
//   compiled  fast paths on (what the plugin made),
//   eager     fast paths off (the original body: the specification),
//   float64   fast paths off, floating inputs as f64 (the arbiter),
// and, where compiled and eager disagree on a discrete result (a
// comparison, an argmax) and float64 sides with eager, the case's
// reference (see compare()),
// for two input sets (other sizes, the same ranks), and prints one line per
// case that kiln_fuzz.py reads:
//   CASE <k> BEGIN <name>
//   CASE <k> RESULT <ok|fail> <kind> <detail>
//   CASE <k> STATS compiled=<n> fallback=<n> guard_failures=<n>
// kinds: exception (one side threw), shape (definedness, dtype or shape),
// forced (a fast path ran under kiln::set_force_guard_failure, where values
// must equal eager's exactly),
// value (compiled farther from float64 than eager and than the tolerance),
// accuracy (compiled far less accurate than eager), refcount, alias.
// A crash or hang is seen by the driver: a BEGIN without its RESULT.
#pragma once

#include "../../Inputs/compare.h"

#include <kiln/kiln.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

// Graph breaks: calls the capture cannot see into (fuzz_opaque.cpp).
void fuzz_opaque_log(const kiln::Tensor &);
kiln::Tensor fuzz_opaque_scale(const kiln::Tensor &);

namespace fuzz {

using Outputs = std::vector<kiln::Tensor>;

namespace detail {
// The dtype fuzz::rounded() rounds f64 tensors to: the coarsest floating
// dtype of the inputs of the reference run; f64 (none) otherwise.
inline kiln::DType g_round_to = kiln::DType::f64;

inline int mantissa_bits(kiln::DType dt) {
  switch (dt) {
  case kiln::DType::bf16:
    return 8;
  case kiln::DType::f16:
    return 11;
  case kiln::DType::f32:
    return 24;
  default:
    return 53;
  }
}
} // namespace detail

// In the reference function, the operands of comparisons and argmax: in
// the float64 run, rounded to the dtype they have in the eager run.
inline kiln::Tensor rounded(const kiln::Tensor &t) {
  if (!t.defined() || t.dtype() != kiln::DType::f64 ||
      detail::g_round_to == kiln::DType::f64)
    return t;
  return t.to(detail::g_round_to).to(kiln::DType::f64);
}
template <class S>
  requires std::is_arithmetic_v<S>
S rounded(S s) {
  return s;
}

// Inputs of one run: the same values for a given (seed, set), whichever
// way the case runs; floating tensors as f64 for the float64 run.
class Env {
public:
  // reference: the inputs of a reference run, which set what
  // fuzz::rounded() rounds to.
  Env(uint64_t seed, int set, kiln::Device dev, bool f64, bool reference = false)
      : state_(seed * 0x9E3779B97F4A7C15ull + uint64_t(set) + 1), set_(set),
        dev_(dev), f64_(f64), reference_(reference) {}

  int set() const { return set_; }

  // dist: 0 normal, 1 uniform [1, 2), 2 normal with zeros, infinities and
  // NaN mixed in.
  kiln::Tensor input(std::initializer_list<kiln::Dims> shapes, kiln::DType dt,
                     int dist = 0) {
    const kiln::Dims &shape = shapes.begin()[std::min<size_t>(set_, shapes.size() - 1)];
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (double &x : v)
      x = draw(dt, dist);
    kiln::Tensor t = kiln::from_vector(v, shape).to(dt);
    if (f64_ && kiln::is_floating(dt)) {
      t = t.to(kiln::DType::f64);
      if (reference_ &&
          detail::mantissa_bits(dt) < detail::mantissa_bits(detail::g_round_to))
        detail::g_round_to = dt;
    }
    return t.to(dev_);
  }
  // An out-parameter's starting value: a small tensor the call replaces.
  kiln::Tensor out() { return input({kiln::Dims{2}}, kiln::DType::f32); }

private:
  uint64_t next() { // splitmix64
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }
  double draw(kiln::DType dt, int dist) {
    if (dt == kiln::DType::b8)
      return double(next() & 1);
    if (!kiln::is_floating(dt))
      return double(int(next() % 11) - 5);
    if (dist == 1)
      return 1 + uniform();
    if (dist == 2) {
      uint64_t r = next() % 16;
      if (r == 0)
        return 0.0;
      if (r == 1)
        return (next() & 1) ? INFINITY : -INFINITY;
      if (r == 2)
        return NAN;
    }
    double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  uint64_t state_;
  int set_;
  kiln::Device dev_;
  bool f64_;
  bool reference_;
};

struct Case {
  const char *name;
  Outputs (*run)(Env &);
  uint64_t seed; // of the inputs
  // The same body, not compiled, reading the operands of comparisons and
  // argmax through fuzz::rounded (kiln_fuzz.py writes it where the body
  // has such ops).
  Outputs (*reference)(Env &) = nullptr;
};

struct Run {
  Outputs outs;
  bool threw = false;
  std::string what;
  kiln::Stats stats;
  std::vector<int> refs;     // storage references of each output
  std::vector<int> same_as;  // the first earlier output sharing its storage
};

// reference: run the case's reference function (float64 only).
inline Run run_once(const Case &c, uint64_t seed, int set, kiln::Device dev,
                    bool compiled, bool f64, bool reference = false) {
  Run r;
  kiln::set_compiled_enabled(compiled);
  kiln::reset_stats();
  detail::g_round_to = kiln::DType::f64; // the reference's inputs set it
  try {
    Env e(seed, set, dev, f64, reference);
    r.outs = (reference ? c.reference : c.run)(e);
  } catch (const std::exception &ex) {
    r.threw = true;
    r.what = ex.what();
  }
  detail::g_round_to = kiln::DType::f64;
  r.stats = kiln::stats();
  kiln::set_compiled_enabled(true);
  for (size_t i = 0; i < r.outs.size(); ++i) {
    const kiln::Tensor &t = r.outs[i];
    r.refs.push_back(t.defined() ? int(t.storage()->refs.load()) : 0);
    int same = -1;
    for (size_t j = 0; j < i && same < 0; ++j)
      if (t.defined() && r.outs[j].defined() &&
          t.storage() == r.outs[j].storage())
        same = int(j);
    r.same_as.push_back(same);
  }
  return r;
}

inline double dtype_eps(kiln::DType dt) {
  switch (dt) {
  case kiln::DType::f64:
    return 0x1p-52;
  case kiln::DType::f32:
    return 0x1p-23;
  case kiln::DType::f16:
    return 0x1p-10;
  case kiln::DType::bf16:
    return 0x1p-7;
  default:
    return 0;
  }
}

// The compare.h rule on values alone (dtypes may differ: the float64 run).
inline double value_difference(const kiln::Tensor &got, const kiln::Tensor &want) {
  if (!(got.sizes() == want.sizes()))
    return INFINITY;
  return kiln_compare::difference(got.to(kiln::DType::f64),
                                  want.to(kiln::DType::f64));
}

// Elements where compiled and eager differ and compiled is not the
// float64 value while eager is: for integer and bool results. With the
// reference's result `ref`, compiled may also be that (see compare()).
inline int64_t wrong_discrete(const kiln::Tensor &c, const kiln::Tensor &e,
                              const kiln::Tensor &r,
                              const kiln::Tensor *ref = nullptr) {
  std::vector<double> cv = c.to_vector<double>(), ev = e.to_vector<double>();
  std::vector<double> rv = r.to_vector<double>();
  std::vector<double> fv = ref ? ref->to_vector<double>() : std::vector<double>();
  int64_t bad = 0;
  for (size_t i = 0; i < cv.size(); ++i) {
    bool same = cv[i] == ev[i] || (std::isnan(cv[i]) && std::isnan(ev[i]));
    if (!same && cv[i] != rv[i] && ev[i] == rv[i] && (!ref || cv[i] != fv[i]))
      ++bad;
  }
  return bad;
}

struct Verdict {
  const char *kind = nullptr; // nullptr: agrees
  std::string detail;
};

// The reference run of a case, made when first needed.
//
// Why: a discrete result (a comparison, an argmax) of floating values
// flips where values tie to within a rounding. Eager rounds every op to
// its dtype; compiled code keeps f32 between ops and rounds an f16/bf16
// operand of a comparison or argmax to its dtype (codegen's LowerElement:
// so that thresholds and ties agree with eager where eager is exact); the
// float64 run rounds nothing. Where eager's operand carries a rounding
// error of earlier ops, compiled (reading the correctly rounded value) and
// eager may tie differently, and float64, which sees no tie, sides with
// whichever lands on its side by chance. The reference run (float64, the
// operands of comparisons and argmax rounded to the inputs' dtype) is
// what compiled code computes, without its f32 errors: compiled agreeing
// with it is right too.
class Reference {
public:
  Reference(const Case &c, uint64_t seed, int set, kiln::Device dev)
      : c_(c), seed_(seed), set_(set), dev_(dev) {}
  // Output i of the reference run, or null (no reference, it threw, or the
  // output's shape differs from `like`'s).
  const kiln::Tensor *output(size_t i, const kiln::Tensor &like) {
    if (!c_.reference)
      return nullptr;
    if (!run_) {
      run_ = run_once(c_, seed_, set_, dev_, false, true, true);
    }
    if (run_->threw || i >= run_->outs.size() || !run_->outs[i].defined() ||
        !(run_->outs[i].sizes() == like.sizes()))
      return nullptr;
    return &run_->outs[i];
  }

private:
  const Case &c_;
  uint64_t seed_;
  int set_;
  kiln::Device dev_;
  std::optional<Run> run_;
};

inline Verdict compare(const Run &c, const Run &e, const Run &r,
                       Reference *reference = nullptr) {
  char buf[512];
  if (c.threw != e.threw) {
    std::snprintf(buf, sizeof buf, "compiled %s, eager %s",
                  c.threw ? ("threw '" + c.what + "'").c_str() : "returned",
                  e.threw ? ("threw '" + e.what + "'").c_str() : "returned");
    return {"exception", buf};
  }
  if (c.threw)
    return {};
  if (c.outs.size() != e.outs.size())
    return {"shape", "a different number of outputs"};
  for (size_t i = 0; i < c.outs.size(); ++i) {
    const kiln::Tensor &ct = c.outs[i], &et = e.outs[i];
    if (ct.defined() != et.defined() ||
        (ct.defined() && (ct.dtype() != et.dtype() || !(ct.sizes() == et.sizes())))) {
      std::snprintf(buf, sizeof buf, "output %zu: compiled %s, eager %s", i,
                    ct.defined() ? ct.str().c_str() : "undefined",
                    et.defined() ? et.str().c_str() : "undefined");
      return {"shape", buf};
    }
  }
  for (size_t i = 0; i < c.outs.size(); ++i) {
    if (c.same_as[i] != e.same_as[i]) {
      std::snprintf(buf, sizeof buf,
                    "output %zu shares storage with output %d compiled, %d eager",
                    i, c.same_as[i], e.same_as[i]);
      return {"alias", buf};
    }
    if (c.refs[i] != e.refs[i]) {
      std::snprintf(buf, sizeof buf,
                    "output %zu: %d references to its storage compiled, %d eager",
                    i, c.refs[i], e.refs[i]);
      return {"refcount", buf};
    }
  }
  bool have_ref = !r.threw && r.outs.size() == c.outs.size();
  for (size_t i = 0; i < c.outs.size(); ++i) {
    const kiln::Tensor &ct = c.outs[i], &et = e.outs[i];
    if (!ct.defined())
      continue;
    kiln::DType dt = ct.dtype();
    const kiln::Tensor *rt = have_ref && r.outs[i].defined() &&
                                     r.outs[i].sizes() == ct.sizes()
                                 ? &r.outs[i]
                                 : nullptr;
    if (!kiln::is_floating(dt)) {
      int64_t bad = 0;
      if (kiln::force_guard_failure())
        bad = value_difference(ct, et) != 0;
      else if (rt) {
        bad = wrong_discrete(ct, et, *rt);
        // Compiled may also agree with the rounded reference (compare()).
        if (bad && reference)
          if (const kiln::Tensor *ft = reference->output(i, ct))
            bad = wrong_discrete(ct, et, *rt, ft);
      } else if (value_difference(ct, et) != 0)
        bad = 1;
      if (bad) {
        std::snprintf(buf, sizeof buf,
                      "output %zu (%s): %" PRId64 " elements differ from eager "
                      "where eager equals the float64 result",
                      i, kiln::dtype_name(dt), bad);
        return {"value", buf};
      }
      continue;
    }
    double diff = value_difference(ct, et);
    double tol = kiln_compare::tolerance(dt); // 0 when guards are made to fail
    double err_c = rt ? value_difference(ct, *rt) : diff;
    double err_e = rt ? value_difference(et, *rt) : 0;
    if (!kiln_compare::acceptable(diff, tol, err_c, err_e)) {
      std::snprintf(buf, sizeof buf,
                    "output %zu (%s): compiled vs eager %g (tolerance %g); "
                    "vs float64: compiled %g, eager %g",
                    i, kiln::dtype_name(dt), diff, tol, err_c, err_e);
      return {"value", buf};
    }
    // Accuracy: several units in the last place worse than eager (not for
    // f64: there the float64 run is the eager run).
    double floor = 4 * dtype_eps(dt);
    if (rt && dt != kiln::DType::f64 && std::isfinite(err_c) && err_c > floor &&
        err_c > 4 * err_e) {
      std::snprintf(buf, sizeof buf,
                    "output %zu (%s): vs float64 compiled %g, eager %g",
                    i, kiln::dtype_name(dt), err_c, err_e);
      return {"accuracy", buf};
    }
  }
  return {};
}

inline int main(int argc, char **argv, const Case *cases, int n) {
  int from = 0;
#ifdef FUZZ_CUDA // a test that runs its cases on the GPU by default
  kiln::Device dev = kiln::Device::cuda();
#else
  kiln::Device dev = kiln::Device::cpu();
#endif
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--from") && i + 1 < argc)
      from = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--cuda"))
      dev = kiln::Device::cuda();
  }
  kiln::set_fill_uninitialized(true);
  for (int k = from; k < n; ++k) {
    std::printf("CASE %d BEGIN %s\n", k, cases[k].name);
    std::fflush(stdout);
    Verdict v;
    kiln::Stats total;
    int set = 0;
    for (; set < 2 && !v.kind; ++set) {
      uint64_t s = cases[k].seed;
      Run c = run_once(cases[k], s, set, dev, true, false);
      Run e = run_once(cases[k], s, set, dev, false, false);
      Run r = run_once(cases[k], s, set, dev, false, true);
      total.compiled_calls += c.stats.compiled_calls;
      total.fallback_calls += c.stats.fallback_calls;
      total.guard_failures += c.stats.guard_failures;
      Reference reference(cases[k], s, set, dev);
      v = compare(c, e, r, &reference);
      if (!v.kind && kiln::force_guard_failure() && c.stats.compiled_calls)
        v = {"forced", "a fast path ran with every guard made to fail"};
    }
    std::printf("CASE %d STATS compiled=%" PRIu64 " fallback=%" PRIu64
                " guard_failures=%" PRIu64 "\n",
                k, total.compiled_calls, total.fallback_calls,
                total.guard_failures);
    if (v.kind)
      std::printf("CASE %d RESULT fail %s set %d: %s\n", k, v.kind, set - 1,
                  v.detail.c_str());
    else
      std::printf("CASE %d RESULT ok\n", k);
    std::fflush(stdout);
  }
  return 0;
}

} // namespace fuzz
