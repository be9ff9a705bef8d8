// CUDA devices: discovery (never crashing without a driver), transfers,
// synchronisation, multiprocessor counts, launch accounting.
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <kiln/rt.h>

#include <atomic>
#include <string>

namespace kiln::detail {

void cuda_fail(cudaError_t e, const char *fn, const char *what) {
  cudaGetLastError(); // clear a non-sticky error so later calls can proceed
  fail("%s: %s failed: %s (%s)", fn, what, cudaGetErrorString(e),
       cudaGetErrorName(e));
}

namespace {
struct DeviceInfo {
  int count = 0;
  std::string why; // why there is no GPU, when count is 0
};
const DeviceInfo &device_info() {
  // cudart_static loads the driver here; without one this is an error
  // code (insufficient driver / no device), never a crash.
  static const DeviceInfo info = [] {
    DeviceInfo d;
    cudaError_t e = cudaGetDeviceCount(&d.count);
    if (e != cudaSuccess) {
      cudaGetLastError();
      d.count = 0;
      d.why = cudaGetErrorString(e);
    } else if (d.count == 0) {
      d.why = "CUDA reports no devices";
    }
    return d;
  }();
  return info;
}
} // namespace

int cuda_device_count_cached() { return device_info().count; }

void check_cuda_device(Device d, const char *fn) {
  const DeviceInfo &info = device_info();
  if (info.count == 0)
    fail("%s: no CUDA GPU available (%s requested; %s)", fn, d.str().c_str(),
         info.why.c_str());
  if (!d.is_cuda() || d.index < 0 || d.index >= info.count)
    fail("%s: no CUDA GPU %s (this machine has %d: cuda:0 to cuda:%d)", fn,
         d.str().c_str(), info.count, info.count - 1);
}

// Queued on the source's current stream (after the kernels that made the
// data), then waited for: a copy returns with the data in place.
void cuda_memcpy(void *dst, Device dst_dev, const void *src, Device src_dev,
                 size_t nbytes) {
  const char *fn = "kiln::Tensor::to";
  int device = src_dev.is_cuda() ? src_dev.index : dst_dev.index;
  set_device(device, fn);
  cudaStream_t stream = stream_of(device);
  cudaError_t e;
  if (dst_dev.is_cuda() && src_dev.is_cuda() && dst_dev != src_dev) {
    e = cudaMemcpyPeerAsync(dst, dst_dev.index, src, src_dev.index, nbytes,
                            stream);
  } else {
    cudaMemcpyKind kind = dst_dev.is_cpu()   ? cudaMemcpyDeviceToHost
                          : src_dev.is_cpu() ? cudaMemcpyHostToDevice
                                             : cudaMemcpyDeviceToDevice;
    e = cudaMemcpyAsync(dst, src, nbytes, kind, stream);
  }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    std::string what = "cudaMemcpy from " + src_dev.str() + " to " +
                       dst_dev.str() + " (" + std::to_string(nbytes) +
                       " bytes)";
    cuda_fail(e, fn, what.c_str());
  }
}

void cuda_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height, int device, const char *fn) {
  set_device(device, fn);
  cuda_check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height,
                               cudaMemcpyDeviceToDevice, stream_of(device)),
             fn, "cudaMemcpy2DAsync");
  rt::bump(rt::kLaunches);
  if (rt::log_enabled(rt::kLogKernels))
    rt::log(rt::kLogKernels, "launch %s memcpy2d %zu x %zu bytes (cuda:%d)",
            fn, height, width, device);
}

void cuda_synchronize(int device) {
  set_device(device, "kiln::synchronize");
  cuda_check(cudaDeviceSynchronize(), "kiln::synchronize",
             "cudaDeviceSynchronize");
}

void *cuda_stream_create(int device) {
  const char *fn = "kiln::create_cuda_stream";
  check_cuda_device(Device::cuda(device), fn);
  set_device(device, fn);
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), fn,
             "cudaStreamCreateWithFlags");
  return s;
}

// Waits first: the stream's blocks in the allocator's cache are then idle.
void cuda_stream_destroy(void *stream, int device) {
  const char *fn = "kiln::destroy_cuda_stream";
  set_device(device, fn);
  cuda_check(cudaStreamSynchronize(cudaStream_t(stream)), fn,
             "cudaStreamSynchronize");
  cuda_check(cudaStreamDestroy(cudaStream_t(stream)), fn, "cudaStreamDestroy");
}

void cuda_stream_synchronize(void *stream, int device) {
  set_device(device, "kiln::synchronize");
  cuda_check(cudaStreamSynchronize(cudaStream_t(stream)), "kiln::synchronize",
             "cudaStreamSynchronize");
}

void after_launch(const char *what, const char *path, DType dt, int64_t n,
                  dim3 grid, dim3 block, int device, bool counted) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::string fn = std::string("kiln::") + what;
    cuda_fail(e, fn.c_str(), "CUDA kernel launch");
  }
  if (counted)
    rt::bump(rt::kLaunches);
  if (rt::log_enabled(rt::kLogKernels))
    rt::log(rt::kLogKernels,
            "launch %s %s n=%lld %s grid=%u block=%u (cuda:%d)", what,
            dtype_name(dt), (long long)n, path, grid.x, block.x, device);
}

} // namespace kiln::detail

namespace kiln::rt {

int multiprocessor_count(Device dev) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];
  if (dev.is_cuda() && dev.index >= 0 && dev.index < kMaxDevices) {
    if (int n = cache[dev.index].load(std::memory_order_relaxed))
      return n;
  }
  const char *fn = "kiln::rt::multiprocessor_count";
  detail::check_cuda_device(dev, fn);
  int n = 0;
  detail::cuda_check(cudaDeviceGetAttribute(
                         &n, cudaDevAttrMultiProcessorCount, dev.index),
                     fn, "cudaDeviceGetAttribute");
  if (dev.index < kMaxDevices)
    cache[dev.index].store(n, std::memory_order_relaxed);
  return n;
}

} // namespace kiln::rt
