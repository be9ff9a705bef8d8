#include "Cache.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Chrono.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Process.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace kiln::plugin {

bool parse_cache_size(llvm::StringRef text, uint64_t &bytes) {
  text = text.trim();
  llvm::StringRef digits = text.take_while(llvm::isDigit);
  llvm::StringRef unit = text.drop_front(digits.size()).trim();
  uint64_t n = 0;
  if (digits.empty() || digits.getAsInteger(10, n))
    return false;
  if (!unit.consume_back_insensitive("ib"))
    unit.consume_back_insensitive("b");
  int shift = 0;
  if (unit.equals_insensitive("k"))
    shift = 10;
  else if (unit.equals_insensitive("m"))
    shift = 20;
  else if (unit.equals_insensitive("g"))
    shift = 30;
  else if (unit.equals_insensitive("t"))
    shift = 40;
  else if (!unit.empty())
    return false;
  if (shift && n > (UINT64_MAX >> shift))
    return false;
  bytes = n << shift;
  return true;
}

uint64_t cache_limit(llvm::StringRef arg, std::string &error) {
  std::string text = arg.str(), from = "-fplugin-arg-kiln-cache-size";
  if (text.empty()) {
    std::optional<std::string> env = llvm::sys::Process::GetEnv("KILN_CACHE_SIZE");
    if (!env || env->empty())
      return kDefaultCacheLimit;
    text = *env;
    from = "KILN_CACHE_SIZE";
  }
  uint64_t bytes = 0;
  if (parse_cache_size(text, bytes))
    return bytes;
  error = from + "='" + text + "' is not a size (e.g. 2G, 500M, 0 for no "
          "limit); using the default, 2G";
  return kDefaultCacheLimit;
}

void touch_cache_file(llvm::StringRef path) {
  int fd = -1;
  if (llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenExisting,
                                      llvm::sys::fs::OF_Append))
    return;
  auto now = std::chrono::system_clock::now();
  (void)llvm::sys::fs::setLastAccessAndModificationTime(fd, now);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
}

int evict_cache(llvm::StringRef root, uint64_t limit) {
  if (limit == 0)
    return 0;
  struct Entry {
    llvm::sys::TimePoint<> used;
    uint64_t size;
    std::string path;
  };
  std::vector<Entry> files;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(root, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(it->path(), st) ||
        st.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    auto used = st.getLastModificationTime();
    if (llvm::StringRef(it->path()).contains(".tmp-") &&
        now - used < std::chrono::hours(1))
      continue;
    total += st.getSize();
    files.push_back({used, st.getSize(), it->path()});
  }
  if (total <= limit)
    return 0;
  std::sort(files.begin(), files.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  int removed = 0;
  for (const Entry &f : files) {
    if (total <= limit)
      break;
    // Another compile may have removed it first: it is gone either way.
    (void)llvm::sys::fs::remove(f.path);
    total -= f.size;
    ++removed;
  }
  return removed;
}

} // namespace kiln::plugin
