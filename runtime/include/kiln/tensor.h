// kiln/tensor.h - kiln::Tensor: a dtype-erased, strided, refcounted tensor
// on the CPU or a CUDA device.
//
// Accessors are inline: generated guard code reads dtype, device, sizes,
// strides and contiguity directly, so a guard check costs nanoseconds.
#pragma once

#include <kiln/export.h>
#include <kiln/dtype.h>
#include <kiln/kernel_abi.h>
#include <kiln/view_kind.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

KILN_API_BEGIN
namespace kiln {

namespace autograd {
struct Meta; // a tensor's autograd state (runtime/src/autograd.cpp)
}

// Thrown for bad input: shapes that do not broadcast, mixed devices,
// unsupported dtypes, out-of-range dims. The message says what and where.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Device {
  enum class Kind : uint8_t { CPU, CUDA };
  Kind kind = Kind::CPU;
  int8_t index = 0;

  static constexpr Device cpu() { return {Kind::CPU, 0}; }
  static constexpr Device cuda(int i = 0) { return {Kind::CUDA, int8_t(i)}; }
  constexpr bool is_cpu() const { return kind == Kind::CPU; }
  constexpr bool is_cuda() const { return kind == Kind::CUDA; }
  constexpr bool operator==(const Device &) const = default;
  std::string str() const; // "cpu", "cuda:0"
};

// Sizes and strides (in elements) of up to kMaxRank dims, stored inline.
class Dims {
public:
  Dims() = default;
  Dims(std::initializer_list<int64_t> d);
  explicit Dims(std::span<const int64_t> d);
  int rank() const { return n_; }
  int64_t operator[](int i) const { return v_[i]; }
  int64_t &operator[](int i) { return v_[i]; }
  const int64_t *begin() const { return v_; }
  const int64_t *end() const { return v_ + n_; }
  const int64_t *data() const { return v_; }
  void push_back(int64_t x);
  void resize(int n, int64_t fill = 0);
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  bool operator==(const Dims &o) const;
  std::string str() const; // "[2, 3]"

private:
  int64_t v_[kMaxRank] = {};
  int n_ = 0;
};

const char *view_name(ViewKind k); // "view", "transpose", ...

// A tensor's geometry, in elements.
struct Layout {
  Dims sizes, strides;
  int64_t offset = 0;
};

// The layout that layout op `kind` gives a tensor laid out as `in`, with
// the method's integer arguments `args` (kiln/ops.def): what the Tensor
// methods do, and what compiled code checks before its launches. Throws
// kiln::Error where the method raises. Where no view gives the result
// (reshape of a layout its shape cannot be split from, contiguous of a
// non-contiguous one), *copies is set and the result is a fresh
// contiguous tensor's (offset 0).
Layout view_layout(ViewKind kind, const Layout &in,
                   std::span<const int64_t> args, bool *copies = nullptr);

// Refcounted storage: one allocation on one device.
struct Storage {
  void *data = nullptr;
  size_t nbytes = 0;
  Device device;
  std::atomic<int> refs{1};
  // Bumped by every in-place write through the runtime (in-place ops,
  // copy_, compiled code writing an argument): autograd's saved tensors
  // check it, as PyTorch's version counter.
  std::atomic<uint32_t> version{0};
  // CUDA memory from Kiln's allocator: the stream it was allocated for
  // (its free list; kiln/interop.h). nullptr: the legacy default stream.
  void *stream = nullptr;
  // Memory Kiln did not allocate (from_blob, DLPack): when set, the last
  // reference calls release(release_ctx) instead of freeing `data`; when
  // `external` without release, the memory is the owner's to free.
  bool external = false;
  void (*release)(void *ctx) = nullptr;
  void *release_ctx = nullptr;
  ~Storage();
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;
  Storage(void *d, size_t n, Device dev) : data(d), nbytes(n), device(dev) {}
};

class Tensor {
public:
  Tensor() = default; // undefined tensor
  Tensor(const Tensor &o);
  Tensor(Tensor &&o) noexcept;
  Tensor &operator=(const Tensor &o);
  Tensor &operator=(Tensor &&o) noexcept;
  ~Tensor();

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  int dim() const { return sizes_.rank(); }
  const Dims &sizes() const { return sizes_; }
  const Dims &strides() const { return strides_; }
  int64_t size(int d) const; // negative d counts from the end
  int64_t stride(int d) const;
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return offset_; }
  size_t element_size() const { return kiln::element_size(dtype_); }
  // Row-major contiguous (cached when the view is made).
  bool is_contiguous() const { return contiguous_; }
  void *data_ptr() const {
    return static_cast<char *>(storage_->data) + offset_ * element_size();
  }
  template <class T> T *data() const { return static_cast<T *>(data_ptr()); }
  const Storage *storage() const { return storage_; }

  // Views (share storage).
  Tensor view(Dims shape) const;    // needs compatible strides; -1 inferred
  Tensor reshape(Dims shape) const; // view if possible, else a copy
  Tensor transpose(int d0, int d1) const;
  Tensor permute(Dims order) const; // dim i of the result is dim order[i]
  Tensor slice(int d, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor expand(Dims shape) const; // -1 keeps a size
  Tensor unsqueeze(int d) const;
  Tensor squeeze(int d) const;
  // Views of consecutive pieces along dim d (torch.Tensor.split with one
  // size, torch.Tensor.chunk): split's pieces have `size` elements along d
  // (the last fewer); chunk's ceil(size(d) / chunks) (so there may be fewer
  // than `chunks` pieces). For joining, see kiln/join.h (cat, stack).
  std::vector<Tensor> split(int64_t size, int d = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int d = 0) const;

  // Copies.
  Tensor contiguous() const; // self if already contiguous
  // Layout op `kind` with its integer arguments (kiln::view_layout): the
  // method of that name.
  Tensor apply_view(ViewKind kind, std::span<const int64_t> args) const;
  Layout layout() const { return {sizes_, strides_, offset_}; }
  Tensor clone() const;
  Tensor to(Device d) const; // self if already there
  Tensor to(DType t) const;  // self if already that dtype
  void copy_(const Tensor &src); // broadcasting copy into this (any device)

  // Reads a whole tensor (any device, any layout) converted to T.
  template <class T> std::vector<T> to_vector() const;
  template <class T> T item() const; // one-element tensor

  // In-place ops.
  Tensor &operator+=(const Tensor &o);
  Tensor &operator-=(const Tensor &o);
  Tensor &operator*=(const Tensor &o);
  Tensor &operator/=(const Tensor &o);
  Tensor &operator+=(double s);
  Tensor &operator-=(double s);
  Tensor &operator*=(double s);
  Tensor &operator/=(double s);
  // An integer number is a weak integer scalar: x_i32 += 1 stays i32 (a
  // double would make the result f32, which cannot be stored into x).
  template <class S>
    requires(std::is_integral_v<S> && !std::is_same_v<S, bool>)
  Tensor &operator+=(S s) {
    return inplace_int(0, int64_t(s));
  }
  template <class S>
    requires(std::is_integral_v<S> && !std::is_same_v<S, bool>)
  Tensor &operator-=(S s) {
    return inplace_int(1, int64_t(s));
  }
  template <class S>
    requires(std::is_integral_v<S> && !std::is_same_v<S, bool>)
  Tensor &operator*=(S s) {
    return inplace_int(2, int64_t(s));
  }
  template <class S>
    requires(std::is_integral_v<S> && !std::is_same_v<S, bool>)
  Tensor &operator/=(S s) {
    return inplace_int(3, int64_t(s));
  }

  std::string str() const; // "Tensor(f32[2, 3], cuda:0)"

  // Autograd (kiln/autograd.h), with PyTorch's user model. A copy of a
  // Tensor handle is the same tensor to autograd (it shares requires_grad,
  // grad and history); a view or an op's result is a new one.
  bool requires_grad() const; // a leaf marked so, or a result with history
  // Marks a leaf (a tensor no recorded op made) to accumulate gradients.
  // Floating dtypes only.
  Tensor &requires_grad_(bool on = true);
  bool is_leaf() const; // no recorded op made it
  // The gradient accumulated by backward() (undefined until then);
  // mutable_grad() to reset or replace it.
  const Tensor &grad() const;
  Tensor &mutable_grad();
  // Gradients of this tensor with respect to the leaves that require grad,
  // accumulated into their grad(). `gradient` is the gradient of this
  // tensor (may be omitted for a one-element tensor: 1). The graph's saved
  // tensors are freed unless retain_graph.
  void backward() const;
  void backward(const Tensor &gradient, bool retain_graph = false) const;
  // The same data with no history, not requiring grad.
  Tensor detach() const;
  // The name of the node that made this tensor ("MulBackward"), or "".
  std::string grad_fn_name() const;
  // Runtime internals.
  const std::shared_ptr<autograd::Meta> &autograd_meta() const {
    return meta_;
  }
  void set_autograd_meta(std::shared_ptr<autograd::Meta> m) {
    meta_ = std::move(m);
  }

  // Runtime internals: make a tensor over a storage (takes one reference).
  static Tensor make(Storage *s, int64_t offset, Dims sizes, Dims strides,
                     DType dt);

private:
  Tensor &inplace_int(int op, int64_t s); // 0 +=, 1 -=, 2 *=, 3 /=
  void recompute(); // numel_, contiguous_ from sizes_ and strides_
  Storage *storage_ = nullptr;
  int64_t offset_ = 0; // in elements
  int64_t numel_ = 0;
  Dims sizes_, strides_;
  DType dtype_ = DType::f32;
  Device device_;
  bool contiguous_ = true;
  std::shared_ptr<autograd::Meta> meta_; // null: no autograd state
};

std::ostream &operator<<(std::ostream &os, const Tensor &t);
std::ostream &operator<<(std::ostream &os, DType t);
std::ostream &operator<<(std::ostream &os, Device d);

// Row-major strides of a shape.
Dims contiguous_strides(const Dims &sizes);
// Whether (sizes, strides) is row-major contiguous (Tensor::is_contiguous).
bool contiguous_layout(const Dims &sizes, const Dims &strides);

// Factories.
Tensor empty(Dims shape, DType dt = f32, Device dev = Device::cpu());
Tensor zeros(Dims shape, DType dt = f32, Device dev = Device::cpu());
Tensor ones(Dims shape, DType dt = f32, Device dev = Device::cpu());
Tensor full(Dims shape, double value, DType dt = f32,
            Device dev = Device::cpu());
Tensor randn(Dims shape, DType dt = f32, Device dev = Device::cpu());
Tensor rand(Dims shape, DType dt = f32, Device dev = Device::cpu());
Tensor arange(int64_t n, DType dt = f32, Device dev = Device::cpu());
Tensor arange(double start, double end, double step = 1, DType dt = f32,
              Device dev = Device::cpu());
template <class T>
Tensor from_vector(const std::vector<T> &v, Dims shape,
                   Device dev = Device::cpu());
template <class T> Tensor from_vector(const std::vector<T> &v) {
  return from_vector(v, Dims{int64_t(v.size())});
}
void manual_seed(uint64_t seed); // randn/rand are deterministic per seed

bool cuda_available();
int cuda_device_count();
// Bytes of a CUDA device's memory held by live tensors (the caching
// allocator's size classes), like torch.cuda.memory_allocated.
size_t cuda_memory_allocated(int device = 0);
// Caps what the caching allocator takes from CUDA on a device (0: no cap),
// like torch.cuda.set_per_process_memory_fraction: an allocation past it
// raises kiln::Error "CUDA out of memory".
void set_cuda_memory_limit(size_t bytes, int device = 0);
void synchronize(Device d = Device::cuda()); // waits for the device's work

} // namespace kiln
KILN_API_END
