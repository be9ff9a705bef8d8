// Copies: between devices, dtypes and layouts; reading tensors back.
#include "cpu_kernels.h"
#include "cuda_backend.h"
#include "autograd_impl.h"
#include "detail.h"

#include <kiln/tensor.h>

#include <optional>

namespace kiln {

using detail::fail;

static void check_defined(const Tensor &t, const char *fn) {
  if (!t.defined())
    fail("%s: the tensor is undefined", fn);
}

namespace detail {
bool copy_launch(const Tensor &dst, const Tensor &src, const char *fn,
                 CopyLaunch &l) {
  if (!rt::broadcasts_to(src.sizes(), dst.sizes()))
    fail("%s: source shape %s does not broadcast to %s", fn,
         src.sizes().str().c_str(), dst.sizes().str().c_str());
  int64_t n = dst.numel();
  if (n == 0)
    return false;
  l = CopyLaunch();
  l.src = src.dtype();
  l.dst = dst.dtype();
  l.args.out = dst.data_ptr();
  l.args.in = src.data_ptr();
  l.n = n;
  l.device = dst.device().index;
  l.contiguous = dst.is_contiguous() && src.is_contiguous() &&
                 src.sizes() == dst.sizes();
  if (l.contiguous) {
    l.calc.rank = 1;
    l.calc.sizes[0] = n;
    l.calc.strides[0][0] = l.calc.strides[0][1] = 1;
  } else {
    const Tensor *cols[2] = {&dst, &src};
    l.calc.rank = fill_offset_calc(dst.sizes(), cols, 2, l.calc.sizes,
                                   &l.calc.strides[0][0]);
  }
  l.calc.set_divisors();
  return true;
}

void copy_same_device(const Tensor &dst, const Tensor &src, const char *fn) {
  rt::NvtxRange range(fn);
  CopyLaunch l;
  if (!copy_launch(dst, src, fn, l))
    return;
  if (dst.device().is_cpu())
    cpu_copy(l);
  else
    cuda_copy(l);
}
} // namespace detail

Tensor Tensor::contiguous() const {
  return apply_view(ViewKind::Contiguous, {});
}

Tensor Tensor::clone() const {
  check_defined(*this, "kiln::Tensor::clone");
  autograd::Recorder rec("clone", {this});
  Tensor t = detail::empty_for("kiln::Tensor::clone", sizes_, dtype_, device_);
  detail::copy_same_device(t, *this, "kiln::Tensor::clone");
  if (rec)
    rec.finish(t, {}, [](const Tensor &g, auto &, auto &) {
      return std::vector<Tensor>{g};
    });
  return t;
}

Tensor Tensor::to(Device d) const {
  check_defined(*this, "kiln::Tensor::to");
  if (d == device_)
    return *this;
  autograd::Recorder rec("to", {this});
  Tensor src = contiguous();
  Tensor t = detail::empty_for("kiln::Tensor::to", sizes_, dtype_, d);
  size_t nbytes = size_t(numel_) * element_size();
  if (nbytes)
    detail::cuda_memcpy(t.data_ptr(), d, src.data_ptr(), device_, nbytes);
  if (rec) {
    Device back = device_;
    rec.finish(t, {}, [back](const Tensor &g, auto &, auto &) {
      return std::vector<Tensor>{g.to(back)};
    });
  }
  return t;
}

Tensor Tensor::to(DType dt) const {
  check_defined(*this, "kiln::Tensor::to");
  if (dt == dtype_)
    return *this;
  autograd::Recorder rec("to", {this});
  Tensor t = detail::empty_for("kiln::Tensor::to", sizes_, dt, device_);
  detail::copy_same_device(t, *this, "kiln::Tensor::to");
  if (rec) // the engine converts the gradient back to this dtype
    rec.finish(t, {}, [](const Tensor &g, auto &, auto &) {
      return std::vector<Tensor>{g};
    });
  return t;
}

void Tensor::copy_(const Tensor &src) {
  const char *fn = "kiln::Tensor::copy_";
  check_defined(*this, fn);
  if (!src.defined())
    fail("%s: the source tensor is undefined", fn);
  detail::check_no_internal_overlap(*this, fn);
  if (src.storage() == storage_ && src.storage_offset() == offset_ &&
      src.sizes() == sizes_ && src.strides() == strides_ &&
      src.dtype() == dtype_)
    return; // copying a tensor onto itself
  const Tensor *srcp = &src;
  bool record = autograd::check_inplace(fn, *this, {&srcp, 1});
  std::optional<autograd::Recorder> rec;
  if (record)
    rec.emplace("copy_", std::initializer_list<const Tensor *>{&src});
  Tensor s = src;
  if (s.device() != device_)
    s = s.to(device_);
  else if (detail::partially_overlaps(*this, s))
    s = s.clone();
  detail::copy_same_device(*this, s, fn);
  rt::bump_version(*this);
  if (record) {
    // The old value is gone: the gradient reaches the source only.
    Device back = src.device();
    rec->finish_inplace(*this, {}, [back](const Tensor &g, auto &, auto &) {
      return std::vector<Tensor>{g.to(back)};
    });
  }
}

template <class T> std::vector<T> Tensor::to_vector() const {
  check_defined(*this, "kiln::Tensor::to_vector");
  Tensor h = to(Device::cpu()).contiguous();
  std::vector<T> v(static_cast<size_t>(numel_));
  detail::dispatch_dtype(dtype_, [&]<class S>() {
    const S *p = h.data<S>();
    for (int64_t i = 0; i < numel_; ++i)
      v[size_t(i)] = detail::convert<T>(p[i]);
  });
  return v;
}

template <class T> T Tensor::item() const {
  check_defined(*this, "kiln::Tensor::item");
  if (numel_ != 1)
    fail("kiln::Tensor::item: the tensor has %lld elements, expected 1",
         (long long)numel_);
  return to_vector<T>()[0];
}

template <class T> static constexpr DType vector_dtype() {
  if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::f64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::i64;
  else
    return DType::b8; // uint8_t and bool
}

template <class T>
Tensor from_vector(const std::vector<T> &v, Dims shape, Device dev) {
  const char *fn = "kiln::from_vector";
  int64_t numel = 1;
  for (int64_t s : shape)
    numel *= s;
  if (numel != int64_t(v.size()))
    fail("%s: %zu values do not fill shape %s (%lld elements)", fn, v.size(),
         shape.str().c_str(), (long long)numel);
  constexpr DType dt = vector_dtype<T>();
  Tensor t = detail::empty_for(fn, shape, dt, Device::cpu());
  using S = detail::ctype_t<dt>;
  S *p = t.data<S>();
  for (size_t i = 0; i < v.size(); ++i)
    p[i] = S(v[i]);
  return t.to(dev);
}

#define KILN_INSTANTIATE(T)                                                    \
  template KILN_EXPORT std::vector<T> Tensor::to_vector<T>() const;            \
  template KILN_EXPORT T Tensor::item<T>() const;                              \
  template KILN_EXPORT Tensor from_vector<T>(const std::vector<T> &, Dims,     \
                                             Device);
KILN_INSTANTIATE(float)
KILN_INSTANTIATE(double)
KILN_INSTANTIATE(int32_t)
KILN_INSTANTIATE(int64_t)
KILN_INSTANTIATE(uint8_t)
KILN_INSTANTIATE(bool)
#undef KILN_INSTANTIATE

bool cuda_available() { return detail::cuda_device_count_cached() > 0; }
size_t cuda_memory_allocated(int device) { return detail::cuda_memory_in_use(device); }
void set_cuda_memory_limit(size_t bytes, int device) {
  detail::set_cuda_memory_limit_bytes(bytes, device);
}
int cuda_device_count() { return detail::cuda_device_count_cached(); }

void synchronize(Device d) {
  // Without a GPU there is no device work to wait for.
  if (d.is_cpu() || detail::cuda_device_count_cached() == 0)
    return;
  detail::check_cuda_device(d, "kiln::synchronize");
  detail::cuda_synchronize(d.index);
}

} // namespace kiln
