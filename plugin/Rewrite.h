// plugin/Rewrite.h - the AST rewrite of a compiled function, through Sema.
//
// Each compiled region of the plan is replaced by a call of its fast path
// (one per specialisation, chosen by the branch conditions it assumed),
// with the region's original statements kept as the fallback:
//
//   <locals declared in the region and used after it, hoisted>
//   { kiln::Tensor __kiln_o1_0;
//     if (<fast path>(<inputs>..., &__kiln_o1_0)) {
//       y = static_cast<kiln::Tensor &&>(__kiln_o1_0);   // outputs
//     } else {
//       <the region's statements>
//     } }
//
// A function that is one region returning its result keeps the short form
//
//   { kiln::Tensor __kiln_out0;
//     if (<fast path>(<args>..., &__kiln_out0)) return __kiln_out0;
//     <original body> }
//
// Fast paths are declared at TU scope with an asm label of their symbol;
// their definitions come from the generated host code.
#pragma once

#include "Capture.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringRef.h>

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

// What a rewrite changed that later captures must see through: the
// original initialisers of hoisted locals.
struct RewriteRecord {
  llvm::DenseMap<const clang::VarDecl *, const clang::Expr *> original_inits;
};

// Rewrites the body of `fd` per `plan`. `symbols[r][s]` is the fast-path
// symbol of specialisation s of region r ("" for a specialisation with
// nothing to compute); a region with no symbols stays as written. Returns
// "" or why it failed (the body is then unchanged).
std::string rewrite_function(clang::Sema &sema, clang::FunctionDecl *fd,
                             const FunctionPlan &plan,
                             const std::vector<std::vector<std::string>> &symbols,
                             RewriteRecord &record);

// The assumptions of a region's fast path that only the rewritten caller
// can check (codegen::FunctionSpec::caller_checks), in the order it passes
// them.
std::vector<codegen::CallerCheck> caller_checks(const RegionSpec &spec);

// A rewritten function carries this annotation, followed by what is needed
// to generate its fast paths again (a PCH holds rewritten bodies).
inline constexpr llvm::StringLiteral kRewrittenPrefix = "kiln.rewritten;";
bool is_rewritten(const clang::FunctionDecl *fd);
// The text after the prefix, or "" when `fd` is not rewritten.
std::string rewritten_payload(const clang::FunctionDecl *fd);
void mark_rewritten(clang::ASTContext &ctx, clang::FunctionDecl *fd,
                    llvm::StringRef payload);

} // namespace kiln::plugin
