// plugin/HostCompile.h - the generated host C++ of a TU, compiled in-process
// by a nested CompilerInstance and linked into the TU's own LLVM module, so
// that it lands in the same object file under every output mode.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <memory>
#include <string>

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
};

// Compiles `text` (named `path`: the debugger shows that file) as C++ with
// a deep copy of the outer invocation, scrubbed of outputs, plugins and
// warnings, optimised at O2 with vectorisation whatever the outer -O.
// `fallback_include` is searched last for <kiln/...> headers. The #include
// lines `text` starts with are precompiled once into `pch_dir` (none when
// empty) and reused by every TU built with the same options.
HostModule compile_host(clang::CompilerInstance &outer, llvm::StringRef path,
                        llvm::StringRef text, llvm::StringRef fallback_include,
                        llvm::StringRef pch_dir);

// Links `bitcode` into the TU's module during the backend (pipeline start;
// before the first pass when -disable-llvm-passes, as -save-temps uses),
// then gives the linked definitions internal linkage so that TUs never
// collide.
void link_into_tu(clang::CompilerInstance &outer,
                  std::shared_ptr<const std::string> bitcode,
                  std::string label);

} // namespace kiln::plugin
