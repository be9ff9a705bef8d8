// [[kiln::compile]], [[kiln::compile("opt", ...)]] and [[kiln::dtype(...)]].
//
// Clang 19 drops the arguments of a scoped plugin attribute unless the bare
// spelling is registered too (it asks "is 'compile' an attribute?" before
// parsing the arguments), so both spellings are registered and the bare
// one is rejected here.
#include "Diag.h"
#include "Options.h"

#include <kiln/passes/ir.h>

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

// What both of Kiln's attributes share: the scoped and the bare spelling
// (the bare one rejected), and an error where the attribute does not
// appertain.
struct KilnAttrInfo : public ParsedAttrInfo {
  const char *name;    // "kiln::compile"
  const char *applies; // "functions"

  KilnAttrInfo(const char *name, const char *applies, const Spelling *s)
      : name(name), applies(applies) {
    Spellings = llvm::ArrayRef<Spelling>(s, 2);
  }

  virtual bool appertains(const Decl *d) const = 0;

  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &attr,
                            const Decl *d) const override {
    if (attr.getScopeName() && appertains(d))
      return true;
    misplaced(S, attr);
    return false;
  }

  bool diagAppertainsToStmt(Sema &S, const ParsedAttr &attr,
                            const Stmt *) const override {
    misplaced(S, attr);
    return false;
  }

  // False (after the error) for the bare spelling or another scope.
  bool scoped(Sema &S, const ParsedAttr &attr) const {
    if (attr.getScopeName() && attr.getScopeName()->getName() == "kiln")
      return true;
    reject_bare(S, attr);
    return false;
  }

private:
  void misplaced(Sema &S, const ParsedAttr &attr) const {
    if (!attr.getScopeName())
      return reject_bare(S, attr);
    Diag(S.getDiagnostics())
        .error(attr.getLoc(), "'" + std::string(name) +
                                  "' attribute only applies to " + applies);
  }
  void reject_bare(Sema &S, const ParsedAttr &attr) const {
    Diag(S.getDiagnostics())
        .error(attr.getLoc(), "unknown attribute '" +
                                  attr.getNormalizedFullName() +
                                  "'; did you mean '" + name + "'?");
  }
};

constexpr ParsedAttrInfo::Spelling kCompileSpellings[] = {
    {ParsedAttr::AS_CXX11, "kiln::compile"}, {ParsedAttr::AS_CXX11, "compile"}};
constexpr ParsedAttrInfo::Spelling kDtypeSpellings[] = {
    {ParsedAttr::AS_CXX11, "kiln::dtype"}, {ParsedAttr::AS_CXX11, "dtype"}};

struct CompileAttrInfo : public KilnAttrInfo {
  CompileAttrInfo()
      : KilnAttrInfo("kiln::compile", "functions", kCompileSpellings) {
    OptArgs = 15;
  }

  bool appertains(const Decl *d) const override { return isa<FunctionDecl>(d); }

  AttrHandling handleDeclAttribute(Sema &S, Decl *d,
                                   const ParsedAttr &attr) const override {
    Diag diag(S.getDiagnostics());
    if (!scoped(S, attr))
      return AttributeNotApplied;
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
};

// [[kiln::dtype("i64")]], [[kiln::dtype("f32", "bf16")]] on a tensor
// parameter of a compiled function: the dtypes it is compiled for,
// whatever the other arguments' (codegen::FunctionSpec::arg_dtypes).
struct DtypeAttrInfo : public KilnAttrInfo {
  DtypeAttrInfo()
      : KilnAttrInfo("kiln::dtype",
                     "parameters (a kiln::Tensor argument's dtypes)",
                     kDtypeSpellings) {
    OptArgs = 7;
  }

  bool appertains(const Decl *d) const override { return isa<ParmVarDecl>(d); }

  AttrHandling handleDeclAttribute(Sema &S, Decl *d,
                                   const ParsedAttr &attr) const override {
    Diag diag(S.getDiagnostics());
    if (!scoped(S, attr))
      return AttributeNotApplied;
    static const char *kUsage =
        "kiln::dtype takes the dtypes a tensor parameter is compiled for, "
        "as string literals: [[kiln::dtype(\"i64\")]], "
        "[[kiln::dtype(\"f32\", \"bf16\")]] "
        "(f32, f16, bf16, f64, i32, i64, b8)";
    if (attr.getNumArgs() == 0) {
      diag.error(attr.getLoc(), kUsage);
      return AttributeNotApplied;
    }
    std::string encoded(kDtypePrefix);
    bool ok = true;
    for (unsigned i = 0, n = attr.getNumArgs(); i < n; ++i) {
      const Expr *arg = attr.isArgExpr(i) ? attr.getArgAsExpr(i) : nullptr;
      const auto *lit =
          arg ? dyn_cast<StringLiteral>(arg->IgnoreParenImpCasts()) : nullptr;
      SourceLocation at = arg ? arg->getBeginLoc() : attr.getLoc();
      if (!lit || !lit->isOrdinary()) {
        diag.error(at, kUsage);
        ok = false;
        continue;
      }
      llvm::SmallVector<llvm::StringRef, 4> names;
      lit->getString().split(names, ',');
      for (llvm::StringRef name : names) {
        if (!ir::dtype_from_name(name.trim())) {
          diag.error(at, "unknown dtype '" + name.trim().str() +
                             "' in kiln::dtype (expected f32, f16, bf16, "
                             "f64, i32, i64 or b8)");
          ok = false;
          continue;
        }
        encoded += name.trim().str() + ",";
      }
    }
    if (!ok)
      return AttributeNotApplied;
    d->addAttr(AnnotateAttr::Create(S.Context, encoded, nullptr, 0,
                                    attr.getRange()));
    return AttributeApplied;
  }
};

} // namespace

bool annotated_lambda_seen() {
  return lambda_seen.load(std::memory_order_relaxed);
}

} // namespace kiln::plugin

static ParsedAttrInfoRegistry::Add<kiln::plugin::CompileAttrInfo>
    X("kiln-compile", "[[kiln::compile]]: compile a tensor function with Kiln");
static ParsedAttrInfoRegistry::Add<kiln::plugin::DtypeAttrInfo>
    Y("kiln-dtype", "[[kiln::dtype(...)]]: the dtypes of a tensor parameter");
