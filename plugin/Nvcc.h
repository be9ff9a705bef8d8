// plugin/Nvcc.h - finding nvcc and turning a TU's .cu into a fatbin, with
// an on-disk cache so that a rebuild does not pay for nvcc twice.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln::plugin {

// nvcc from, in order: the `nvcc=` plugin argument, $KILN_NVCC, PATH,
// /usr/local/cuda/bin/nvcc. "" when none is there; `searched` then says
// where it looked.
std::string find_nvcc(llvm::StringRef arg_path, std::string &searched);

// The nvcc flags that pick the GPU architectures of the generated kernels,
// from `spec`: the arch= plugin argument, else $KILN_CUDA_ARCH, else
// native on a machine with NVIDIA GPUs, else kDefaultCudaArch. A spec is a
// list (',' or ';') of sm_XX (SASS for that GPU), compute_XX (PTX, compiled
// by the driver for newer GPUs) or
// "native" (the GPUs of this machine, as nvcc -arch=native). `key` gets
// what the flags depend on beyond their text (native: the GPUs present).
// "" in `error` when the spec is valid.
inline constexpr const char *kDefaultCudaArch = "sm_80,sm_90,compute_90";
std::vector<std::string> cuda_arch_flags(llvm::StringRef spec,
                                         std::string &key, std::string &error);

struct FatbinResult {
  std::vector<uint8_t> fatbin;
  bool ok = false;
  bool cache_hit = false;
  std::string error;   // nvcc's output when it failed
  std::string cu_path; // where the .cu is kept, for the user and debuggers
};

// The fatbin of `source` for `arch_flags`: from the cache under
// `cache_dir`/cuda when the key (source, flags, `arch_key`, `nvcc
// --version`, the kiln headers the source includes from `include_dir`) was
// seen before, else from nvcc (`before_nvcc` runs first: the compile is
// about to take a while), then cached. nvcc compiles the architectures in
// parallel (--threads) and compresses the fatbin where it can (12.8+).
FatbinResult build_fatbin(const std::string &nvcc, llvm::StringRef source,
                          const std::string &include_dir,
                          const std::string &cache_dir,
                          const std::vector<std::string> &arch_flags,
                          llvm::StringRef arch_key,
                          const std::function<void()> &before_nvcc);

} // namespace kiln::plugin
