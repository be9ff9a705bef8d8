// plugin/CompileRegions.h - one [[kiln::compile]] function, from its body
// to fast paths: plan the regions (Capture.h), generate each fast path
// (codegen, or the eager backend), rewrite the body (Rewrite.h), and say
// what happened (remarks, graph breaks, "fullgraph" errors, the dump).
#pragma once

#include "Diag.h"
#include "Options.h"

#include <kiln/passes/codegen.h>

#include <clang/Basic/SourceLocation.h>

#include <llvm/ADT/DenseMap.h>

#include <functional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class Expr;
class FunctionDecl;
class Sema;
class Stmt;
class VarDecl;
} // namespace clang

namespace kiln::plugin {

struct CompileRequest {
  clang::ASTContext &ctx;
  clang::Sema &sema;
  Diag &diag;
  clang::FunctionDecl *fd;
  std::string name; // qualified, for messages
  const CompileOptions &opts;
  const PluginArgs &args;
  bool cuda; // generate CUDA kernels
  // Reports what leaves the whole function eager (a warning, or an error
  // with "fullgraph").
  std::function<void(clang::SourceLocation, const std::string &)> problem;
  // The symbol of a fast path, from a text that identifies it.
  std::function<std::string(llvm::StringRef)> symbol;
  // A graph location back in the source (`fallback` when it is not there).
  std::function<clang::SourceLocation(const ir::Loc &, clang::SourceLocation)>
      source_loc;
  // -fplugin-arg-kiln-dtype-profile: combinations to compile variants for.
  const codegen::DtypeProfile *profile = nullptr;
};

struct CompileResult {
  std::vector<codegen::FunctionCode> codes; // one per fast path
  std::vector<ir::Graph> graphs;            // as captured, per fast path
  struct Break {
    clang::SourceLocation loc;
    std::string reason;
  };
  std::vector<Break> breaks;
  std::string tensor_header; // where kiln::Tensor is declared
};

// What a TU's functions leave for the next ones: the original bodies and
// initialisers of rewritten functions (to inline them).
struct CompileMemory {
  llvm::DenseMap<const clang::FunctionDecl *, const clang::Stmt *> bodies;
  llvm::DenseMap<const clang::VarDecl *, const clang::Expr *> inits;
};

CompileResult compile_regions(const CompileRequest &req, CompileMemory &mem);

} // namespace kiln::plugin
