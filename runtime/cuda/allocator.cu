// The CUDA caching allocator: one cache per device, free lists by stream
// and size class. A block freed by the host goes back to the list of the
// stream it was allocated for and is handed out again only for work on
// that stream, which the stream's order queues after the kernels that used
// it before (PyTorch's rule; kiln/interop.h says what that asks of code
// that moves tensors between streams).
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <kiln/stats.h>

#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::detail {

namespace {
constexpr int kMaxDevices = 64;

// A free list's key: the stream and the size class.
struct FreeKey {
  void *stream;
  size_t cls;
  bool operator==(const FreeKey &) const = default;
};
struct FreeKeyHash {
  size_t operator()(const FreeKey &k) const {
    return std::hash<void *>()(k.stream) * 31 + k.cls;
  }
};

struct DeviceCache {
  std::mutex mu;
  std::unordered_map<FreeKey, std::vector<void *>, FreeKeyHash> free;
  size_t reserved = 0; // bytes taken from cudaMalloc (in use or cached)
  size_t in_use = 0;   // bytes held by live tensors
  size_t limit = 0;    // set_cuda_memory_limit; 0: none
  std::unordered_set<void *> pinned; // streams whose blocks CUDA graphs own
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
    for (auto it = dc.free.begin(); it != dc.free.end();) {
      if (dc.pinned.contains(it->first.stream)) {
        ++it;
        continue;
      }
      blocks.insert(blocks.end(), it->second.begin(), it->second.end());
      dc.reserved -= it->first.cls * it->second.size();
      it = dc.free.erase(it);
    }
  }
  if (blocks.empty())
    return;
  cuda_check(cudaDeviceSynchronize(), fn, "cudaDeviceSynchronize");
  for (void *p : blocks)
    cuda_check(cudaFree(p), fn, "cudaFree");
}
} // namespace

void *cuda_alloc(size_t nbytes, int device, void *stream, const char *fn) {
  if (nbytes == 0)
    return nullptr;
  if (device < 0 || device >= kMaxDevices)
    fail("%s: no CUDA GPU cuda:%d", fn, device);
  size_t cls = size_class(nbytes);
  DeviceCache &dc = caches()[device];
  // Under the limit (set_cuda_memory_limit) when `cls` more is reserved.
  auto fits = [&] {
    std::lock_guard<std::mutex> lock(dc.mu);
    return dc.limit == 0 || dc.reserved + cls <= dc.limit;
  };
  {
    std::lock_guard<std::mutex> lock(dc.mu);
    auto it = dc.free.find(FreeKey{stream, cls});
    if (it != dc.free.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      dc.in_use += cls;
      return p;
    }
  }
  set_device(device, fn);
  void *p = nullptr;
  cudaError_t e = fits() ? cudaMalloc(&p, cls) : cudaErrorMemoryAllocation;
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    release_cache(device, fn);
    e = fits() ? cudaMalloc(&p, cls) : cudaErrorMemoryAllocation;
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0, limit = 0, in_use = 0;
    cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    {
      std::lock_guard<std::mutex> lock(dc.mu);
      limit = dc.limit;
      in_use = dc.in_use;
    }
    if (limit)
      fail("%s: CUDA out of memory: cannot allocate %zu bytes on cuda:%d "
           "(%zu bytes in use by tensors, limit %zu set by "
           "kiln::set_cuda_memory_limit)",
           fn, nbytes, device, in_use, limit);
    fail("%s: CUDA out of memory: cannot allocate %zu bytes on cuda:%d (%zu "
         "of %zu bytes free, %zu in use by tensors)",
         fn, nbytes, device, free_b, total_b, in_use);
  }
  cuda_check(e, fn, "cudaMalloc");
  std::lock_guard<std::mutex> lock(dc.mu);
  dc.reserved += cls;
  dc.in_use += cls;
  return p;
}

size_t cuda_memory_in_use(int device) {
  if (device < 0 || device >= kMaxDevices)
    return 0;
  DeviceCache &dc = caches()[device];
  std::lock_guard<std::mutex> lock(dc.mu);
  return dc.in_use;
}

void cuda_pool_pin(void *stream, int device, bool pinned) {
  DeviceCache &dc = caches()[device];
  std::lock_guard<std::mutex> lock(dc.mu);
  if (pinned)
    dc.pinned.insert(stream);
  else
    dc.pinned.erase(stream);
}

void set_cuda_memory_limit_bytes(size_t bytes, int device) {
  if (device < 0 || device >= kMaxDevices)
    fail("kiln::set_cuda_memory_limit: no CUDA GPU cuda:%d", device);
  {
    DeviceCache &dc = caches()[device];
    std::lock_guard<std::mutex> lock(dc.mu);
    dc.limit = bytes;
  }
  if (bytes)
    release_cache(device, "kiln::set_cuda_memory_limit");
}

// KILN_NO_CUDA_MEMORY_CACHING=1: every block goes back to CUDA when its
// tensor dies (as PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING), so that
// compute-sanitizer's leak check reports only memory that is never freed.
static const bool kNoCaching = rt::env_flag("KILN_NO_CUDA_MEMORY_CACHING");

void cuda_free(void *p, size_t nbytes, int device, void *stream) {
  if (!p)
    return;
  DeviceCache &dc = caches()[device];
  size_t cls = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(dc.mu);
    dc.in_use -= cls;
    if (!kNoCaching || dc.pinned.contains(stream)) {
      dc.free[FreeKey{stream, cls}].push_back(p);
      return;
    }
    dc.reserved -= cls;
  }
  // Called from destructors: an error here (a context already gone at
  // exit) cannot be raised; the memory is the driver's to reclaim then.
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != device)
    cudaSetDevice(device);
  if (cudaFree(p) != cudaSuccess)
    cudaGetLastError();
  if (current >= 0 && current != device)
    cudaSetDevice(current);
}

} // namespace kiln::detail
