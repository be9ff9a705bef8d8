// Tensor, Dims, Device, Storage: refcounting, views, printing.
#include "cuda_backend.h"
#include "autograd_impl.h"
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
      device_(o.device_), contiguous_(o.contiguous_), meta_(o.meta_) {
  if (storage_)
    storage_->refs.fetch_add(1, std::memory_order_relaxed);
}

Tensor::Tensor(Tensor &&o) noexcept
    : storage_(std::exchange(o.storage_, nullptr)), offset_(o.offset_),
      numel_(o.numel_), sizes_(o.sizes_), strides_(o.strides_),
      dtype_(o.dtype_), device_(o.device_), contiguous_(o.contiguous_),
      meta_(std::move(o.meta_)) {}

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
    meta_ = std::move(o.meta_);
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

bool contiguous_layout(const Dims &sizes, const Dims &strides) {
  // As PyTorch: size-1 dims may have any stride; an empty tensor is contiguous.
  for (int64_t s : sizes)
    if (s == 0)
      return true;
  int64_t expected = 1;
  for (int d = sizes.rank() - 1; d >= 0; --d) {
    if (sizes[d] == 1)
      continue;
    if (strides[d] != expected)
      return false;
    expected *= sizes[d];
  }
  return true;
}

void Tensor::recompute() {
  numel_ = 1;
  for (int64_t s : sizes_)
    numel_ *= s;
  contiguous_ = contiguous_layout(sizes_, strides_);
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

// --- views (geometry: layout.cpp) ---

static Tensor share(const Tensor &t, const Layout &l) {
  Storage *s = const_cast<Storage *>(t.storage());
  s->refs.fetch_add(1, std::memory_order_relaxed);
  return Tensor::make(s, l.offset, l.sizes, l.strides, t.dtype());
}

Tensor Tensor::apply_view(ViewKind kind, std::span<const int64_t> args) const {
  const std::string fn = std::string("kiln::Tensor::") + view_name(kind);
  check_defined(*this, fn.c_str());
  bool copies = false;
  Layout l = view_layout(kind, layout(), args, &copies);
  if (kind == ViewKind::Contiguous && !copies)
    return *this; // the tensor itself, as PyTorch's contiguous()
  autograd::Recorder rec(view_name(kind), {this});
  Tensor r;
  if (!copies) {
    r = share(*this, l);
  } else {
    // A copy: contiguous's, then (reshape) viewed as the shape.
    Tensor t = detail::empty_for(fn.c_str(), sizes_, dtype_, device_);
    detail::copy_same_device(t, *this, fn.c_str());
    r = kind == ViewKind::Contiguous ? t : share(t, l);
  }
  autograd::record_view(rec, kind, args, *this, r);
  return r;
}

Tensor Tensor::view(Dims shape) const {
  return apply_view(ViewKind::View, {shape.begin(), shape.end()});
}
Tensor Tensor::reshape(Dims shape) const {
  return apply_view(ViewKind::Reshape, {shape.begin(), shape.end()});
}
Tensor Tensor::transpose(int d0, int d1) const {
  const int64_t a[] = {d0, d1};
  return apply_view(ViewKind::Transpose, a);
}
Tensor Tensor::permute(Dims order) const {
  return apply_view(ViewKind::Permute, {order.begin(), order.end()});
}
Tensor Tensor::slice(int d, int64_t start, int64_t end, int64_t step) const {
  const int64_t a[] = {d, start, end, step};
  return apply_view(ViewKind::Slice, a);
}
Tensor Tensor::expand(Dims shape) const {
  return apply_view(ViewKind::Expand, {shape.begin(), shape.end()});
}
Tensor Tensor::unsqueeze(int d) const {
  const int64_t a[] = {d};
  return apply_view(ViewKind::Unsqueeze, a);
}
Tensor Tensor::squeeze(int d) const {
  const int64_t a[] = {d};
  return apply_view(ViewKind::Squeeze, a);
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
