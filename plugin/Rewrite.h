// plugin/Rewrite.h - the AST rewrite of a compiled function, through Sema:
//
//   { kiln::Tensor __kiln_out0;
//     if (<fast path>(<args>..., &__kiln_out0)) return __kiln_out0;
//     <original body> }
//
// The fast path is declared at TU scope with an asm label of its symbol;
// its definition comes from the generated host code.
#pragma once

#include <kiln/passes/codegen.h>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>

namespace clang {
class FunctionDecl;
class ParmVarDecl;
class Sema;
class Stmt;
} // namespace clang

namespace kiln::plugin {

// Rewrites the body of `fd`. `params` are the user's parameters passed to
// the fast path, one per graph argument, of kinds `kinds`. Returns "" or
// why it failed (the body is then unchanged).
std::string rewrite_body(clang::Sema &sema, clang::FunctionDecl *fd,
                         llvm::StringRef symbol,
                         llvm::ArrayRef<const clang::ParmVarDecl *> params,
                         llvm::ArrayRef<codegen::ArgKind> kinds);

// A body this plugin rewrote already (e.g. read from a PCH built with the
// plugin): its fast-path symbol and original body. Null `original` if not.
struct RewrittenBody {
  std::string symbol;
  const clang::Stmt *original = nullptr;
};
RewrittenBody find_rewritten(const clang::FunctionDecl *fd);

} // namespace kiln::plugin
