// plugin/Cache.h - keeping the on-disk cache (Files.h: cache_dir) bounded.
//
// What the cache holds: nvcc's fatbins and their .cu (cuda/), the generated
// host code for debuggers (src/), the PCH of the generated code's #includes
// (pch/), the generated host code compiled to bitcode (host/). Every file is named by a hash of what made it, so any file may go
// at any time: a missing file is made again. The cache keeps under a size
// limit by removing the least recently used files (a hit refreshes a
// file's time) after each build that wrote to it.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>

namespace kiln::plugin {

inline constexpr uint64_t kDefaultCacheLimit = uint64_t(2) << 30; // 2 GiB

// Parses a size: bytes, or a number with a K, M, G or T suffix (powers of
// 1024, an optional trailing "B" or "iB"); "0" means no limit. Returns
// false when `text` is not a size.
bool parse_cache_size(llvm::StringRef text, uint64_t &bytes);

// The limit: `arg` (-fplugin-arg-kiln-cache-size=) when given, else
// $KILN_CACHE_SIZE, else kDefaultCacheLimit. A malformed value gives the
// default and a message in `error`.
uint64_t cache_limit(llvm::StringRef arg, std::string &error);

// Marks a cache file used now (its modification time), so that eviction
// keeps it longer. Missing files are ignored.
void touch_cache_file(llvm::StringRef path);

// Removes the least recently used files under `root` until the files there
// take at most `limit` bytes (0: no limit). Files another compile is still
// writing (".tmp-" names younger than an hour) are left alone. Returns the
// number of files removed.
int evict_cache(llvm::StringRef root, uint64_t limit);

} // namespace kiln::plugin
