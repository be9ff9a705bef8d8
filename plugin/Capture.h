// plugin/Capture.h - from the body of a [[kiln::compile]] function to a
// dataflow graph (the TorchDynamo part, for straight-line code).
#pragma once

#include <kiln/passes/codegen.h>
#include <kiln/passes/ir.h>

#include <clang/AST/Type.h>
#include <clang/Basic/SourceLocation.h>

#include <string>
#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
class ParmVarDecl;
class Stmt;
} // namespace clang

namespace kiln::plugin {

struct Capture {
  bool ok = false;
  // On failure: where and why the function cannot be compiled ("call to
  // 'foo' is not supported yet").
  clang::SourceLocation fail_loc;
  std::string fail_reason;
  bool silent = false; // failed on code clang already reported an error in

  ir::Graph graph;
  std::vector<codegen::ArgKind> args;            // per graph argument
  std::vector<const clang::ParmVarDecl *> params; // per graph argument
  // A stable text of the graph without source locations, for hashing.
  std::string fingerprint;
};

// Captures `body` (the function's own body, or the original body kept in a
// rewritten one) of `fd`.
Capture capture_function(clang::ASTContext &ctx, const clang::FunctionDecl *fd,
                         const clang::Stmt *body);

// The source location of `loc` as the graph records it.
ir::Loc to_ir_loc(const clang::ASTContext &ctx, clang::SourceLocation loc);

// Is `t` (after references and sugar) the class kiln::Tensor?
bool is_kiln_tensor(clang::QualType t);

} // namespace kiln::plugin
