// The CUDA caching allocator: one cache per device, free lists by size
// class. All of a device's work runs on its one (legacy default) stream, so
// a block freed by the host can be handed out again at once: any later use
// is queued after the kernels that used it before.
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace kiln::detail {

namespace {
constexpr int kMaxDevices = 64;

struct DeviceCache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void *>> free; // by size class
};

// Never destroyed: tensors freed during static destruction return their
// blocks here, and freeing CUDA memory at exit could meet a dead context.
DeviceCache *caches() {
  static DeviceCache *c = new DeviceCache[kMaxDevices];
  return c;
}

// 512-byte minimum, then four classes per power of two (at most 25% waste).
size_t size_class(size_t n) {
  if (n <= 512)
    return 512;
  int top = 63 - __builtin_clzll(n - 1);
  size_t step = size_t(1) << (top - 2 > 9 ? top - 2 : 9);
  return (n + step - 1) & ~(step - 1);
}

// Returns every cached block of `device` to CUDA.
void release_cache(int device, const char *fn) {
  std::vector<void *> blocks;
  {
    DeviceCache &dc = caches()[device];
    std::lock_guard<std::mutex> lock(dc.mu);
    for (auto &[cls, list] : dc.free)
      blocks.insert(blocks.end(), list.begin(), list.end());
    dc.free.clear();
  }
  if (blocks.empty())
    return;
  cuda_check(cudaDeviceSynchronize(), fn, "cudaDeviceSynchronize");
  for (void *p : blocks)
    cuda_check(cudaFree(p), fn, "cudaFree");
}
} // namespace

void *cuda_alloc(size_t nbytes, int device, const char *fn) {
  if (nbytes == 0)
    return nullptr;
  if (device < 0 || device >= kMaxDevices)
    fail("%s: no CUDA GPU cuda:%d", fn, device);
  size_t cls = size_class(nbytes);
  DeviceCache &dc = caches()[device];
  {
    std::lock_guard<std::mutex> lock(dc.mu);
    auto it = dc.free.find(cls);
    if (it != dc.free.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      return p;
    }
  }
  set_device(device, fn);
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, cls);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    release_cache(device, fn);
    e = cudaMalloc(&p, cls);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    fail("%s: CUDA out of memory: cannot allocate %zu bytes on cuda:%d (%zu "
         "of %zu bytes free)",
         fn, nbytes, device, free_b, total_b);
  }
  cuda_check(e, fn, "cudaMalloc");
  return p;
}

void cuda_free(void *p, size_t nbytes, int device) {
  if (!p)
    return;
  DeviceCache &dc = caches()[device];
  std::lock_guard<std::mutex> lock(dc.mu);
  dc.free[size_class(nbytes)].push_back(p);
}

} // namespace kiln::detail
