// Shared by the examples: pick a device, time a call, compare results.
// Each example runs its [[kiln::compile]] function compiled and eager
// (kiln::set_compiled_enabled(false) makes it run its original body) and
// against a float64 reference, and prints one line per run.
#pragma once

#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace example {

inline kiln::Device pick_device() {
  return kiln::cuda_available() ? kiln::Device::cuda(0) : kiln::Device::cpu();
}

// Median wall time of f() in milliseconds, device work included.
template <class F> double median_ms(F &&f, kiln::Device dev, int reps = 20) {
  for (int i = 0; i < 3; ++i)
    f();
  if (dev.is_cuda())
    kiln::synchronize(dev);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    if (dev.is_cuda())
      kiln::synchronize(dev);
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// Runs `fn(args...)` eager and compiled, checks both against the float64
// reference (the eager body on f64 copies of the inputs), prints a line,
// and returns nonzero when compiled disagrees or did not run.
template <class Fn, class... Args>
int report(const char *name, Fn fn, kiln::Device dev, const Args &...args) {
  kiln::set_compiled_enabled(false);
  kiln::Tensor ref = fn(args.to(kiln::f64)...).to(kiln::Device::cpu());
  kiln::Tensor eager = fn(args...);
  double eager_ms = median_ms([&] { fn(args...); }, dev);
  kiln::set_compiled_enabled(true);

  kiln::reset_stats();
  kiln::Tensor compiled = fn(args...);
  kiln::Stats st = kiln::stats();
  double compiled_ms = median_ms([&] { fn(args...); }, dev);

  double err_eager = kiln::max_abs_diff(eager.to(kiln::Device::cpu()).to(kiln::f64), ref);
  double err_compiled = kiln::max_abs_diff(compiled.to(kiln::Device::cpu()).to(kiln::f64), ref);
  std::printf("%-14s %-6s %10lld elems  eager %8.3f ms  compiled %8.3f ms  "
              "speedup %5.2fx  max|err| eager %.2e compiled %.2e  "
              "(compiled calls %llu, kernels per call %llu)\n",
              name, dev.str().c_str(), (long long)compiled.numel(), eager_ms,
              compiled_ms, eager_ms / compiled_ms, err_eager, err_compiled,
              (unsigned long long)st.compiled_calls,
              (unsigned long long)st.kernel_launches);
  if (st.compiled_calls != 1) {
    std::printf("  note: the compiled path did not run (built without the "
                "Kiln plugin?)\n");
    return 0;
  }
  // Compiled keeps f32 intermediates where eager rounds each op's result,
  // so it is at least as close to the reference; allow rounding noise.
  bool ok = err_compiled <= 2 * err_eager + 1e-5;
  if (!ok)
    std::printf("  FAILED: compiled is further from the float64 reference than eager\n");
  return ok ? 0 : 1;
}

} // namespace example
