#include "Rewrite.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>
#include <clang/Sema/Sema.h>

using namespace clang;

namespace kiln::plugin {

static constexpr llvm::StringLiteral kOutName = "__kiln_out0";

static QualType arg_type(ASTContext &ctx, codegen::ArgKind k,
                         QualType tensor) {
  switch (k) {
  case codegen::ArgKind::Tensor:
    return ctx.getLValueReferenceType(tensor.withConst());
  case codegen::ArgKind::Double:
    return ctx.DoubleTy;
  case codegen::ArgKind::Int64:
    return ctx.getIntTypeForBitwidth(64, /*Signed=*/true);
  case codegen::ArgKind::Bool:
    return ctx.BoolTy;
  }
  return {};
}

// `bool <symbol>(<args>..., kiln::Tensor *)` at TU scope, hidden from name
// lookup, named by its asm label. One declaration per symbol and TU.
static FunctionDecl *declare_fast_path(ASTContext &ctx, llvm::StringRef symbol,
                                       llvm::ArrayRef<codegen::ArgKind> kinds,
                                       QualType tensor, SourceLocation loc) {
  TranslationUnitDecl *tu = ctx.getTranslationUnitDecl();
  llvm::SmallVector<QualType, 8> types;
  for (codegen::ArgKind k : kinds)
    types.push_back(arg_type(ctx, k, tensor));
  types.push_back(ctx.getPointerType(tensor));
  FunctionProtoType::ExtProtoInfo epi;
  QualType fn_type = ctx.getFunctionType(ctx.BoolTy, types, epi);
  auto *fd = FunctionDecl::Create(
      ctx, tu, loc, loc, DeclarationName(&ctx.Idents.get(symbol)), fn_type,
      ctx.getTrivialTypeSourceInfo(fn_type, loc), SC_Extern);
  llvm::SmallVector<ParmVarDecl *, 8> parms;
  for (QualType t : types) {
    auto *p = ParmVarDecl::Create(ctx, fd, loc, loc, nullptr, t,
                                  ctx.getTrivialTypeSourceInfo(t, loc),
                                  SC_None, nullptr);
    p->setScopeInfo(0, parms.size());
    parms.push_back(p);
  }
  fd->setParams(parms);
  fd->addAttr(AsmLabelAttr::CreateImplicit(ctx, symbol, /*IsLiteralLabel=*/true));
  fd->setImplicit();
  tu->addHiddenDecl(fd);
  return fd;
}

std::string rewrite_body(Sema &sema, FunctionDecl *fd, llvm::StringRef symbol,
                         llvm::ArrayRef<const ParmVarDecl *> params,
                         llvm::ArrayRef<codegen::ArgKind> kinds) {
  ASTContext &ctx = sema.getASTContext();
  Stmt *body = fd->getBody();
  if (!body)
    return "the function has no body";
  QualType tensor = fd->getReturnType().getCanonicalType().getUnqualifiedType();
  SourceLocation loc = body->getBeginLoc();
  SourceLocation end = body->getEndLoc();

  // Errors while building are Kiln bugs: trap them so that the function
  // stays as written rather than half-rewritten.
  DiagnosticErrorTrap trap(sema.getDiagnostics());
  Sema::SynthesizedFunctionScope scope(sema, fd);

  FunctionDecl *fast = declare_fast_path(ctx, symbol, kinds, tensor, loc);

  auto *out = VarDecl::Create(ctx, fd, loc, loc, &ctx.Idents.get(kOutName),
                              tensor, ctx.getTrivialTypeSourceInfo(tensor, loc),
                              SC_None);
  sema.ActOnUninitializedDecl(out);
  if (out->isInvalidDecl())
    return "cannot default-construct kiln::Tensor";
  StmtResult decl_stmt =
      sema.ActOnDeclStmt(sema.ConvertDeclToDeclGroup(out), loc, loc);

  llvm::SmallVector<Expr *, 8> args;
  for (const ParmVarDecl *p : params) {
    auto *pv = const_cast<ParmVarDecl *>(p);
    args.push_back(sema.BuildDeclRefExpr(pv, pv->getType().getNonReferenceType(),
                                         VK_LValue, loc));
  }
  ExprResult out_ref = sema.BuildDeclRefExpr(out, tensor, VK_LValue, loc);
  ExprResult out_addr =
      sema.CreateBuiltinUnaryOp(loc, UO_AddrOf, out_ref.get());
  if (out_addr.isInvalid())
    return "cannot take the address of the output";
  args.push_back(out_addr.get());
  ExprResult callee =
      sema.BuildDeclRefExpr(fast, fast->getType(), VK_LValue, loc);
  ExprResult call = sema.BuildCallExpr(nullptr, callee.get(), loc, args, loc);
  if (call.isInvalid())
    return "cannot build the call of the fast path";
  Sema::ConditionResult cond =
      sema.ActOnCondition(nullptr, loc, call.get(), Sema::ConditionKind::Boolean);
  if (cond.isInvalid())
    return "cannot build the condition";
  StmtResult ret = sema.BuildReturnStmt(
      loc, sema.BuildDeclRefExpr(out, tensor, VK_LValue, loc));
  if (ret.isInvalid())
    return "cannot build the return of the output";
  StmtResult if_stmt =
      sema.ActOnIfStmt(loc, IfStatementKind::Ordinary, loc, nullptr, cond, loc,
                       ret.get(), SourceLocation(), nullptr);
  if (decl_stmt.isInvalid() || if_stmt.isInvalid() || trap.hasErrorOccurred())
    return "Sema rejected the rewritten body";

  Stmt *stmts[] = {decl_stmt.get(), if_stmt.get(), body};
  fd->setBody(CompoundStmt::Create(ctx, stmts, FPOptionsOverride(), loc, end));
  return "";
}

RewrittenBody find_rewritten(const FunctionDecl *fd) {
  RewrittenBody r;
  const auto *cs = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!cs || cs->size() != 3)
    return r;
  auto it = cs->body_begin();
  const auto *ds = dyn_cast<DeclStmt>(*it++);
  const auto *is = dyn_cast<IfStmt>(*it++);
  if (!ds || !ds->isSingleDecl() || !is)
    return r;
  const auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl());
  if (!vd || !vd->getIdentifier() || vd->getName() != kOutName)
    return r;
  const auto *call = dyn_cast<CallExpr>(is->getCond()->IgnoreImplicit());
  const FunctionDecl *fast = call ? call->getDirectCallee() : nullptr;
  const auto *label = fast ? fast->getAttr<AsmLabelAttr>() : nullptr;
  if (!label)
    return r;
  r.symbol = label->getLabel().str();
  r.original = *it;
  return r;
}

} // namespace kiln::plugin
