// Timing for benchmarks: CPU with the steady clock; CUDA through events
// (runtime/cuda/timing.cu).
#include <kiln/timing.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

namespace kiln {

#if KILN_HAVE_CUDA
namespace detail {
std::vector<double> cuda_time_calls(Device dev, const std::function<void()> &fn,
                                    int warmup, int reps, int calls);
double cuda_copy_bandwidth(Device dev, size_t bytes, int reps);
double cuda_bare_launch_us(Device dev, int reps);
} // namespace detail
#endif

std::vector<double> time_calls(Device dev, const std::function<void()> &fn,
                               int warmup, int reps, int calls) {
  if (reps < 1 || calls < 1)
    throw Error("kiln::time_calls: reps and calls must be positive");
  if (dev.is_cuda()) {
#if KILN_HAVE_CUDA
    return detail::cuda_time_calls(dev, fn, warmup, reps, calls);
#else
    throw Error("kiln::time_calls: no CUDA GPU (built without CUDA)");
#endif
  }
  for (int i = 0; i < warmup; ++i)
    fn();
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c)
      fn();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() /
                 calls);
  }
  return ms;
}

double median(std::vector<double> ms) {
  if (ms.empty())
    return 0;
  auto mid = ms.begin() + ms.size() / 2;
  std::nth_element(ms.begin(), mid, ms.end());
  return *mid;
}

double copy_bandwidth(Device dev, size_t bytes, int reps) {
  if (dev.is_cuda()) {
#if KILN_HAVE_CUDA
    return detail::cuda_copy_bandwidth(dev, bytes, reps);
#else
    throw Error("kiln::copy_bandwidth: no CUDA GPU (built without CUDA)");
#endif
  }
  std::unique_ptr<char[]> a(new char[bytes]), b(new char[bytes]);
  std::memset(a.get(), 1, bytes);
  std::memset(b.get(), 2, bytes);
  std::vector<double> ms = time_calls(
      dev, [&] { std::memcpy(b.get(), a.get(), bytes); }, 2, reps);
  return 2.0 * double(bytes) / (median(ms) * 1e-3);
}

double bare_launch_us(Device dev, int reps) {
  if (!dev.is_cuda())
    throw Error("kiln::bare_launch_us: needs a CUDA device");
#if KILN_HAVE_CUDA
  return detail::cuda_bare_launch_us(dev, reps);
#else
  throw Error("kiln::bare_launch_us: no CUDA GPU (built without CUDA)");
#endif
}

} // namespace kiln
