// Compiled functions called from 16 threads at once, the first call
// included (test/plugin/threads*.cpp): every thread's results equal every
// other's bitwise (the same kernels on the same inputs) and eager's within
// tolerance, and every call took the compiled path.
#pragma once

#include "compare.h"

#include <kiln/kiln.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace threads_cases {

using kiln::Tensor;

[[kiln::compile]] inline Tensor pointwise(const Tensor &x, const Tensor &y, double a) {
  return kiln::sin(x) * a + kiln::cos(y);
}
[[kiln::compile]] inline Tensor rows(const Tensor &x) {
  return kiln::softmax(x, -1) * 2;
}
[[kiln::compile]] inline Tensor whole(const Tensor &x) {
  return kiln::where(kiln::sum(x) > 0, x * 2, x);
}
// Not inlined (recursive): a graph break between two regions.
inline Tensor opaque(const Tensor &x, int n) { return n ? opaque(x, n - 1) : x + 1; }
[[kiln::compile]] inline Tensor regions(const Tensor &x) {
  Tensor t = kiln::exp(-x * x);
  t = opaque(t, 2);
  return kiln::tanh(t) * 3;
}

constexpr int kThreads = 16;
constexpr int kFunctions = 4;
constexpr int kRegions = 5; // compiled regions run by one round of calls

inline std::vector<Tensor> round(const std::vector<Tensor> &in) {
  return {pointwise(in[0], in[1], 0.5), rows(in[2]), whole(in[3]), regions(in[0])};
}

inline int run(int iterations, kiln::Device dev = kiln::Device::cpu()) {
  kiln::manual_seed(3);
  std::vector<Tensor> in = {kiln::randn({64, 33}), kiln::randn({33}),
                            kiln::randn({16, 1000}), kiln::randn({70000})};
  for (Tensor &t : in)
    t = t.to(dev);
  std::vector<std::vector<Tensor>> got(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  kiln::reset_stats();
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      } // every thread makes its first call at once
      for (int i = 0; i < iterations; ++i)
        got[t] = round(in);
    });
  for (std::thread &th : pool)
    th.join();
  kiln::Stats s = kiln::stats();
  kiln::set_compiled_enabled(false);
  std::vector<Tensor> eager = round(in);
  kiln::set_compiled_enabled(true);
  int bad = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int f = 0; f < kFunctions; ++f) {
      double vs_first = kiln::max_abs_diff(got[t][f], got[0][f]);
      double vs_eager = kiln_compare::difference(got[t][f], eager[f]);
      if (vs_first != 0 || !(vs_eager <= kiln_compare::tolerance(kiln::DType::f32))) {
        ++bad;
        std::printf("MISMATCH thread %d function %d: vs thread 0 %g, vs eager %g\n",
                    t, f, vs_first, vs_eager);
      }
    }
  std::printf("compiled=%llu fallback=%llu (of %d)\n",
              (unsigned long long)s.compiled_calls, (unsigned long long)s.fallback_calls,
              kThreads * iterations * kRegions);
  std::printf("%d threads, %d mismatches\n", kThreads, bad);
  return bad ? 1 : 0;
}

} // namespace threads_cases
