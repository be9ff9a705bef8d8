#include "Files.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>

#include <dlfcn.h>

namespace kiln::plugin {

struct Hasher::Impl {
  llvm::SHA256 sha;
};

Hasher::Hasher() : impl_(new Impl) {}
Hasher::~Hasher() { delete impl_; }

Hasher &Hasher::add(llvm::StringRef part) {
  uint64_t n = part.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = uint8_t(n >> (8 * i));
  impl_->sha.update(llvm::ArrayRef<uint8_t>(len, 8));
  impl_->sha.update(part);
  return *this;
}

std::string Hasher::hex(size_t chars) {
  std::array<uint8_t, 32> digest = impl_->sha.final();
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : digest) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s.substr(0, chars);
}

std::string cache_dir(llvm::StringRef explicit_dir) {
  llvm::SmallString<256> dir;
  if (!explicit_dir.empty()) {
    dir = explicit_dir;
  } else if (auto env = llvm::sys::Process::GetEnv("KILN_CACHE_DIR");
             env && !env->empty()) {
    dir = *env;
  } else if (auto xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
             xdg && !xdg->empty()) {
    dir = *xdg;
    llvm::sys::path::append(dir, "kiln");
  } else if (llvm::sys::path::home_directory(dir)) {
    llvm::sys::path::append(dir, ".cache", "kiln");
  } else {
    return "";
  }
  llvm::sys::fs::make_absolute(dir);
  if (llvm::sys::fs::create_directories(dir))
    return "";
  return std::string(dir);
}

std::string write_atomically(llvm::StringRef path, llvm::StringRef data) {
  llvm::SmallString<256> tmp;
  int fd = -1;
  std::string model = (path + ".tmp-%%%%%%%%").str();
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, tmp))
    return "cannot create a file next to '" + path.str() + "': " + ec.message();
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << data;
    os.close();
    if (os.has_error()) {
      std::string err = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return "cannot write '" + tmp.str().str() + "': " + err;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return "cannot rename '" + tmp.str().str() + "' to '" + path.str() +
           "': " + ec.message();
  }
  return "";
}

bool read_file(llvm::StringRef path, std::string &out) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return false;
  out = (*buf)->getBuffer().str();
  return true;
}

const std::string &plugin_identity() {
  static const std::string id = [] {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void *>(&plugin_identity), &info) ||
        !info.dli_fname)
      return std::string("unknown");
    llvm::sys::fs::file_status st;
    std::string id = info.dli_fname;
    if (!llvm::sys::fs::status(id, st))
      id += ";" + std::to_string(st.getSize()) + ";" +
            std::to_string(
                st.getLastModificationTime().time_since_epoch().count());
    return id;
  }();
  return id;
}

} // namespace kiln::plugin
