// plugin/CaptureImpl.h - the capture's walker, shared by Capture.cpp
// (statements, tensors, op calls) and CaptureScalar.cpp (scalars).
#pragma once

#include "Capture.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include <llvm/ADT/DenseMap.h>

#include <optional>

namespace kiln::plugin::capture {

using namespace clang;

// The argument kind of a scalar parameter type (float/double: Double,
// integers: Int64, bool: Bool), or nullopt.
std::optional<codegen::ArgKind> scalar_kind(QualType t);
// The weak-scalar dtype of a C++ arithmetic type, as kiln::Operand sees it.
DType scalar_dtype(QualType t);

class Capturer {
public:
  Capturer(ASTContext &ctx, const FunctionDecl *fd, Capture &out)
      : ctx_(ctx), fd_(fd), out_(out), b_(fd->getNameAsString()) {}

  bool run(const Stmt *body);

private:
  struct ScalarVal {
    ir::NodeId id;
    DType dtype;
  };

  bool fail(SourceLocation loc, std::string reason) {
    if (out_.fail_reason.empty() && !out_.silent) {
      out_.fail_loc = loc;
      out_.fail_reason = std::move(reason);
    }
    return false;
  }
  // Code clang already reported an error in: no second diagnostic.
  std::nullopt_t silent_fail() {
    if (out_.fail_reason.empty())
      out_.silent = true;
    return std::nullopt;
  }
  ir::Loc loc(SourceLocation l) const { return to_ir_loc(ctx_, l); }
  std::string quoted(const NamedDecl *d) const {
    return "'" + d->getQualifiedNameAsString() + "'";
  }

  bool stmt(const Stmt *s, bool &returned);
  bool decl(const Decl *d);
  bool expr_stmt(const Expr *e);
  std::optional<ir::NodeId> tensor(const Expr *e);
  std::optional<ir::NodeId> call(const CallExpr *c);
  std::optional<ir::NodeId> reduction(const CallExpr *c, ir::Op op);
  std::optional<int64_t> constant_int(const Expr *e, const char *what);
  std::optional<ir::NodeId> operand(const Expr *e);
  std::optional<ir::NodeId> scalar(const Expr *e);
  std::optional<ir::NodeId> scalar_arith(const Expr *e, DType want);
  bool failed() const { return !out_.fail_reason.empty() || out_.silent; }
  static const Expr *skip(const Expr *e);

  ASTContext &ctx_;
  const FunctionDecl *fd_;
  Capture &out_;
  ir::GraphBuilder b_;
  llvm::DenseMap<const VarDecl *, ir::NodeId> tensors_;
  llvm::DenseMap<const VarDecl *, ScalarVal> scalars_;
};

} // namespace kiln::plugin::capture
