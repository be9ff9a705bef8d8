// rt::launch: runs a kernel of a fatbin embedded by the Kiln plugin. The
// first launch of a module loads it (once per process); the first launch
// of a kernel looks it up by name. After that a launch is an atomic load,
// a device check and cudaLaunchKernel: no locks, allocations or strings.
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <kiln/rt.h>

#include <mutex>

namespace kiln::rt {

static const char *const kFn = "kiln::rt::launch";

[[noreturn]] static void launch_fail(cudaError_t e, const KernelRef &k,
                                     const char *what) {
  cudaGetLastError();
  detail::fail("%s: %s for kernel %s of %s: %s (%s)", kFn, what, k.name,
               k.module ? k.module->label : "?", cudaGetErrorString(e),
               cudaGetErrorName(e));
}

// Slow path, once per kernel: load the module (once), look the kernel up.
static void *resolve(KernelRef &k, Device dev) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (void *h = k.handle.load(std::memory_order_acquire))
    return h;
  int count = detail::cuda_device_count_cached();
  if (count == 0 || dev.index >= count)
    detail::fail("%s: cannot launch kernel %s of %s on %s: no CUDA GPU %s", kFn,
                 k.name, k.module ? k.module->label : "?", dev.str().c_str(),
                 count == 0 ? "available" : "with that index");
  if (!k.module || !k.module->image)
    detail::fail("%s: kernel %s has no module image", kFn, k.name);
  KernelModule &m = *k.module;
  void *lib = m.library.load(std::memory_order_acquire);
  if (!lib) {
    cudaLibrary_t l = nullptr;
    cudaError_t e = cudaLibraryLoadData(&l, m.image, nullptr, nullptr, 0,
                                        nullptr, nullptr, 0);
    if (e != cudaSuccess)
      launch_fail(e, k, "cudaLibraryLoadData");
    lib = l;
    m.library.store(lib, std::memory_order_release);
  }
  cudaKernel_t kernel = nullptr;
  cudaError_t e = cudaLibraryGetKernel(&kernel, cudaLibrary_t(lib), k.name);
  if (e != cudaSuccess)
    launch_fail(e, k, "cudaLibraryGetKernel");
  k.handle.store(kernel, std::memory_order_release);
  return kernel;
}

void launch(KernelRef &k, Device dev, Dim3 grid, Dim3 block, void **args,
            unsigned shared_bytes) {
  if (!dev.is_cuda())
    detail::fail("%s: kernel %s of %s: %s is not a CUDA device", kFn, k.name,
                 k.module ? k.module->label : "?", dev.str().c_str());
  NvtxRange range(k.name);
  void *h = k.handle.load(std::memory_order_acquire);
  if (!h)
    h = resolve(k, dev);
  int cur = -1;
  if (cudaGetDevice(&cur) != cudaSuccess || cur != dev.index) {
    cudaError_t e = cudaSetDevice(dev.index);
    if (e != cudaSuccess)
      launch_fail(e, k, "cudaSetDevice");
  }
  cudaError_t e =
      cudaLaunchKernel(static_cast<const void *>(h), dim3(grid.x, grid.y, grid.z),
                       dim3(block.x, block.y, block.z), args, shared_bytes,
                       detail::stream_of(dev.index));
  if (e == cudaSuccess)
    e = cudaGetLastError();
  if (e != cudaSuccess)
    launch_fail(e, k, "cudaLaunchKernel");
  bump(kLaunches);
  if (log_enabled(kLogKernels))
    log(kLogKernels, "launch %s grid=%u,%u,%u block=%u,%u,%u (%s, cuda:%d)",
        k.name, grid.x, grid.y, grid.z, block.x, block.y, block.z,
        k.module->label, int(dev.index));
}

} // namespace kiln::rt
