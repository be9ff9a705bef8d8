// rt::launch: runs a kernel of a fatbin embedded by the Kiln plugin. The
// first launch of a module loads it (once per process); the first launch
// of a kernel looks it up by name. After that a launch is an atomic load,
// a device check and cudaLaunchKernel: no locks, allocations or strings.
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <kiln/rt.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace kiln::rt {

static const char *const kFn = "kiln::rt::launch";

[[noreturn]] static void launch_fail(cudaError_t e, const KernelRef &k,
                                     const char *what) {
  cudaGetLastError();
  detail::fail("%s: %s for kernel %s of %s: %s (%s)", kFn, what, k.name,
               k.module ? k.module->label : "?", cudaGetErrorString(e),
               cudaGetErrorName(e));
}

// The module's library, loaded once per process (0 and the error if the
// driver refuses it). Called with `mu` held.
static std::mutex mu;

static void *load_library(KernelModule &m, cudaError_t &err) {
  err = cudaSuccess;
  void *lib = m.library.load(std::memory_order_acquire);
  if (!lib) {
    cudaLibrary_t l = nullptr;
    err = cudaLibraryLoadData(&l, m.image, nullptr, nullptr, 0, nullptr,
                              nullptr, 0);
    if (err != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    lib = l;
    m.library.store(lib, std::memory_order_release);
  }
  return lib;
}

// Why no kernel can be launched on `dev` at all, or null.
static const char *no_device(Device dev) {
  int count = detail::cuda_device_count_cached();
  if (count == 0)
    return "no CUDA GPU available";
  return dev.index >= count ? "no CUDA GPU with that index" : nullptr;
}

static std::unordered_map<const KernelModule *, std::string> &load_errors() {
  static std::unordered_map<const KernelModule *, std::string> errors;
  return errors;
}

bool module_runs_on(KernelModule &m, Device dev, const char *kernel) {
  const uint64_t bit = dev.index < 64 ? uint64_t(1) << dev.index : 0;
  if (bit && (m.runs_on_asked.load(std::memory_order_acquire) & bit))
    return m.runs_on.load(std::memory_order_acquire) & bit;
  std::lock_guard<std::mutex> lock(mu);
  std::string why;
  if (!bit) {
    why = "device index above 63";
  } else if (const char *none = no_device(dev)) {
    why = none;
  } else if (!m.image) {
    why = "no fatbin";
  } else {
    // The driver picks the device's code when a kernel is looked up on
    // it: look one up, as the first launch will (every kernel of a module
    // is built for the same architectures).
    int cur = -1;
    cudaGetDevice(&cur);
    if (cur != dev.index)
      cudaSetDevice(dev.index);
    cudaError_t e;
    void *lib = load_library(m, e);
    cudaKernel_t k = nullptr;
    if (lib)
      e = cudaLibraryGetKernel(&k, cudaLibrary_t(lib), kernel);
    if (cur >= 0 && cur != dev.index)
      cudaSetDevice(cur);
    if (e != cudaSuccess) {
      cudaGetLastError();
      cudaDeviceProp p{};
      cudaGetDeviceProperties(&p, dev.index);
      why = std::string("its CUDA kernels cannot run on ") + dev.str() + " (" +
            p.name + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) +
            "): " + cudaGetErrorString(e) +
            "; rebuild with -fplugin-arg-kiln-arch= including it";
    }
  }
  if (!why.empty())
    load_errors()[&m] = why;
  if (bit) {
    if (why.empty())
      m.runs_on.fetch_or(bit, std::memory_order_release);
    m.runs_on_asked.fetch_or(bit, std::memory_order_release);
  }
  return why.empty();
}

const char *module_load_error(const KernelModule &m) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = load_errors().find(&m);
  return it == load_errors().end() ? "" : it->second.c_str();
}

// Slow path, once per kernel: load the module (once), look the kernel up.
static void *resolve(KernelRef &k, Device dev) {
  std::lock_guard<std::mutex> lock(mu);
  if (void *h = k.handle.load(std::memory_order_acquire))
    return h;
  if (const char *none = no_device(dev))
    detail::fail("%s: cannot launch kernel %s of %s on %s: %s", kFn, k.name,
                 k.module ? k.module->label : "?", dev.str().c_str(), none);
  if (!k.module || !k.module->image)
    detail::fail("%s: kernel %s has no module image", kFn, k.name);
  cudaError_t e;
  void *lib = load_library(*k.module, e);
  if (!lib)
    launch_fail(e, k, "cudaLibraryLoadData");
  cudaKernel_t kernel = nullptr;
  e = cudaLibraryGetKernel(&kernel, cudaLibrary_t(lib), k.name);
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
