// plugin/HostCompile.h - the generated host C++ of a TU, compiled in-process
// by a nested CompilerInstance and linked into the TU's own LLVM module, so
// that it lands in the same object file under every output mode.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace clang {
class CompilerInstance;
} // namespace clang

namespace kiln::plugin {

// True while this thread runs a nested compile: the plugin action that
// clang instantiates for it must stay out of the way.
bool in_nested_compile();

struct HostModule {
  std::string bitcode; // the optimised module, as bitcode
  std::string error;   // nested diagnostics, when it failed
  bool wrote_cache = false; // a PCH or bitcode was added to the cache
  bool cache_hit = false;   // the bitcode came from the cache
};

// Compiles `text` (named `path`: the debugger shows that file) as C++ with
// a deep copy of the outer invocation, scrubbed of outputs, plugins and
// warnings, optimised at O2 with vectorisation whatever the outer -O.
// `fallback_include` is searched last for <kiln/...> headers. The #include
// lines `text` starts with are precompiled once into `pch_dir` (none when
// empty) and reused by every TU built with the same options. The bitcode
// is kept in `bitcode_dir` (none when empty): a rebuild with the same text,
// options and headers skips the nested compile.
HostModule compile_host(clang::CompilerInstance &outer, llvm::StringRef path,
                        llvm::StringRef text, llvm::StringRef fallback_include,
                        llvm::StringRef pch_dir, llvm::StringRef bitcode_dir);

// What the generated host code embeds where the TU's fatbin goes: a short
// stand-in, unique to the fatbin, that link_into_tu swaps for the real
// bytes in the module. So the host text stays small (no megabytes of
// escaped bytes to write, keep in the cache and lex), and it does not
// change when only the fatbin does.
std::vector<uint8_t> fatbin_placeholder(const std::vector<uint8_t> &fatbin);

// Links `bitcode` into the TU's module during the backend (at the end of
// the optimisation pipeline, since the nested compile optimised it; at its
// start for an LTO pre-link; before the first pass when
// -disable-llvm-passes, as -save-temps uses),
// then gives the linked definitions internal linkage so that TUs never
// collide. The constant that holds `placeholder` (when not empty) gets the
// bytes of `fatbin` instead.
void link_into_tu(clang::CompilerInstance &outer,
                  std::shared_ptr<const std::string> bitcode,
                  std::string label, std::vector<uint8_t> placeholder,
                  std::vector<uint8_t> fatbin);

} // namespace kiln::plugin
