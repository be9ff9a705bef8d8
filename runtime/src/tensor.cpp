// Tensor, Dims, Device, Storage: refcounting, views, printing.
#include "cuda_backend.h"
#include "detail.h"

#include <kiln/tensor.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

namespace kiln {

using detail::fail;

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(int(index));
}

static void check_rank(int n, const char *fn) {
  if (n > kMaxRank)
    fail("%s: rank %d is more than the maximum rank %d", fn, n, kMaxRank);
}

Dims::Dims(std::initializer_list<int64_t> d) {
  check_rank(int(d.size()), "kiln::Dims");
  for (int64_t x : d)
    v_[n_++] = x;
}

Dims::Dims(std::span<const int64_t> d) {
  check_rank(int(d.size()), "kiln::Dims");
  for (int64_t x : d)
    v_[n_++] = x;
}

void Dims::push_back(int64_t x) {
  check_rank(n_ + 1, "kiln::Dims::push_back");
  v_[n_++] = x;
}

void Dims::resize(int n, int64_t fill) {
  check_rank(n, "kiln::Dims::resize");
  if (n < 0)
    fail("kiln::Dims::resize: negative rank %d", n);
  for (int i = n_; i < n; ++i)
    v_[i] = fill;
  n_ = n;
}

bool Dims::operator==(const Dims &o) const {
  if (n_ != o.n_)
    return false;
  for (int i = 0; i < n_; ++i)
    if (v_[i] != o.v_[i])
      return false;
  return true;
}

std::string Dims::str() const {
  std::string s = "[";
  for (int i = 0; i < n_; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(v_[i]);
  }
  return s + "]";
}

Dims contiguous_strides(const Dims &sizes) {
  Dims st;
  st.resize(sizes.rank());
  int64_t s = 1;
  for (int d = sizes.rank() - 1; d >= 0; --d) {
    st[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
  return st;
}

Storage::~Storage() {
  if (external) {
    if (release)
      release(release_ctx);
    return;
  }
  if (!data)
    return;
  if (device.is_cpu())
    detail::cpu_free(data);
  else
    detail::cuda_free(data, nbytes, device.index, stream);
}

// --- refcounting ---

Tensor::Tensor(const Tensor &o)
    : storage_(o.storage_), offset_(o.offset_), numel_(o.numel_),
      sizes_(o.sizes_), strides_(o.strides_), dtype_(o.dtype_),
      device_(o.device_), contiguous_(o.contiguous_) {
  if (storage_)
    storage_->refs.fetch_add(1, std::memory_order_relaxed);
}

Tensor::Tensor(Tensor &&o) noexcept
    : storage_(std::exchange(o.storage_, nullptr)), offset_(o.offset_),
      numel_(o.numel_), sizes_(o.sizes_), strides_(o.strides_),
      dtype_(o.dtype_), device_(o.device_), contiguous_(o.contiguous_) {}

static void release(Storage *s) {
  if (s && s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete s;
}

// Copy, then move: the fields are assigned in one place (the move), and
// self-assignment is safe (the copy holds a reference first).
Tensor &Tensor::operator=(const Tensor &o) { return *this = Tensor(o); }

Tensor &Tensor::operator=(Tensor &&o) noexcept {
  if (this != &o) {
    release(storage_);
    storage_ = std::exchange(o.storage_, nullptr);
    offset_ = o.offset_;
    numel_ = o.numel_;
    sizes_ = o.sizes_;
    strides_ = o.strides_;
    dtype_ = o.dtype_;
    device_ = o.device_;
    contiguous_ = o.contiguous_;
  }
  return *this;
}

Tensor::~Tensor() { release(storage_); }

Tensor Tensor::make(Storage *s, int64_t offset, Dims sizes, Dims strides,
                    DType dt) {
  if (sizes.rank() != strides.rank())
    fail("kiln::Tensor::make: sizes %s and strides %s differ in rank",
         sizes.str().c_str(), strides.str().c_str());
  Tensor t;
  t.storage_ = s;
  t.offset_ = offset;
  t.sizes_ = sizes;
  t.strides_ = strides;
  t.dtype_ = dt;
  t.device_ = s ? s->device : Device::cpu();
  t.recompute();
  return t;
}

void Tensor::recompute() {
  numel_ = 1;
  for (int64_t s : sizes_)
    numel_ *= s;
  // As PyTorch: size-1 dims may have any stride; an empty tensor is contiguous.
  contiguous_ = true;
  if (numel_ == 0)
    return;
  int64_t expected = 1;
  for (int d = sizes_.rank() - 1; d >= 0; --d) {
    if (sizes_[d] == 1)
      continue;
    if (strides_[d] != expected) {
      contiguous_ = false;
      return;
    }
    expected *= sizes_[d];
  }
}

static void check_defined(const Tensor &t, const char *fn) {
  if (!t.defined())
    fail("%s: the tensor is undefined", fn);
}

int64_t Tensor::size(int d) const {
  check_defined(*this, "kiln::Tensor::size");
  return sizes_[detail::wrap_dim(d, dim(), "kiln::Tensor::size")];
}

int64_t Tensor::stride(int d) const {
  check_defined(*this, "kiln::Tensor::stride");
  return strides_[detail::wrap_dim(d, dim(), "kiln::Tensor::stride")];
}

// --- views ---

// Replaces one -1 by the size that keeps numel; checks the element count.
static Dims infer_shape(Dims shape, int64_t numel, const char *fn) {
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0)
        fail("%s: only one dimension can be -1 in shape %s", fn,
             shape.str().c_str());
      infer = i;
    } else if (shape[i] < 0) {
      fail("%s: invalid size %lld in shape %s", fn, (long long)shape[i],
           shape.str().c_str());
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      fail("%s: shape %s is invalid for a tensor of %lld elements", fn,
           shape.str().c_str(), (long long)numel);
    shape[infer] = numel / known;
  } else if (known != numel) {
    fail("%s: shape %s is invalid for a tensor of %lld elements", fn,
         shape.str().c_str(), (long long)numel);
  }
  return shape;
}

// Strides that view (sizes, strides) as `shape` without copying, if any
// (PyTorch's computeStride: each run of dims contiguous with one another
// can be re-split freely).
static std::optional<Dims> view_strides(const Dims &sizes, const Dims &strides,
                                        const Dims &shape, int64_t numel) {
  Dims out;
  out.resize(shape.rank());
  if (numel == 0 || sizes.rank() == 0)
    return contiguous_strides(shape);
  int view_d = shape.rank() - 1;
  int64_t chunk_base = strides[sizes.rank() - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = sizes.rank() - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 ||
        (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel)
        return std::nullopt;
      if (d > 0) {
        chunk_base = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1)
    return std::nullopt;
  return out;
}

static Tensor share(const Tensor &t, int64_t offset, const Dims &sizes,
                    const Dims &strides) {
  Storage *s = const_cast<Storage *>(t.storage());
  s->refs.fetch_add(1, std::memory_order_relaxed);
  return Tensor::make(s, offset, sizes, strides, t.dtype());
}

Tensor Tensor::view(Dims shape) const {
  check_defined(*this, "kiln::Tensor::view");
  shape = infer_shape(shape, numel_, "kiln::Tensor::view");
  auto st = view_strides(sizes_, strides_, shape, numel_);
  if (!st)
    fail("kiln::Tensor::view: cannot view a tensor of shape %s and strides %s "
         "as %s without a copy (use reshape)",
         sizes_.str().c_str(), strides_.str().c_str(), shape.str().c_str());
  return share(*this, offset_, shape, *st);
}

Tensor Tensor::reshape(Dims shape) const {
  check_defined(*this, "kiln::Tensor::reshape");
  shape = infer_shape(shape, numel_, "kiln::Tensor::reshape");
  if (auto st = view_strides(sizes_, strides_, shape, numel_))
    return share(*this, offset_, shape, *st);
  return contiguous().view(shape);
}

Tensor Tensor::transpose(int d0, int d1) const {
  check_defined(*this, "kiln::Tensor::transpose");
  d0 = detail::wrap_dim(d0, dim(), "kiln::Tensor::transpose");
  d1 = detail::wrap_dim(d1, dim(), "kiln::Tensor::transpose");
  Dims sz = sizes_, st = strides_;
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return share(*this, offset_, sz, st);
}

Tensor Tensor::slice(int d, int64_t start, int64_t end, int64_t step) const {
  check_defined(*this, "kiln::Tensor::slice");
  d = detail::wrap_dim(d, dim(), "kiln::Tensor::slice");
  if (step <= 0)
    fail("kiln::Tensor::slice: step must be positive, got %lld",
         (long long)step);
  int64_t n = sizes_[d];
  if (start < 0)
    start += n;
  if (end < 0)
    end += n;
  start = start < 0 ? 0 : start > n ? n : start;
  end = end < start ? start : end > n ? n : end;
  Dims sz = sizes_, st = strides_;
  sz[d] = (end - start + step - 1) / step;
  st[d] = strides_[d] * step;
  return share(*this, offset_ + start * strides_[d], sz, st);
}

Tensor Tensor::expand(Dims shape) const {
  check_defined(*this, "kiln::Tensor::expand");
  int r = shape.rank(), lead = r - dim();
  if (lead < 0)
    fail("kiln::Tensor::expand: cannot expand shape %s to %s (fewer dims)",
         sizes_.str().c_str(), shape.str().c_str());
  Dims sz, st;
  sz.resize(r);
  st.resize(r);
  for (int i = 0; i < r; ++i) {
    int j = i - lead;
    if (j < 0) {
      if (shape[i] < 0)
        fail("kiln::Tensor::expand: size -1 is not allowed in a new leading "
             "dim (shape %s to %s)",
             sizes_.str().c_str(), shape.str().c_str());
      sz[i] = shape[i];
      st[i] = 0;
    } else if (shape[i] == -1 || shape[i] == sizes_[j]) {
      sz[i] = sizes_[j];
      st[i] = strides_[j];
    } else if (sizes_[j] == 1 && shape[i] >= 0) {
      sz[i] = shape[i];
      st[i] = 0;
    } else {
      fail("kiln::Tensor::expand: cannot expand shape %s to %s",
           sizes_.str().c_str(), shape.str().c_str());
    }
  }
  return share(*this, offset_, sz, st);
}

Tensor Tensor::unsqueeze(int d) const {
  check_defined(*this, "kiln::Tensor::unsqueeze");
  if (dim() >= kMaxRank)
    fail("kiln::Tensor::unsqueeze: a tensor of rank %d cannot gain a dim "
         "(maximum rank %d)",
         dim(), kMaxRank);
  d = detail::wrap_dim(d, dim() + 1, "kiln::Tensor::unsqueeze");
  Dims sz, st;
  for (int i = 0; i <= dim(); ++i) {
    if (i == d) {
      sz.push_back(1);
      st.push_back(d < dim() ? sizes_[d] * strides_[d] : 1);
    }
    if (i < dim()) {
      sz.push_back(sizes_[i]);
      st.push_back(strides_[i]);
    }
  }
  return share(*this, offset_, sz, st);
}

Tensor Tensor::squeeze(int d) const {
  check_defined(*this, "kiln::Tensor::squeeze");
  if (dim() == 0)
    return *this;
  d = detail::wrap_dim(d, dim(), "kiln::Tensor::squeeze");
  if (sizes_[d] != 1)
    return *this;
  Dims sz, st;
  for (int i = 0; i < dim(); ++i)
    if (i != d) {
      sz.push_back(sizes_[i]);
      st.push_back(strides_[i]);
    }
  return share(*this, offset_, sz, st);
}

std::string Tensor::str() const {
  if (!defined())
    return "Tensor(undefined)";
  return std::string("Tensor(") + dtype_name(dtype_) + sizes_.str() + ", " +
         device_.str() + ")";
}

std::ostream &operator<<(std::ostream &os, const Tensor &t) {
  return os << t.str();
}
std::ostream &operator<<(std::ostream &os, DType t) {
  return os << dtype_name(t);
}
std::ostream &operator<<(std::ostream &os, Device d) { return os << d.str(); }

} // namespace kiln
