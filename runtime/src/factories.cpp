// Factories: zeros/ones/full (a fill kernel), randn/rand (counter-based,
// generated on the host), arange.
#include "cpu_kernels.h"
#include "cuda_backend.h"
#include "detail.h"

#include <kiln/tensor.h>

#include <atomic>
#include <cmath>

namespace kiln {

using detail::fail;

static void fill(const Tensor &t, double value) {
  int64_t n = t.numel();
  if (n == 0)
    return;
  if (t.device().is_cpu())
    detail::cpu_fill(t.data_ptr(), t.dtype(), value, n);
  else
    detail::cuda_fill(t.data_ptr(), t.dtype(), value, n, t.device().index);
}

Tensor full(Dims shape, double value, DType dt, Device dev) {
  Tensor t = detail::empty_for("kiln::full", shape, dt, dev);
  fill(t, value);
  return t;
}

Tensor zeros(Dims shape, DType dt, Device dev) {
  Tensor t = detail::empty_for("kiln::zeros", shape, dt, dev);
  fill(t, 0.0);
  return t;
}

Tensor ones(Dims shape, DType dt, Device dev) {
  Tensor t = detail::empty_for("kiln::ones", shape, dt, dev);
  fill(t, 1.0);
  return t;
}

// --- random numbers ---
//
// Element i of the k-th value drawn since manual_seed is a pure function of
// (seed, k): results do not depend on the thread count or the device.

static std::atomic<uint64_t> g_seed{0x4b494c4e5eedull};
static std::atomic<uint64_t> g_counter{0};

void manual_seed(uint64_t seed) {
  g_seed.store(seed);
  g_counter.store(0);
}

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t random_bits(uint64_t key, uint64_t index) {
  return mix64(key ^ mix64(index * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
}

// Uniform in [0, 1) with `bits` random bits, exact in the target dtype.
static inline double uniform(uint64_t h, int bits) {
  return double(h >> (64 - bits)) * std::ldexp(1.0, -bits);
}

static int mantissa_bits(DType dt) {
  switch (dt) {
  case DType::f64:
    return 53;
  case DType::f32:
    return 24;
  case DType::f16:
    return 11;
  default:
    return 8; // bf16
  }
}

template <class Gen>
static Tensor random_tensor(const char *fn, Dims shape, DType dt, Device dev,
                            Gen gen) {
  if (!is_floating(dt))
    fail("%s: dtype %s is not a floating type", fn, dtype_name(dt));
  if (dev.is_cuda())
    detail::check_cuda_device(dev, fn);
  Tensor h = detail::empty_for(fn, shape, dt, Device::cpu());
  int64_t n = h.numel();
  uint64_t key = mix64(g_seed.load() + 0x9e3779b97f4a7c15ull);
  // Two draws per element (Box-Muller needs two uniforms).
  uint64_t base = g_counter.fetch_add(2 * uint64_t(n));
  int bits = mantissa_bits(dt);
  detail::dispatch_dtype(dt, [&]<class T>() {
    T *p = h.data<T>();
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; ++i) {
      uint64_t h1 = random_bits(key, base + 2 * uint64_t(i));
      uint64_t h2 = random_bits(key, base + 2 * uint64_t(i) + 1);
      p[i] = detail::convert<T>(gen(h1, h2, bits));
    }
  });
  return h.to(dev);
}

Tensor rand(Dims shape, DType dt, Device dev) {
  return random_tensor("kiln::rand", shape, dt, dev,
                       [](uint64_t h1, uint64_t, int bits) {
                         return uniform(h1, bits);
                       });
}

Tensor randn(Dims shape, DType dt, Device dev) {
  return random_tensor("kiln::randn", shape, dt, dev,
                       [](uint64_t h1, uint64_t h2, int) {
                         // Box-Muller; u1 in (0, 1] keeps log finite.
                         double u1 = uniform(h1, 53) + std::ldexp(1.0, -53);
                         double u2 = uniform(h2, 53);
                         return std::sqrt(-2.0 * std::log(u1)) *
                                std::cos(6.283185307179586 * u2);
                       });
}

Tensor arange(int64_t n, DType dt, Device dev) {
  if (n < 0)
    fail("kiln::arange: negative length %lld", (long long)n);
  return arange(0.0, double(n), 1.0, dt, dev);
}

Tensor arange(double start, double end, double step, DType dt, Device dev) {
  const char *fn = "kiln::arange";
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) ||
      !std::isfinite(end))
    fail("%s: start %g, end %g and step %g must be finite, step nonzero", fn,
         start, end, step);
  if ((end - start) / step < 0)
    fail("%s: step %g goes away from end %g (start %g)", fn, step, end, start);
  int64_t n = int64_t(std::ceil((end - start) / step));
  if (dev.is_cuda())
    detail::check_cuda_device(dev, fn);
  Tensor h = detail::empty_for(fn, Dims{n}, dt, Device::cpu());
  detail::dispatch_dtype(dt, [&]<class T>() {
    T *p = h.data<T>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = detail::convert<T>(start + double(i) * step);
  });
  return h.to(dev);
}

} // namespace kiln
