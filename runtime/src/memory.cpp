// Host allocation, new tensors, and aliasing checks.
#include "cpu_kernels.h"
#include "cuda_backend.h"
#include "detail.h"

#include <kiln/interop.h>
#include <kiln/stats.h>

#include <cstdlib>
#include <limits>

namespace kiln::detail {

void *cpu_alloc(size_t nbytes) {
  if (nbytes == 0)
    return nullptr;
  // 64-byte alignment: whole cache lines and any vector width.
  size_t rounded = (nbytes + 63) & ~size_t(63);
  return std::aligned_alloc(64, rounded);
}

void cpu_free(void *p) { std::free(p); }

Tensor empty_for(const char *fn, const Dims &shape, DType dt, Device dev) {
  int64_t numel = 1;
  for (int64_t s : shape) {
    if (s < 0)
      fail("%s: negative size %lld in shape %s", fn, (long long)s,
           shape.str().c_str());
    if (s != 0 && numel > std::numeric_limits<int64_t>::max() / 16 / s)
      fail("%s: shape %s is too large", fn, shape.str().c_str());
    numel *= s;
  }
  size_t nbytes = size_t(numel) * size_t(element_size(dt));
  void *p = nullptr;
  void *stream = nullptr;
  if (dev.is_cuda()) {
    check_cuda_device(dev, fn);
    stream = current_stream(dev.index).handle;
    p = cuda_alloc(nbytes, dev.index, stream, fn);
  } else {
    p = cpu_alloc(nbytes);
    if (!p && nbytes)
      fail("%s: out of host memory allocating %zu bytes for %s%s", fn, nbytes,
           dtype_name(dt), shape.str().c_str());
  }
  if (numel && fill_uninitialized()) {
    double poison = is_floating(dt) ? std::numeric_limits<double>::quiet_NaN()
                    : dt == DType::b8 ? 1.0
                                      : -12345.0;
    if (dev.is_cuda())
      cuda_fill(p, dt, poison, numel, dev.index, /*counted=*/false);
    else
      cpu_fill(p, dt, poison, numel, /*counted=*/false);
  }
  auto *s = new Storage(p, nbytes, dev);
  s->stream = stream;
  return Tensor::make(s, 0, shape, contiguous_strides(shape), dt);
}

// Byte range [lo, hi) that a tensor's elements touch.
static void extent(const Tensor &t, intptr_t &lo, intptr_t &hi) {
  intptr_t base = intptr_t(t.data_ptr());
  int64_t min_off = 0, max_off = 0;
  for (int d = 0; d < t.dim(); ++d) {
    int64_t span = (t.sizes()[d] - 1) * t.strides()[d];
    (span < 0 ? min_off : max_off) += span;
  }
  lo = base + intptr_t(min_off) * intptr_t(t.element_size());
  hi = base + intptr_t(max_off + 1) * intptr_t(t.element_size());
}

bool partially_overlaps(const Tensor &a, const Tensor &b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0)
    return false;
  if (a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
      a.strides() == b.strides() && a.dtype() == b.dtype())
    return false; // the same elements in the same order
  intptr_t alo, ahi, blo, bhi;
  extent(a, alo, ahi);
  extent(b, blo, bhi);
  return alo < bhi && blo < ahi;
}

void check_no_internal_overlap(const Tensor &t, const char *fn) {
  if (rt::internal_overlap(t.sizes(), t.strides()))
    fail("%s: cannot write to %s: several of its elements share one memory "
         "location (an expanded view); clone it first",
         fn, t.str().c_str());
}

} // namespace kiln::detail

namespace kiln::rt {

bool internal_overlap(const Dims &sizes, const Dims &strides) {
  for (int d = 0; d < sizes.rank(); ++d)
    if (sizes[d] > 1 && strides[d] == 0)
      return true;
  return false;
}

} // namespace kiln::rt

namespace kiln {

Tensor empty(Dims shape, DType dt, Device dev) {
  return detail::empty_for("kiln::empty", shape, dt, dev);
}

} // namespace kiln
