// Tensors over memory Kiln did not allocate (from_blob, DLPack) and the
// calling thread's current CUDA streams (kiln/interop.h).
#include "cuda_backend.h"
#include "detail.h"

#include <kiln/interop.h>

#include <cstring>
#include <memory>

namespace kiln {

using detail::fail;

// ---- from_blob ----

namespace {

// The bytes a view's elements span from element 0 (strides >= 0).
size_t span_bytes(const Dims &sizes, const Dims &strides, DType dt) {
  int64_t last = 0;
  for (int d = 0; d < sizes.rank(); ++d) {
    if (sizes[d] == 0)
      return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return size_t(last + 1) * size_t(element_size(dt));
}

Tensor over_external(const char *fn, void *data, const Dims &sizes,
                     const Dims &strides, DType dt, Device dev,
                     void (*release)(void *), void *ctx) {
  // Checked before anything can throw: the owner's release runs either way.
  auto release_on_error = [&] {
    if (release)
      release(ctx);
  };
  try {
    if (sizes.rank() != strides.rank())
      fail("%s: sizes %s and strides %s differ in rank", fn,
           sizes.str().c_str(), strides.str().c_str());
    for (int d = 0; d < sizes.rank(); ++d) {
      if (sizes[d] < 0)
        fail("%s: negative size in %s", fn, sizes.str().c_str());
      if (strides[d] < 0)
        fail("%s: negative stride in %s (not supported)", fn,
             strides.str().c_str());
    }
    if (reinterpret_cast<uintptr_t>(data) % size_t(element_size(dt)))
      fail("%s: %p is not aligned to the %d-byte elements of %s", fn, data,
           element_size(dt), dtype_name(dt));
    if (dev.is_cuda())
      detail::check_cuda_device(dev, fn);
  } catch (...) {
    release_on_error();
    throw;
  }
  auto *s = new Storage(data, span_bytes(sizes, strides, dt), dev);
  s->external = true;
  s->release = release;
  s->release_ctx = ctx;
  return Tensor::make(s, 0, sizes, strides, dt);
}

struct BlobDeleter {
  std::function<void(void *)> fn;
  void *data;
};

} // namespace

Tensor from_blob(void *data, Dims sizes, Dims strides, DType dtype,
                 Device device, std::function<void(void *)> deleter) {
  void (*release)(void *) = nullptr;
  void *ctx = nullptr;
  if (deleter) {
    ctx = new BlobDeleter{std::move(deleter), data};
    release = [](void *c) {
      std::unique_ptr<BlobDeleter> d(static_cast<BlobDeleter *>(c));
      d->fn(d->data);
    };
  }
  return over_external("kiln::from_blob", data, sizes, strides, dtype, device,
                       release, ctx);
}

Tensor from_blob(void *data, Dims sizes, DType dtype, Device device,
                 std::function<void(void *)> deleter) {
  return from_blob(data, sizes, contiguous_strides(sizes), dtype, device,
                   std::move(deleter));
}

// ---- DLPack ----

namespace {

DLDataType dl_dtype(DType dt) {
  switch (dt) {
  case DType::f32:
    return {kDLFloat, 32, 1};
  case DType::f16:
    return {kDLFloat, 16, 1};
  case DType::bf16:
    return {kDLBfloat, 16, 1};
  case DType::f64:
    return {kDLFloat, 64, 1};
  case DType::i32:
    return {kDLInt, 32, 1};
  case DType::i64:
    return {kDLInt, 64, 1};
  case DType::b8:
    return {kDLBool, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

bool kiln_dtype(DLDataType t, DType &out) {
  if (t.lanes != 1)
    return false;
  struct Map {
    uint8_t code, bits;
    DType dt;
  };
  static const Map maps[] = {
      {kDLFloat, 32, DType::f32}, {kDLFloat, 16, DType::f16},
      {kDLBfloat, 16, DType::bf16}, {kDLFloat, 64, DType::f64},
      {kDLInt, 32, DType::i32},   {kDLInt, 64, DType::i64},
      {kDLBool, 8, DType::b8}};
  for (const Map &m : maps)
    if (t.code == m.code && t.bits == m.bits) {
      out = m.dt;
      return true;
    }
  return false;
}

// What a DLPack tensor made by Kiln owns: a reference to the tensor (its
// storage stays alive) and the shape and strides the struct points at.
template <class Managed> struct Export {
  Managed managed{};
  Tensor tensor;
  int64_t shape[kMaxRank];
  int64_t strides[kMaxRank];
};

template <class Managed> Managed *export_tensor(const Tensor &t) {
  if (!t.defined())
    fail("kiln::to_dlpack: undefined tensor");
  auto *e = new Export<Managed>;
  e->tensor = t;
  for (int d = 0; d < t.dim(); ++d) {
    e->shape[d] = t.sizes()[d];
    e->strides[d] = t.strides()[d];
  }
  DLTensor &dl = e->managed.dl_tensor;
  dl.data = t.numel() ? t.data_ptr() : nullptr;
  dl.device = {t.device().is_cuda() ? kDLCUDA : kDLCPU,
               t.device().is_cuda() ? int32_t(t.device().index) : 0};
  dl.ndim = t.dim();
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = e->shape;
  dl.strides = e->strides;
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](Managed *self) {
    delete static_cast<Export<Managed> *>(self->manager_ctx);
  };
  return &e->managed;
}

template <class Managed> void release_managed(void *ctx) {
  auto *m = static_cast<Managed *>(ctx);
  if (m->deleter)
    m->deleter(m);
}

// Gives a DLPack tensor Kiln cannot hold back to its producer (its deleter),
// then throws why.
template <class Managed>
[[noreturn]] void refuse_import(Managed *m, const char *fn,
                                const std::string &why) {
  release_managed<Managed>(m);
  fail("%s: %s", fn, why.c_str());
}

template <class Managed> Tensor import_tensor(Managed *m, const char *fn) {
  if (!m)
    fail("%s: null DLPack tensor", fn);
  void (*release)(void *) = &release_managed<Managed>;
  auto refuse = [&](const std::string &why) { refuse_import(m, fn, why); };
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if (m->version.major != DLPACK_MAJOR_VERSION)
      refuse("DLPack version " + std::to_string(m->version.major) + "." +
             std::to_string(m->version.minor) + " (Kiln reads " +
             std::to_string(DLPACK_MAJOR_VERSION) + ".x)");
    if (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
      refuse("a read-only tensor (Kiln tensors can be written)");
  }
  const DLTensor &dl = m->dl_tensor;
  Device dev;
  switch (dl.device.device_type) {
  case kDLCPU:
  case kDLCUDAHost: // pinned host memory
    dev = Device::cpu();
    break;
  case kDLCUDA:
  case kDLCUDAManaged:
    dev = Device::cuda(dl.device.device_id);
    break;
  default:
    refuse_import(m, fn,
                  "device type " + std::to_string(int(dl.device.device_type)) +
                      " (Kiln has CPU and CUDA tensors)");
  }
  DType dt = DType::f32;
  if (!kiln_dtype(dl.dtype, dt))
    refuse("dtype code " + std::to_string(dl.dtype.code) + ", " +
           std::to_string(dl.dtype.bits) + " bits, " +
           std::to_string(dl.dtype.lanes) + " lanes (Kiln has f32, f16, "
           "bf16, f64, i32, i64, bool)");
  if (dl.ndim < 0 || dl.ndim > kMaxRank)
    refuse("rank " + std::to_string(dl.ndim) + " (at most " +
           std::to_string(kMaxRank) + ")");
  Dims sizes(std::span<const int64_t>(dl.shape, size_t(dl.ndim)));
  Dims strides = dl.strides
                     ? Dims(std::span<const int64_t>(dl.strides, size_t(dl.ndim)))
                     : contiguous_strides(sizes);
  void *data = static_cast<char *>(dl.data) + dl.byte_offset;
  return over_external(fn, data, sizes, strides, dt, dev, release, m);
}

} // namespace

DLManagedTensorVersioned *to_dlpack_versioned(const Tensor &t) {
  DLManagedTensorVersioned *m = export_tensor<DLManagedTensorVersioned>(t);
  m->version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->flags = 0;
  return m;
}

DLManagedTensor *to_dlpack(const Tensor &t) {
  return export_tensor<DLManagedTensor>(t);
}

Tensor from_dlpack(DLManagedTensorVersioned *managed) {
  return import_tensor(managed, "kiln::from_dlpack");
}

Tensor from_dlpack(DLManagedTensor *managed) {
  return import_tensor(managed, "kiln::from_dlpack");
}

// ---- streams ----

namespace {
constexpr int kMaxStreamDevices = 64;
thread_local void *current[kMaxStreamDevices] = {};

int stream_device(int device, const char *fn) {
  if (device < 0 || device >= kMaxStreamDevices)
    fail("%s: no CUDA device cuda:%d", fn, device);
  return device;
}
} // namespace

CudaStream current_stream(int device) {
  return {current[stream_device(device, "kiln::current_stream")], device};
}

void set_current_stream(CudaStream s) {
  current[stream_device(s.device, "kiln::set_current_stream")] = s.handle;
}

CudaStream create_cuda_stream(int device) {
  stream_device(device, "kiln::create_cuda_stream");
  return {detail::cuda_stream_create(device), device};
}

void destroy_cuda_stream(CudaStream s) {
  stream_device(s.device, "kiln::destroy_cuda_stream");
  if (!s.handle)
    fail("kiln::destroy_cuda_stream: the legacy default stream cannot be "
         "destroyed");
  for (int d = 0; d < kMaxStreamDevices; ++d)
    if (current[d] == s.handle)
      current[d] = nullptr; // this thread's; other threads' are theirs
  detail::cuda_stream_destroy(s.handle, s.device);
}

void synchronize(CudaStream s) {
  stream_device(s.device, "kiln::synchronize");
  detail::cuda_stream_synchronize(s.handle, s.device);
}

} // namespace kiln
