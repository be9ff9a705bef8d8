#include "Nvcc.h"

#include "Cache.h"
#include "Files.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Program.h>

#include <algorithm>
#include <optional>

namespace kiln::plugin {

static bool is_executable(llvm::StringRef path) {
  return !path.empty() && llvm::sys::fs::exists(path) &&
         !llvm::sys::fs::is_directory(path) &&
         llvm::sys::fs::can_execute(path);
}

std::string find_nvcc(llvm::StringRef arg_path, std::string &searched) {
  if (!arg_path.empty()) {
    searched = "the nvcc= plugin argument '" + arg_path.str() + "'";
    return is_executable(arg_path) ? arg_path.str() : "";
  }
  if (auto env = llvm::sys::Process::GetEnv("KILN_NVCC"); env && !env->empty()) {
    searched = "KILN_NVCC='" + *env + "'";
    return is_executable(*env) ? *env : "";
  }
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("nvcc"))
    return *p;
  if (is_executable("/usr/local/cuda/bin/nvcc"))
    return "/usr/local/cuda/bin/nvcc";
  searched = "PATH and /usr/local/cuda/bin";
  return "";
}

// Runs `program args...`; returns its exit code (-1 when it could not run)
// and its stdout and stderr together in `output`.
static int run(llvm::StringRef program, llvm::ArrayRef<std::string> args,
               const std::string &scratch_dir, std::string &output) {
  llvm::SmallString<256> log;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(scratch_dir + "/nvcc-%%%%%%%%.log", fd,
                                      log)) {
    output = "cannot create a log file in '" + scratch_dir + "'";
    return -1;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::SmallVector<llvm::StringRef, 16> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""),
                                                llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &err);
  read_file(log, output);
  llvm::sys::fs::remove(log);
  if (rc < 0)
    output += err;
  return rc;
}

// `nvcc --version`, remembered per nvcc binary (path, size, mtime) because
// it costs a process start on every build otherwise.
static std::string nvcc_version(const std::string &nvcc,
                                const std::string &dir) {
  llvm::sys::fs::file_status st;
  std::string id = nvcc;
  if (!llvm::sys::fs::status(nvcc, st))
    id += ";" + std::to_string(st.getSize()) + ";" +
          std::to_string(st.getLastModificationTime().time_since_epoch().count());
  std::string memo = dir + "/nvcc-version-" + Hasher().add(id).hex(16) + ".txt";
  std::string version;
  if (read_file(memo, version) && !version.empty())
    return version;
  if (run(nvcc, {"--version"}, dir, version) != 0)
    return "unknown: " + version;
  (void)write_atomically(memo, version);
  return version;
}

// The contents of every kiln header `source` includes, transitively.
static void hash_kiln_headers(llvm::StringRef source,
                              const std::string &include_dir, Hasher &h,
                              llvm::StringSet<> &seen) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  source.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front("#"))
      continue;
    line = line.ltrim();
    if (!line.consume_front("include"))
      continue;
    line = line.trim();
    if (line.size() < 2 || (line[0] != '<' && line[0] != '"'))
      continue;
    llvm::StringRef name = line.drop_front().take_until(
        [](char c) { return c == '>' || c == '"'; });
    if (!name.starts_with("kiln/") || !seen.insert(name).second)
      continue;
    std::string text;
    if (!read_file(include_dir + "/" + name.str(), text))
      text = "<missing>";
    h.add(name).add(text);
    hash_kiln_headers(text, include_dir, h, seen);
  }
}

// Where the NVIDIA driver lists this machine's GPUs: their models, as the
// identity of "native".
static std::string gpus_present() {
  std::vector<std::string> models;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it("/proc/driver/nvidia/gpus", ec), end;
       it != end && !ec; it.increment(ec)) {
    std::string info;
    if (read_file(it->path() + "/information", info)) {
      llvm::StringRef model = llvm::StringRef(info).split('\n').first;
      model.consume_front("Model:");
      models.push_back(model.trim().str());
    }
  }
  std::sort(models.begin(), models.end());
  std::string all;
  for (const std::string &m : models)
    all += (all.empty() ? "" : ", ") + m;
  return all;
}

std::vector<std::string> cuda_arch_flags(llvm::StringRef spec,
                                         std::string &key, std::string &error) {
  std::string from = "-fplugin-arg-kiln-arch";
  if (spec.empty()) {
    std::optional<std::string> env = llvm::sys::Process::GetEnv("KILN_CUDA_ARCH");
    if (env && !env->empty()) {
      from = "KILN_CUDA_ARCH";
      key = *env;
    } else {
      // The GPUs of this machine where it has any (what torch.compile
      // builds for), else a portable list. A program moved to a GPU its
      // kernels cannot run on runs its original bodies (a guard checks).
      key = gpus_present().empty() ? kDefaultCudaArch : "native";
    }
  } else {
    key = spec.str();
  }
  std::string list = key;
  std::replace(list.begin(), list.end(), ';', ',');
  llvm::SmallVector<llvm::StringRef, 8> items;
  llvm::StringRef(list).split(items, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> flags;
  for (llvm::StringRef item : items) {
    item = item.trim();
    llvm::StringRef digits = item;
    if (item == "native") {
      std::string gpus = gpus_present();
      if (gpus.empty()) {
        error = from + "=native, but this machine has no NVIDIA GPU";
        return {};
      }
      key += " (" + gpus + ")";
      flags.push_back("-arch=native");
    } else if (digits.consume_front("sm_") && !digits.empty() &&
               llvm::isDigit(digits[0])) {
      flags.push_back("-gencode");
      flags.push_back(("arch=compute_" + digits + ",code=sm_" + digits).str());
    } else if (digits.consume_front("compute_") && !digits.empty() &&
               llvm::isDigit(digits[0])) {
      flags.push_back("-gencode");
      flags.push_back(("arch=compute_" + digits + ",code=compute_" + digits).str());
    } else {
      error = from + "='" + key + "': '" + item.str() + "' is not sm_XX, "
              "compute_XX or native (e.g. sm_80,sm_90,compute_90)";
      return {};
    }
  }
  if (flags.empty())
    error = from + " is empty (e.g. sm_80,sm_90,compute_90)";
  return flags;
}

// nvcc 12.8 and newer compress fatbins much harder with --compress-mode.
static bool has_compress_mode(llvm::StringRef version) {
  size_t at = version.find("release ");
  if (at == llvm::StringRef::npos)
    return false;
  unsigned major = 0, minor = 0;
  llvm::StringRef v = version.drop_front(at + 8);
  if (v.consumeInteger(10, major) || !v.consume_front(".") ||
      v.consumeInteger(10, minor))
    return false;
  return major > 12 || (major == 12 && minor >= 8);
}

FatbinResult build_fatbin(const std::string &nvcc, llvm::StringRef source,
                          const std::string &include_dir,
                          const std::string &cache_root,
                          const std::vector<std::string> &arch_flags,
                          llvm::StringRef arch_key,
                          const std::function<void()> &before_nvcc) {
  FatbinResult r;
  std::string dir = cache_root + "/cuda";
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    r.error = "cannot create the cache folder '" + dir + "': " + ec.message();
    return r;
  }
  std::string version = nvcc_version(nvcc, dir);
  // --threads 0: the architectures in parallel, one thread per core.
  std::vector<std::string> flags = {"-fatbin", "-O3", "-std=c++17",
                                    "--threads", "0"};
  flags.insert(flags.end(), arch_flags.begin(), arch_flags.end());
  if (has_compress_mode(version))
    flags.push_back("--compress-mode=size");

  // The headers' contents go into the key, not where they are: another
  // checkout or install of the same Kiln hits the same entries.
  Hasher h;
  h.add("kiln-fatbin-v2").add(source);
  for (const std::string &f : flags)
    h.add(f);
  flags.push_back("-I" + include_dir);
  h.add(arch_key);
  h.add(version);
  llvm::StringSet<> seen;
  hash_kiln_headers(source, include_dir, h, seen);
  std::string key = h.hex(32);
  std::string base = dir + "/" + key;
  r.cu_path = base + ".cu";
  std::string fatbin_path = base + ".fatbin";

  std::string cached;
  if (read_file(fatbin_path, cached) && !cached.empty()) {
    r.fatbin.assign(cached.begin(), cached.end());
    r.ok = r.cache_hit = true;
    touch_cache_file(fatbin_path); // recently used: evicted last
    if (llvm::sys::fs::exists(r.cu_path))
      touch_cache_file(r.cu_path);
    else
      (void)write_atomically(r.cu_path, source);
    return r;
  }

  if (std::string err = write_atomically(r.cu_path, source); !err.empty()) {
    r.error = err;
    return r;
  }
  if (before_nvcc)
    before_nvcc();
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(base + ".fatbin.tmp-%%%%%%%%", fd, tmp)) {
    r.error = "cannot create a file in '" + dir + "'";
    return r;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  std::vector<std::string> args = flags;
  args.push_back("-o");
  args.push_back(std::string(tmp));
  args.push_back(r.cu_path);
  std::string output;
  int rc = run(nvcc, args, dir, output);
  std::string bytes;
  if (rc != 0 || !read_file(tmp, bytes) || bytes.empty()) {
    llvm::sys::fs::remove(tmp);
    std::string cmd = nvcc;
    for (const std::string &a : args)
      cmd += " " + a;
    r.error = "nvcc failed (exit code " + std::to_string(rc) + ")\n" + cmd +
              "\n" + output;
    return r;
  }
  if (llvm::sys::fs::rename(tmp, fatbin_path))
    llvm::sys::fs::remove(tmp);
  r.fatbin.assign(bytes.begin(), bytes.end());
  r.ok = true;
  return r;
}

} // namespace kiln::plugin
