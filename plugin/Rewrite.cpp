#include "Rewrite.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/ASTLambda.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Sema/Initialization.h>
#include <clang/Sema/Sema.h>

#include <functional>

using namespace clang;

namespace kiln::plugin {

bool is_rewritten(const FunctionDecl *fd) {
  for (const auto *a : fd->specific_attrs<AnnotateAttr>())
    if (a->getAnnotation().starts_with(kRewrittenPrefix))
      return true;
  return false;
}

std::string rewritten_payload(const FunctionDecl *fd) {
  for (const auto *a : fd->specific_attrs<AnnotateAttr>())
    if (a->getAnnotation().starts_with(kRewrittenPrefix))
      return a->getAnnotation().drop_front(kRewrittenPrefix.size()).str();
  return "";
}

void mark_rewritten(ASTContext &ctx, FunctionDecl *fd, llvm::StringRef payload) {
  fd->addAttr(AnnotateAttr::CreateImplicit(
      ctx, (kRewrittenPrefix + payload).str(), nullptr, 0));
}

// One per pair of the spec, in the order leaf() passes their flags to
// codegen::caller_checks_symbol(symbol).
std::vector<codegen::CallerCheck> caller_checks(const RegionSpec &spec) {
  std::vector<codegen::CallerCheck> checks;
  for (const auto &[a, b] : spec.distinct_objects)
    checks.push_back({"'" + a.name() + "' and '" + b.name() +
                          "' are different objects",
                      "'" + a.name() + "' and '" + b.name() + "' are one object"});
  for (const auto &[a, b] : spec.distinct_storage)
    checks.push_back(
        {"'" + a.name() + "', updated in place, shares no storage with '" +
             b.name() + "'",
         "'" + a.name() + "' is updated in place and shares storage with '" +
             b.name() + "'"});
  return checks;
}

namespace {

QualType find_kiln_tensor(ASTContext &ctx) {
  for (NamedDecl *nd :
       ctx.getTranslationUnitDecl()->lookup(&ctx.Idents.get("kiln")))
    if (auto *ns = dyn_cast<NamespaceDecl>(nd))
      for (NamedDecl *t : ns->getPrimaryContext()->lookup(&ctx.Idents.get("Tensor")))
        if (auto *rd = dyn_cast<CXXRecordDecl>(t); rd && rd->hasDefinition())
          return ctx.getRecordType(rd->getDefinition());
  return {};
}

QualType arg_type(ASTContext &ctx, codegen::ArgKind k, QualType tensor) {
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

// `bool <symbol>(<types>...)` at TU scope, hidden from name lookup, named
// by its asm label; its definition is in the generated host code.
FunctionDecl *declare_generated(ASTContext &ctx, llvm::StringRef symbol,
                                llvm::ArrayRef<QualType> types,
                                SourceLocation loc) {
  TranslationUnitDecl *tu = ctx.getTranslationUnitDecl();
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

// The fast path: `bool <symbol>(<inputs>..., kiln::Tensor *<outputs>...)`.
FunctionDecl *declare_fast_path(ASTContext &ctx, llvm::StringRef symbol,
                                const RegionSpec &spec, QualType tensor,
                                SourceLocation loc) {
  llvm::SmallVector<QualType, 8> types;
  for (const RegionInput &in : spec.inputs)
    types.push_back(arg_type(ctx, in.kind, tensor));
  for (size_t i = 0; i < spec.graph.outputs.size(); ++i)
    types.push_back(ctx.getPointerType(tensor));
  return declare_generated(ctx, symbol, types, loc);
}

// Sema chose the named return value of the function as written: a local
// every `return` names is built in the caller's return slot. The rewritten
// body returns other values too (a fast path's results), and a return of
// another value into that slot overwrites the local without destroying it,
// then the local's cleanup destroys what was returned: a use-after-free.
// Every local gets its own storage; a return of it moves (one Tensor move).
void drop_nrvo(Stmt *s) {
  if (!s || isa<LambdaExpr, BlockExpr>(s))
    return;
  if (auto *ds = dyn_cast<DeclStmt>(s))
    for (Decl *d : ds->decls())
      if (auto *vd = dyn_cast<VarDecl>(d); vd && vd->isNRVOVariable())
        vd->setNRVOVariable(false);
  for (Stmt *c : s->children())
    drop_nrvo(c);
}

struct Failed {
  std::string why;
};

class Rewriter {
public:
  Rewriter(Sema &sema, FunctionDecl *fd, const FunctionPlan &plan,
           const std::vector<std::vector<std::string>> &symbols,
           RewriteRecord &record)
      : sema_(sema), ctx_(sema.getASTContext()), fd_(fd), plan_(plan),
        symbols_(symbols), record_(record) {}

  std::string run();

private:
  // --- Building blocks; each throws Failed when Sema refuses.
  template <class T> T *check(ActionResult<T *> r, const char *what) {
    if (r.isInvalid() || !r.get())
      throw Failed{std::string("cannot build ") + what};
    return r.get();
  }
  DeclRefExpr *ref(const VarDecl *vd) {
    auto *v = const_cast<VarDecl *>(vd);
    if (const LambdaCapture *c = lambda_capture(fd_, vd)) {
      // A compiled lambda's capture: Sema would look for a lambda scope,
      // gone by now. A copy is const unless the lambda is mutable.
      QualType t = v->getType().getNonReferenceType();
      if (c->getCaptureKind() == LCK_ByCopy &&
          !v->getType()->isReferenceType() &&
          cast<CXXMethodDecl>(fd_)->isConst())
        t.addConst();
      return DeclRefExpr::Create(ctx_, NestedNameSpecifierLoc(),
                                 SourceLocation(), v,
                                 /*RefersToEnclosingVariableOrCapture=*/true,
                                 loc_, t, VK_LValue);
    }
    return sema_.BuildDeclRefExpr(v, v->getType().getNonReferenceType(),
                                  VK_LValue, loc_);
  }
  Expr *slot_expr(const Slot &s);
  Expr *assign(Expr *lhs, Expr *rhs, bool cleanups = false);
  Expr *move(Expr *e) {
    return ImplicitCastExpr::Create(ctx_, e->getType(), CK_NoOp, e, nullptr,
                                    VK_XValue, FPOptionsOverride());
  }
  Expr *method(Expr *object, llvm::StringRef name, llvm::ArrayRef<Expr *> args);
  Expr *addr(Expr *e) {
    return check(sema_.CreateBuiltinUnaryOp(loc_, UO_AddrOf, e), "'&'");
  }
  Expr *binop(BinaryOperatorKind op, Expr *a, Expr *b) {
    return check(sema_.BuildBinOp(nullptr, loc_, op, a, b), "an operator");
  }
  VarDecl *local(llvm::StringRef name, QualType t, Expr *init = nullptr);
  DeclStmt *decl_stmt(VarDecl *vd) {
    return new (ctx_) DeclStmt(DeclGroupRef(vd), loc_, loc_);
  }
  CompoundStmt *block(llvm::ArrayRef<Stmt *> stmts) {
    return CompoundStmt::Create(ctx_, stmts, FPOptionsOverride(), loc_, loc_);
  }
  Stmt *if_stmt(Expr *cond, Stmt *then, Stmt *els = nullptr) {
    Sema::ConditionResult c =
        sema_.ActOnCondition(nullptr, loc_, cond, Sema::ConditionKind::Boolean);
    if (c.isInvalid())
      throw Failed{"cannot build a condition"};
    return IfStmt::Create(ctx_, loc_, IfStatementKind::Ordinary, nullptr,
                          nullptr, c.get().second, loc_, loc_, then,
                          els ? loc_ : SourceLocation(), els);
  }
  Stmt *ret(Expr *e) {
    if (!isLambdaCallOperator(fd_))
      return check(sema_.BuildReturnStmt(loc_, e), "a return");
    // Sema builds a return against the function the lambda is in (its
    // lambda scope is gone): initialise the operator's result here.
    QualType rt = fd_->getReturnType();
    if (e && !rt->isVoidType()) {
      Sema::NamedReturnInfo nr = sema_.getNamedReturnInfo(e);
      e = check(sema_.PerformMoveOrCopyInitialization(
                    InitializedEntity::InitializeResult(loc_, rt), nr, e),
                "a return");
      e = check(sema_.ActOnFinishFullExpr(e, loc_, /*DiscardedValue=*/false),
                "a return");
    }
    return ReturnStmt::Create(ctx_, loc_, e, nullptr);
  }
  // Changes a local's declaration, remembering how to undo it.
  void save(VarDecl *vd) {
    undo_.push_back([vd, init = vd->getInit(), t = vd->getType(),
                     tsi = vd->getTypeSourceInfo(), style = vd->getInitStyle()] {
      vd->setInit(init);
      vd->setType(t);
      vd->setTypeSourceInfo(tsi);
      vd->setInitStyle(style);
    });
  }

  // --- Statements.
  Stmt *stmt(Stmt *s);
  Stmt *sub(Stmt *s);
  bool list(llvm::ArrayRef<Stmt *> in, llvm::SmallVectorImpl<Stmt *> &out);
  void region(const Region &r, llvm::ArrayRef<Stmt *> stmts,
              llvm::SmallVectorImpl<Stmt *> &out);
  Stmt *leaf(const Region &r, size_t s, VarDecl *ok, Stmt *els = nullptr);
  Stmt *tree(const Region &r, llvm::ArrayRef<size_t> specs, size_t depth,
             VarDecl *ok);

  Sema &sema_;
  ASTContext &ctx_;
  FunctionDecl *fd_;
  const FunctionPlan &plan_;
  const std::vector<std::vector<std::string>> &symbols_;
  RewriteRecord &record_;
  QualType tensor_;
  SourceLocation loc_;
  llvm::DenseMap<const Stmt *, size_t> region_at_; // first stmt -> region
  std::vector<std::function<void()>> undo_;
  llvm::DenseMap<const VarDecl *, const Expr *> inits_; // before hoisting
  llvm::DenseMap<const VarDecl *, VarDecl *> temps_;    // TempRef -> holder
  bool whole_ = false; // the short form
  int counter_ = 0;
};

Expr *Rewriter::slot_expr(const Slot &s) {
  Expr *base;
  bool arrow = false;
  if (s.var) {
    base = ref(s.var);
  } else {
    // `this` in a lambda is the object of the method it was written in
    // (captured; CodeGen reads it from the closure).
    const DeclContext *dc = fd_;
    while (isLambdaCallOperator(dc))
      dc = cast<CXXMethodDecl>(dc)->getParent()->getDeclContext();
    QualType this_type;
    if (const auto *md = dyn_cast<CXXMethodDecl>(dc))
      this_type = md->getThisType();
    else if (const auto *rd = dyn_cast<CXXRecordDecl>(dc)) // a member initialiser
      this_type = ctx_.getPointerType(ctx_.getRecordType(rd));
    else
      throw Failed{"cannot name 'this'"};
    base = sema_.BuildCXXThisExpr(loc_, this_type, /*IsImplicit=*/true);
    arrow = true;
  }
  for (const FieldDecl *f : s.fields) {
    auto *field = const_cast<FieldDecl *>(f);
    CXXScopeSpec ss;
    base = check(sema_.BuildFieldReferenceExpr(
                     base, arrow, loc_, ss, field,
                     DeclAccessPair::make(field, field->getAccess()),
                     DeclarationNameInfo(field->getDeclName(), loc_)),
                 "a member access");
    arrow = false;
  }
  return base;
}

Expr *Rewriter::assign(Expr *lhs, Expr *rhs, bool cleanups) {
  Expr *e = binop(BO_Assign, lhs, rhs);
  ExprResult full = sema_.ActOnFinishFullExpr(e, loc_, /*DiscardedValue=*/false);
  if (full.isInvalid())
    throw Failed{"cannot build an assignment"};
  e = full.get();
  if (cleanups && !isa<ExprWithCleanups>(e))
    e = ExprWithCleanups::Create(ctx_, e, /*CleanupsHaveSideEffects=*/true, {});
  return e;
}

Expr *Rewriter::method(Expr *object, llvm::StringRef name,
                       llvm::ArrayRef<Expr *> args) {
  CXXScopeSpec ss;
  Expr *callee = check(
      sema_.BuildMemberReferenceExpr(
          object, object->getType(), loc_, /*IsArrow=*/false, ss,
          SourceLocation(), nullptr,
          DeclarationNameInfo(&ctx_.Idents.get(name), loc_), nullptr, nullptr),
      "a member call");
  llvm::SmallVector<Expr *, 2> a(args.begin(), args.end());
  Expr *call = check(sema_.BuildCallExpr(nullptr, callee, loc_, a, loc_),
                     "a member call");
  ExprResult full = sema_.ActOnFinishFullExpr(call, loc_, false);
  if (full.isInvalid())
    throw Failed{"cannot build a member call"};
  return full.get();
}

VarDecl *Rewriter::local(llvm::StringRef name, QualType t, Expr *init) {
  auto *vd = VarDecl::Create(ctx_, fd_, loc_, loc_, &ctx_.Idents.get(name), t,
                             ctx_.getTrivialTypeSourceInfo(t, loc_), SC_None);
  if (init)
    sema_.AddInitializerToDecl(vd, init, /*DirectInit=*/false);
  else
    sema_.ActOnUninitializedDecl(vd);
  if (vd->isInvalidDecl())
    throw Failed{"cannot declare " + name.str()};
  return vd;
}

// The original initialiser of a local as an assignment's right-hand side:
// cleanups and the copy into the variable taken off.
static Expr *init_value(Expr *init, bool &cleanups, bool temporary) {
  cleanups = false;
  if (auto *ewc = dyn_cast<ExprWithCleanups>(init)) {
    init = ewc->getSubExpr();
    cleanups = true;
  }
  if (temporary)
    if (auto *mte = dyn_cast<MaterializeTemporaryExpr>(init->IgnoreImplicit()))
      init = mte->getSubExpr();
  if (auto *ce = dyn_cast<CXXConstructExpr>(init);
      ce && ce->getNumArgs() == 1 &&
      ce->getConstructor()->isCopyOrMoveConstructor())
    init = ce->getArg(0);
  return init;
}

// One specialisation: its fast path, and what the rewritten code does with
// the results when it ran.
Stmt *Rewriter::leaf(const Region &r, size_t si, VarDecl *ok, Stmt *els) {
  const RegionSpec &spec = r.specs[si];
  if (spec.eager) // this specialisation runs the original statements
    return block({});
  const std::string &symbol = symbols_[r.index - 1][si];
  llvm::SmallVector<Stmt *, 8> body, success;
  llvm::SmallVector<VarDecl *, 4> outs;
  if (!symbol.empty()) {
    for (size_t k = 0; k < spec.graph.outputs.size(); ++k) {
      std::string name = whole_ ? "__kiln_out" + std::to_string(k)
                                : "__kiln_o" + std::to_string(r.index) + "_" +
                                      std::to_string(k);
      // A result copied into a tensor starts as that tensor: the fast path
      // may write into it (codegen::FunctionSpec::into), and the copy of a
      // tensor onto itself does nothing.
      const RegionOutput &o = spec.outputs[k];
      outs.push_back(local(name, tensor_,
                           o.kind == RegionOutput::CopyInto ? slot_expr(o.slot)
                                                            : nullptr));
      body.push_back(decl_stmt(outs.back()));
    }
  }
  llvm::SmallVector<Expr *, 4> returned;
  for (size_t k = 0; k < spec.outputs.size() && !symbol.empty(); ++k) {
    const RegionOutput &o = spec.outputs[k];
    if (o.kind == RegionOutput::Effect)
      continue; // the argument was written in place
    Expr *value = o.use_from ? slot_expr(o.from)
                  : o.clone  ? method(ref(outs[k]), "clone", {})
                             : move(ref(outs[k]));
    if (o.contiguous)
      value = method(value, "contiguous", {});
    if (o.kind == RegionOutput::Return) {
      returned.push_back(value);
      continue;
    }
    if (o.kind == RegionOutput::ListElem) {
      // A vector the region built: emptied, then its tensors in order.
      Expr *vec = slot_expr(o.slot);
      if (k == 0 || spec.outputs[k - 1].kind != RegionOutput::ListElem ||
          !(spec.outputs[k - 1].slot == o.slot))
        success.push_back(method(vec, "clear", {}));
      success.push_back(method(slot_expr(o.slot), "push_back", {value}));
      continue;
    }
    if (o.kind == RegionOutput::CopyInto) {
      // Into a `const Tensor &` argument through a handle of it (handles
      // share elements; a region updates one through a copy of it).
      Expr *into = slot_expr(o.slot);
      if (into->getType().isConstQualified()) {
        VarDecl *h = local("__kiln_h" + std::to_string(++counter_), tensor_,
                           into);
        success.push_back(decl_stmt(h));
        into = ref(h);
      }
      success.push_back(method(into, "copy_", {ref(outs[k])}));
      continue;
    }
    // A reference to a temporary, hoisted, binds to a holder: set that.
    auto holder = o.slot.fields.empty() && o.slot.var
                      ? temps_.find(o.slot.var)
                      : temps_.end();
    success.push_back(assign(holder != temps_.end() ? ref(holder->second)
                                                    : slot_expr(o.slot),
                             value));
  }
  for (const Replay &rp : spec.replays) {
    if (rp.var)
      success.push_back(assign(ref(rp.var), const_cast<Expr *>(rp.value)));
    else
      success.push_back(const_cast<Expr *>(rp.stmt));
  }
  if (spec.ret == ReturnKind::Value) {
    if (returned.size() == 1 && is_kiln_tensor(fd_->getReturnType())) {
      const RegionOutput &o = spec.outputs.back();
      success.push_back(ret(o.use_from || o.clone || o.contiguous
                                ? returned[0]
                                : ref(outs.back())));
    } else {
      Expr *il = check(sema_.ActOnInitList(loc_, returned, loc_), "a return");
      success.push_back(ret(il));
    }
  } else if (spec.ret == ReturnKind::Void) {
    success.push_back(ret(nullptr));
  } else if (ok) {
    success.push_back(assign(ref(ok), CXXBoolLiteralExpr::Create(
                                          ctx_, true, ctx_.BoolTy, loc_)));
  }
  if (symbol.empty()) { // nothing to compute in this specialisation
    body.append(success.begin(), success.end());
    return block(body);
  }
  // Guards the fast path cannot check itself (it does not see every slot),
  // then the call: <symbol>_aliased(held...) counts and logs the first
  // that fails, as the fast path's own guards do.
  Expr *cond = nullptr;
  auto conj = [&](Expr *e) { cond = cond ? binop(BO_LAnd, cond, e) : e; };
  llvm::SmallVector<Expr *, 4> distinct;
  for (const auto &[a, b] : spec.distinct_objects)
    distinct.push_back(binop(BO_NE, addr(slot_expr(a)), addr(slot_expr(b))));
  for (const auto &[a, b] : spec.distinct_storage)
    distinct.push_back(binop(BO_NE, method(slot_expr(a), "storage", {}),
                             method(slot_expr(b), "storage", {})));
  if (!distinct.empty()) {
    llvm::SmallVector<QualType, 4> bools(distinct.size(), ctx_.BoolTy);
    FunctionDecl *aliased =
        declare_generated(ctx_, codegen::caller_checks_symbol(symbol), bools, loc_);
    Expr *callee = sema_.BuildDeclRefExpr(aliased, aliased->getType(),
                                          VK_LValue, loc_);
    conj(check(sema_.BuildCallExpr(nullptr, callee, loc_, distinct, loc_),
               "the call of the aliasing check"));
  }
  FunctionDecl *fast = declare_fast_path(ctx_, symbol, spec, tensor_, loc_);
  llvm::SmallVector<Expr *, 8> args;
  for (const RegionInput &in : spec.inputs)
    args.push_back(in.expr ? const_cast<Expr *>(in.expr) : slot_expr(in.slot));
  for (VarDecl *o : outs)
    args.push_back(addr(ref(o)));
  Expr *callee = sema_.BuildDeclRefExpr(fast, fast->getType(), VK_LValue, loc_);
  conj(check(sema_.BuildCallExpr(nullptr, callee, loc_, args, loc_),
             "the call of the fast path"));
  if (whole_) {
    // The short form: `if (fast(...)) return __kiln_out0;`.
    body.push_back(if_stmt(cond, success.size() == 1 ? success[0] : block(success)));
    return block(body);
  }
  body.push_back(if_stmt(cond, block(success), els));
  return block(body);
}

// Dispatch on the decisions the specialisations made, in the order they
// were made.
Stmt *Rewriter::tree(const Region &r, llvm::ArrayRef<size_t> specs,
                     size_t depth, VarDecl *ok) {
  if (specs.size() == 1 && r.specs[specs[0]].decisions.size() == depth)
    return leaf(r, specs[0], ok);
  const Decision &d = r.specs[specs[0]].decisions[depth];
  llvm::SmallVector<size_t, 8> yes, no;
  for (size_t s : specs)
    (r.specs[s].decisions[depth].value ? yes : no).push_back(s);
  Stmt *then = yes.empty() ? static_cast<Stmt *>(block({})) : tree(r, yes, depth + 1, ok);
  Stmt *els = no.empty() ? nullptr : tree(r, no, depth + 1, ok);
  // The condition is re-evaluated here, at the region's start, where the
  // planner checked that it reads what it will read in the region.
  return IfStmt::Create(ctx_, loc_, IfStatementKind::Ordinary, nullptr, nullptr,
                        const_cast<Expr *>(d.cond), loc_, loc_, then,
                        els ? loc_ : SourceLocation(), els);
}

void Rewriter::region(const Region &r, llvm::ArrayRef<Stmt *> stmts,
                      llvm::SmallVectorImpl<Stmt *> &out) {
  loc_ = stmts.front()->getBeginLoc();
  // Locals the region declares and later code uses, declared before it.
  llvm::DenseMap<const VarDecl *, Hoist::Kind> hoisted;
  for (const Hoist &h : r.hoists) {
    auto *vd = const_cast<VarDecl *>(h.var);
    hoisted[vd] = h.kind;
    inits_[vd] = vd->getInit();
    switch (h.kind) {
    case Hoist::Value: {
      save(vd);
      QualType t = vd->getType();
      if (t.isConstQualified() || t->getContainedAutoType()) {
        // A const local is assigned now; `auto` is spelled out, as a
        // declaration without initialiser needs.
        QualType nt = t.getCanonicalType().getUnqualifiedType();
        vd->setType(nt);
        vd->setTypeSourceInfo(ctx_.getTrivialTypeSourceInfo(nt, vd->getLocation()));
      }
      vd->setInit(nullptr);
      vd->setInitStyle(VarDecl::CInit);
      if (is_kiln_tensor(t) || capture::is_tensor_vector(t)) {
        sema_.ActOnUninitializedDecl(vd);
        if (vd->isInvalidDecl() || !vd->getInit())
          throw Failed{"cannot default-construct '" + vd->getNameAsString() + "'"};
      }
      out.push_back(decl_stmt(vd));
      break;
    }
    case Hoist::Whole:
      out.push_back(decl_stmt(vd));
      break;
    case Hoist::TempRef: {
      VarDecl *holder = local("__kiln_t" + std::to_string(++counter_), tensor_);
      temps_[vd] = holder;
      out.push_back(decl_stmt(holder));
      save(vd);
      vd->setInit(nullptr);
      vd->setInitStyle(VarDecl::CInit);
      sema_.AddInitializerToDecl(vd, ref(holder), /*DirectInit=*/false);
      if (vd->isInvalidDecl())
        throw Failed{"cannot rebind '" + vd->getNameAsString() + "'"};
      out.push_back(decl_stmt(vd));
      break;
    }
    }
  }
  // The fallback: the statements as written, hoisted declarations turned
  // into assignments.
  llvm::SmallVector<Stmt *, 16> fallback;
  for (Stmt *s : stmts) {
    auto *ds = dyn_cast<DeclStmt>(s);
    if (!ds || llvm::none_of(ds->decls(), [&](Decl *d) {
          return isa<VarDecl>(d) && hoisted.count(cast<VarDecl>(d));
        })) {
      fallback.push_back(s);
      continue;
    }
    for (Decl *d : ds->decls()) {
      auto *vd = dyn_cast<VarDecl>(d);
      auto it = vd ? hoisted.find(vd) : hoisted.end();
      if (it == hoisted.end()) {
        fallback.push_back(new (ctx_) DeclStmt(DeclGroupRef(d), loc_, loc_));
        continue;
      }
      Expr *init = const_cast<Expr *>(inits_[vd]);
      if (it->second == Hoist::Whole || !init)
        continue;
      // A vector declared empty is empty already.
      if (const auto *ce = dyn_cast<CXXConstructExpr>(init->IgnoreImplicit());
          ce && ce->getNumArgs() == 0 && capture::is_tensor_vector(vd->getType()))
        continue;
      bool cleanups = false;
      bool temp = it->second == Hoist::TempRef;
      Expr *value = init_value(init, cleanups, temp);
      VarDecl *target = temp ? temps_[vd] : vd;
      fallback.push_back(assign(ref(target), value, cleanups));
      record_.original_inits[vd] = init;
    }
  }
  if (whole_) {
    // The short form keeps the original body as the fallback.
    out.push_back(leaf(r, 0, nullptr));
    return;
  }
  Stmt *fb = block(fallback);
  if (r.specs.size() == 1 && r.specs[0].decisions.empty()) {
    // `{ outs; if (fast(...)) { results } else { fallback } }`
    out.push_back(leaf(r, 0, nullptr, fb));
    return;
  }
  llvm::SmallVector<Stmt *, 4> inner;
  // `{ bool ok = false; <dispatch>; if (!ok) { fallback } }`
  VarDecl *ok = local("__kiln_ok" + std::to_string(r.index), ctx_.BoolTy,
                      CXXBoolLiteralExpr::Create(ctx_, false, ctx_.BoolTy, loc_));
  inner.push_back(decl_stmt(ok));
  llvm::SmallVector<size_t, 8> all;
  for (size_t s = 0; s < r.specs.size(); ++s)
    all.push_back(s);
  inner.push_back(tree(r, all, 0, ok));
  Expr *not_ok = check(sema_.CreateBuiltinUnaryOp(loc_, UO_LNot, ref(ok)), "'!'");
  inner.push_back(if_stmt(not_ok, fb));
  out.push_back(block(inner));
}

bool Rewriter::list(llvm::ArrayRef<Stmt *> in, llvm::SmallVectorImpl<Stmt *> &out) {
  bool changed = false;
  for (size_t i = 0; i < in.size(); ++i) {
    auto it = region_at_.find(in[i]);
    if (it != region_at_.end()) {
      const Region &r = plan_.regions[it->second];
      size_t n = r.stmts.size();
      if (i + n <= in.size() &&
          std::equal(r.stmts.begin(), r.stmts.end(), in.begin() + i)) {
        region(r, in.slice(i, n), out);
        i += n - 1;
        changed = true;
        continue;
      }
    }
    Stmt *s = stmt(in[i]);
    changed |= s != in[i];
    out.push_back(s);
  }
  return changed;
}

// A body of a kept compound statement: a compound, or one statement.
Stmt *Rewriter::sub(Stmt *s) {
  if (!s)
    return s;
  if (isa<CompoundStmt>(s))
    return stmt(s);
  llvm::SmallVector<Stmt *, 4> out;
  if (!list({s}, out))
    return s;
  if (out.size() == 1)
    return out[0];
  loc_ = s->getBeginLoc();
  return block(out);
}

Stmt *Rewriter::stmt(Stmt *s) {
  if (auto *c = dyn_cast<CompoundStmt>(s)) {
    llvm::SmallVector<Stmt *, 16> out;
    if (!list(llvm::ArrayRef(c->body_begin(), c->body_end()), out))
      return s;
    return CompoundStmt::Create(ctx_, out,
                                c->hasStoredFPFeatures() ? c->getStoredFPFeatures()
                                                         : FPOptionsOverride(),
                                c->getLBracLoc(), c->getRBracLoc());
  }
  if (auto *i = dyn_cast<IfStmt>(s)) {
    if (i->isConstexpr() || i->isConsteval())
      return s;
    Stmt *then = sub(i->getThen()), *els = sub(i->getElse());
    if (then == i->getThen() && els == i->getElse())
      return s;
    return IfStmt::Create(ctx_, i->getIfLoc(), i->getStatementKind(),
                          i->getInit(), i->getConditionVariable(), i->getCond(),
                          i->getLParenLoc(), i->getRParenLoc(), then,
                          i->getElseLoc(), els);
  }
  if (auto *f = dyn_cast<ForStmt>(s)) {
    Stmt *body = sub(f->getBody());
    if (body == f->getBody())
      return s;
    return new (ctx_) ForStmt(ctx_, f->getInit(), f->getCond(),
                              f->getConditionVariable(), f->getInc(), body,
                              f->getForLoc(), f->getLParenLoc(),
                              f->getRParenLoc());
  }
  if (auto *w = dyn_cast<WhileStmt>(s)) {
    Stmt *body = sub(w->getBody());
    if (body == w->getBody())
      return s;
    return WhileStmt::Create(ctx_, w->getConditionVariable(), w->getCond(), body,
                             w->getWhileLoc(), w->getLParenLoc(),
                             w->getRParenLoc());
  }
  if (auto *d = dyn_cast<DoStmt>(s)) {
    Stmt *body = sub(d->getBody());
    if (body == d->getBody())
      return s;
    return new (ctx_) DoStmt(body, d->getCond(), d->getDoLoc(),
                             d->getWhileLoc(), d->getRParenLoc());
  }
  if (auto *r = dyn_cast<CXXForRangeStmt>(s)) {
    Stmt *body = sub(r->getBody());
    if (body == r->getBody())
      return s;
    return new (ctx_) CXXForRangeStmt(
        r->getInit(), r->getRangeStmt(), r->getBeginStmt(), r->getEndStmt(),
        r->getCond(), r->getInc(), r->getLoopVarStmt(), body, r->getForLoc(),
        r->getCoawaitLoc(), r->getColonLoc(), r->getRParenLoc());
  }
  if (auto *t = dyn_cast<CXXTryStmt>(s)) {
    Stmt *tb = stmt(t->getTryBlock());
    bool changed = tb != t->getTryBlock();
    llvm::SmallVector<Stmt *, 4> handlers;
    for (unsigned h = 0; h < t->getNumHandlers(); ++h) {
      CXXCatchStmt *c = t->getHandler(h);
      Stmt *hb = stmt(c->getHandlerBlock());
      if (hb != c->getHandlerBlock()) {
        changed = true;
        handlers.push_back(new (ctx_) CXXCatchStmt(
            c->getCatchLoc(), c->getExceptionDecl(), hb));
      } else {
        handlers.push_back(c);
      }
    }
    if (!changed)
      return s;
    return CXXTryStmt::Create(ctx_, t->getTryLoc(), cast<CompoundStmt>(tb),
                              handlers);
  }
  if (auto *a = dyn_cast<AttributedStmt>(s)) {
    Stmt *inner = stmt(a->getSubStmt());
    if (inner == a->getSubStmt())
      return s;
    return AttributedStmt::Create(ctx_, a->getAttrLoc(), a->getAttrs(), inner);
  }
  return s;
}

std::string Rewriter::run() {
  auto *body = dyn_cast_or_null<CompoundStmt>(fd_->getBody());
  if (!body)
    return "the function has no body";
  tensor_ = find_kiln_tensor(ctx_);
  if (tensor_.isNull())
    return "kiln::Tensor is not declared";
  for (const Region &r : plan_.regions)
    if (!symbols_[r.index - 1].empty())
      region_at_[r.stmts.front()] = size_t(r.index - 1);

  // Errors while building are Kiln bugs: trap them (silently, as in a
  // SFINAE context) so that the function stays as written rather than
  // half-rewritten.
  DiagnosticErrorTrap trap(sema_.getDiagnostics());
  Sema::SynthesizedFunctionScope scope(sema_, fd_);
  Sema::SFINAETrap sfinae(sema_, /*AccessCheckingSFINAE=*/false);
  try {
    Stmt *result = nullptr;
    const Region *first = region_at_.empty() ? nullptr
                                             : &plan_.regions[region_at_.begin()->second];
    if (plan_.regions.size() >= 1 && region_at_.size() == 1 && first &&
        first->whole_body && first->stmts.front() == *body->body_begin()) {
      whole_ = true;
      llvm::SmallVector<Stmt *, 4> out;
      region(*first,
             llvm::ArrayRef(body->body_begin(), body->body_end())
                 .take_front(first->stmts.size()),
             out);
      auto *leaf_block = cast<CompoundStmt>(out.back());
      llvm::SmallVector<Stmt *, 4> flat(leaf_block->body_begin(),
                                        leaf_block->body_end());
      flat.push_back(body);
      result = CompoundStmt::Create(ctx_, flat, FPOptionsOverride(),
                                    body->getLBracLoc(), body->getRBracLoc());
    } else {
      result = stmt(body);
    }
    if (trap.hasErrorOccurred() || sfinae.hasErrorOccurred())
      throw Failed{"Sema rejected the rewritten body"};
    fd_->setBody(result);
    drop_nrvo(result);
  } catch (const Failed &f) {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
      (*it)();
    record_.original_inits.clear();
    return f.why;
  }
  return "";
}

} // namespace

std::string rewrite_function(Sema &sema, FunctionDecl *fd,
                             const FunctionPlan &plan,
                             const std::vector<std::vector<std::string>> &symbols,
                             RewriteRecord &record) {
  Rewriter r(sema, fd, plan, symbols, record);
  return r.run();
}

} // namespace kiln::plugin
