// [[kiln::compile]] and [[kiln::compile("opt", ...)]].
//
// Clang 19 drops the arguments of a scoped plugin attribute unless the bare
// spelling is registered too (it asks "is 'compile' an attribute?" before
// parsing the arguments), so both spellings are registered and the bare
// one is rejected here.
#include "Diag.h"
#include "Options.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/Sema/ParsedAttr.h>
#include <clang/Sema/Sema.h>

#include <atomic>

using namespace clang;

namespace kiln::plugin {
namespace {

std::atomic<bool> lambda_seen{false};

struct CompileAttrInfo : public ParsedAttrInfo {
  CompileAttrInfo() {
    OptArgs = 15;
    static constexpr Spelling S[] = {{ParsedAttr::AS_CXX11, "kiln::compile"},
                                     {ParsedAttr::AS_CXX11, "compile"}};
    Spellings = S;
  }

  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &attr,
                            const Decl *d) const override {
    if (isa<FunctionDecl>(d))
      return true;
    if (attr.getScopeName())
      Diag(S.getDiagnostics())
          .error(attr.getLoc(),
                 "'kiln::compile' attribute only applies to functions");
    else
      reject_bare(S, attr);
    return false;
  }

  bool diagAppertainsToStmt(Sema &S, const ParsedAttr &attr,
                            const Stmt *) const override {
    if (attr.getScopeName())
      Diag(S.getDiagnostics())
          .error(attr.getLoc(),
                 "'kiln::compile' attribute only applies to functions");
    else
      reject_bare(S, attr);
    return false;
  }

  AttrHandling handleDeclAttribute(Sema &S, Decl *d,
                                   const ParsedAttr &attr) const override {
    Diag diag(S.getDiagnostics());
    if (!attr.getScopeName() || attr.getScopeName()->getName() != "kiln") {
      reject_bare(S, attr);
      return AttributeNotApplied;
    }
    CompileOptions opts;
    std::string encoded(kAnnotationPrefix);
    bool ok = true;
    for (unsigned i = 0, n = attr.getNumArgs(); i < n; ++i) {
      if (!attr.isArgExpr(i)) {
        diag.error(attr.getLoc(), "kiln::compile options are string "
                                  "literals, e.g. [[kiln::compile(\"fullgraph\")]]");
        ok = false;
        continue;
      }
      Expr *e = attr.getArgAsExpr(i);
      const auto *lit = dyn_cast<StringLiteral>(e->IgnoreParenImpCasts());
      if (!lit || !lit->isOrdinary()) {
        diag.error(e->getBeginLoc(),
                   "kiln::compile options are string literals, e.g. "
                   "[[kiln::compile(\"fullgraph\")]]");
        ok = false;
        continue;
      }
      std::string err = parse_compile_option(lit->getString(), opts);
      if (!err.empty()) {
        diag.error(e->getBeginLoc(), err);
        ok = false;
        continue;
      }
      encoded += lit->getString().str() + ";";
    }
    if (!ok)
      return AttributeNotApplied;
    d->addAttr(AnnotateAttr::Create(S.Context, encoded, nullptr, 0,
                                    attr.getRange()));
    if (const auto *md = dyn_cast<CXXMethodDecl>(d); md && md->getParent()->isLambda())
      lambda_seen.store(true, std::memory_order_relaxed);
    return AttributeApplied;
  }

private:
  static void reject_bare(Sema &S, const ParsedAttr &attr) {
    Diag(S.getDiagnostics())
        .error(attr.getLoc(), "unknown attribute '" +
                                  attr.getNormalizedFullName() +
                                  "'; did you mean 'kiln::compile'?");
  }
};

} // namespace

bool annotated_lambda_seen() {
  return lambda_seen.load(std::memory_order_relaxed);
}

} // namespace kiln::plugin

static ParsedAttrInfoRegistry::Add<kiln::plugin::CompileAttrInfo>
    X("kiln-compile", "[[kiln::compile]]: compile a tensor function with Kiln");
