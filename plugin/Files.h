// plugin/Files.h - hashing, the on-disk cache folder, atomic writes.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>

namespace kiln::plugin {

// Incremental SHA-256 over labelled parts, as lowercase hex.
class Hasher {
public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher &) = delete;
  Hasher &operator=(const Hasher &) = delete;
  Hasher &add(llvm::StringRef part); // length-prefixed, so parts never run together
  std::string hex(size_t chars = 64);

private:
  struct Impl;
  Impl *impl_;
};

// The cache folder: `explicit_dir`, else $KILN_CACHE_DIR, else
// $XDG_CACHE_HOME/kiln, else ~/.cache/kiln. "" when none can be made.
std::string cache_dir(llvm::StringRef explicit_dir);

// Writes `data` to `path` through a temporary file and a rename, so readers
// never see a partial file. Returns "" or the error.
std::string write_atomically(llvm::StringRef path, llvm::StringRef data);

// Reads a whole file; false if it cannot.
bool read_file(llvm::StringRef path, std::string &out);

// This plugin's build: the path, size and time of the loaded libkiln.so,
// for cache keys of what the plugin itself makes.
const std::string &plugin_identity();

} // namespace kiln::plugin
