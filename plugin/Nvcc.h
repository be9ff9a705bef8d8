// plugin/Nvcc.h - finding nvcc and turning a TU's .cu into a fatbin, with
// an on-disk cache so that a rebuild does not pay for nvcc twice.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::plugin {

// nvcc from, in order: the `nvcc=` plugin argument, $KILN_NVCC, PATH,
// /usr/local/cuda/bin/nvcc. "" when none is there; `searched` then says
// where it looked.
std::string find_nvcc(llvm::StringRef arg_path, std::string &searched);

struct FatbinResult {
  std::vector<uint8_t> fatbin;
  bool ok = false;
  bool cache_hit = false;
  std::string error;   // nvcc's output when it failed
  std::string cu_path; // where the .cu is kept, for the user and debuggers
};

// The fatbin of `source`: from the cache under `cache_dir`/cuda when the key
// (source, flags, `nvcc --version`, the kiln headers the source includes
// from `include_dir`) was seen before, else from nvcc, then cached.
FatbinResult build_fatbin(const std::string &nvcc, llvm::StringRef source,
                          const std::string &include_dir,
                          const std::string &cache_dir);

} // namespace kiln::plugin
