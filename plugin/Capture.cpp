// Capture of statements: declarations, assignments, returns, branches and
// loops, executed symbolically on the region's State.
//
// A loop runs as many times as its compile-time trip count says (it is
// unrolled into the graph); a branch on a compile-time condition takes its
// arm; a branch on a host scalar that the region's start can evaluate asks
// the planner for a decision (one specialisation per value). Everything
// else stops the statement with a location and a reason.
#include "CaptureImpl.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>

#include <functional>

using namespace clang;

namespace kiln::plugin::capture {


// Inside an inlined call the failure is reported where the compiled
// function makes the call, which is the statement that stays eager.
bool Capturer::fail(SourceLocation loc, std::string reason) {
  if (!failure.any()) {
    failure.loc = loc;
    failure.reason = std::move(reason);
    if (frames_.size() > 1 && frames_[1].call.isValid()) {
      const SourceManager &sm = ctx_.getSourceManager();
      failure.reason += " (in " + quoted(frames_.back().fn) + ", line " +
                        std::to_string(sm.getPresumedLineNumber(
                            sm.getExpansionLoc(loc))) +
                        ")";
      failure.loc = frames_[1].call;
    }
  }
  return false;
}

std::nullopt_t Capturer::silent_fail() {
  if (!failure.any())
    failure.silent = true;
  return std::nullopt;
}

std::string Capturer::quoted(const NamedDecl *d) const {
  return "'" + d->getQualifiedNameAsString() + "'";
}

bool Capturer::run(const Stmt *s) {
  frames_.clear();
  Frame root;
  root.fn = fd_;
  if (const auto *md = dyn_cast<CXXMethodDecl>(fd_); md && md->isInstance())
    root.has_this = true;
  frames_.push_back(root);
  failure = Failure();
  Flow flow = Flow::Normal;
  if (!exec(s, flow))
    return false;
  if (flow == Flow::Break || flow == Flow::Continue)
    return fail(s->getBeginLoc(), "'break' or 'continue' out of the compiled "
                                  "region is not supported yet");
  if (st.num_ops > kMaxOps)
    return fail(s->getBeginLoc(),
                "the region grows past " + std::to_string(kMaxOps) + " ops");
  return true;
}

static const char *stmt_description(const Stmt *s) {
  switch (s->getStmtClass()) {
  case Stmt::SwitchStmtClass:
    return "'switch' statement";

  case Stmt::GotoStmtClass:
  case Stmt::IndirectGotoStmtClass:
    return "'goto'";
  case Stmt::LabelStmtClass:
    return "label";
  case Stmt::GCCAsmStmtClass:
  case Stmt::MSAsmStmtClass:
    return "inline assembly";
  case Stmt::CoreturnStmtClass:
    return "'co_return'";
  default:
    return nullptr;
  }
}

bool Capturer::exec(const Stmt *s, Flow &flow) {
  switch (s->getStmtClass()) {
  case Stmt::NullStmtClass:
    return true;
  case Stmt::CompoundStmtClass:
    for (const Stmt *sub : cast<CompoundStmt>(s)->body()) {
      if (!exec(sub, flow))
        return false;
      if (flow != Flow::Normal)
        return true;
    }
    return true;
  case Stmt::AttributedStmtClass:
    return exec(cast<AttributedStmt>(s)->getSubStmt(), flow);
  case Stmt::DeclStmtClass:
    for (const Decl *d : cast<DeclStmt>(s)->decls())
      if (!decl(d))
        return false;
    return true;
  case Stmt::ReturnStmtClass:
    return exec_return(cast<ReturnStmt>(s), flow);
  case Stmt::IfStmtClass:
    return exec_if(cast<IfStmt>(s), flow);
  case Stmt::ForStmtClass: {
    const auto *f = cast<ForStmt>(s);
    if (f->getConditionVariable())
      return fail(f->getForLoc(), "a 'for' condition that declares a "
                                  "variable is not supported yet");
    return exec_loop(s, f->getInit(), f->getCond(), f->getInc(), f->getBody(),
                     false, flow);
  }
  case Stmt::WhileStmtClass: {
    const auto *w = cast<WhileStmt>(s);
    if (w->getConditionVariable())
      return fail(w->getWhileLoc(), "a 'while' condition that declares a "
                                    "variable is not supported yet");
    return exec_loop(s, nullptr, w->getCond(), nullptr, w->getBody(), false,
                     flow);
  }
  case Stmt::DoStmtClass: {
    const auto *d = cast<DoStmt>(s);
    return exec_loop(s, nullptr, d->getCond(), nullptr, d->getBody(), true,
                     flow);
  }
  case Stmt::BreakStmtClass:
  case Stmt::ContinueStmtClass:
    if (frames_.back().loop_depth == 0)
      return fail(s->getBeginLoc(),
                  std::string("'") +
                      (isa<BreakStmt>(s) ? "break" : "continue") +
                      "' leaves a loop that runs eagerly");
    flow = isa<BreakStmt>(s) ? Flow::Break : Flow::Continue;
    return true;
  case Stmt::CXXThrowExprClass:
    return fail(s->getBeginLoc(), "'throw' runs eagerly");
  case Stmt::CXXTryStmtClass:
    return fail(s->getBeginLoc(), "a 'try' block is not captured: it runs "
                                  "eagerly and its statements are compiled "
                                  "on their own");
  case Stmt::CXXForRangeStmtClass:
    return exec_range_for(cast<CXXForRangeStmt>(s), flow);
  default:
    break;
  }
  if (const auto *e = dyn_cast<Expr>(s))
    return expr_stmt(e);
  if (const char *what = stmt_description(s))
    return fail(s->getBeginLoc(), std::string(what) + " is not supported yet");
  return fail(s->getBeginLoc(), std::string("statement (") +
                                    s->getStmtClassName() +
                                    ") is not supported yet");
}

bool Capturer::exec_return(const ReturnStmt *s, Flow &flow) {
  const Expr *v = s->getRetValue();
  if (frames_.size() > 1) {
    // Evaluating may inline calls (frames_ grows): the frame is looked up
    // after.
    std::optional<Value> r;
    if (v && !v->getType()->isVoidType()) {
      if (!(r = eval(v)))
        return false;
    } else if (v) {
      if (!eval(v))
        return false;
    }
    Frame &fr = frames_.back();
    fr.ret.clear();
    if (r)
      fr.ret.push_back(std::move(*r));
    fr.returned = true;
    flow = Flow::Return;
    return true;
  }
  switch (fn_ret_) {
  case ReturnKind::None: {
    QualType rt = fd_->getReturnType();
    return fail(s->getReturnLoc(),
                "returning '" + rt.getAsString(ctx_.getPrintingPolicy()) +
                    "' is not supported yet (a compiled region returns "
                    "tensors, pairs, tuples or aggregates of tensors)");
  }
  case ReturnKind::Void:
    if (v && !eval(v))
      return false;
    break;
  case ReturnKind::Value: {
    if (!v)
      return fail(s->getReturnLoc(), "'return' without a value");
    std::vector<Value> elems;
    if (fn_ret_arity_ == 1 && is_kiln_tensor(fd_->getReturnType())) {
      std::optional<Value> t = tensor(v);
      if (!t)
        return false;
      elems.push_back(*t);
    } else {
      std::optional<Value> t = tuple(v, fn_ret_arity_);
      if (!t)
        return false;
      elems = t->elems;
    }
    st.ret_values = std::move(elems);
    break;
  }
  }
  st.ret = fn_ret_;
  st.returned = true;
  flow = Flow::Return;
  return true;
}

bool Capturer::exec_if(const IfStmt *s, Flow &flow) {
  if (s->isConsteval())
    return fail(s->getIfLoc(), "'if consteval' is not supported yet");
  if (s->getInit() || s->getConditionVariable())
    return fail(s->getIfLoc(), "an 'if' with an initialiser or a condition "
                               "variable is not supported yet");
  std::optional<bool> taken;
  if (s->isConstexpr()) {
    // Checked by clang: a constant expression.
    Expr::EvalResult r;
    if (!s->getCond()->EvaluateAsRValue(r, ctx_) || !r.Val.isInt())
      return fail(s->getIfLoc(), "'if constexpr' condition could not be "
                                 "evaluated");
    taken = r.Val.getInt().getBoolValue();
  } else {
    taken = condition(s->getCond(), s->getCond()->getExprLoc());
    if (!taken)
      return false;
    // A decided bool variable is known in the arm it selects.
    const Expr *c = s->getCond()->IgnoreParenImpCasts();
    bool negate = false;
    if (const auto *u = dyn_cast<UnaryOperator>(c);
        u && u->getOpcode() == UO_LNot) {
      negate = true;
      c = u->getSubExpr()->IgnoreParenImpCasts();
    }
    if (const auto *dre = dyn_cast<DeclRefExpr>(c))
      if (dre->getType()->isBooleanType())
        if (std::optional<SlotId> id = var_slot(dre->getDecl(), c->getExprLoc())) {
          Value v;
          v.kind = Value::Scalar;
          v.type = dre->getType();
          v.known = APValue(llvm::APSInt(llvm::APInt(1, *taken != negate), true));
          st.values[*id] = v;
        }
  }
  const Stmt *arm = *taken ? s->getThen() : s->getElse();
  if (!arm)
    return true;
  Frame &fr = frames_.back();
  ++fr.branch_depth;
  bool ok = exec(arm, flow);
  --frames_.back().branch_depth;
  return ok;
}

bool Capturer::exec_loop(const Stmt *s, const Stmt *init, const Expr *cond,
                         const Expr *inc, const Stmt *body, bool do_while,
                         Flow &flow) {
  ++frames_.back().loop_depth;
  auto done = [&](bool ok) {
    --frames_.back().loop_depth;
    return ok;
  };
  if (init) {
    Flow f = Flow::Normal;
    if (!exec(init, f))
      return done(false);
  }
  for (int iter = 0;; ++iter) {
    if (cond && (!do_while || iter > 0)) {
      if (cond->containsErrors())
        return done(((void)silent_fail(), false));
      std::optional<APValue> k = fold_effects(cond);
      if (!k || !k->isInt()) {
        if (failed())
          return done(false);
        return done(fail(cond->getExprLoc(),
                         "the loop's trip count is not a compile-time "
                         "constant: the loop runs eagerly, its body compiled "
                         "on its own"));
      }
      if (!k->getInt().getBoolValue())
        break;
    } else if (!cond && !do_while && iter >= kMaxIterations) {
      return done(fail(s->getBeginLoc(), "a loop without a condition is not "
                                         "unrolled"));
    }
    if (iter >= kMaxIterations)
      return done(fail(s->getBeginLoc(),
                       "the loop runs more than " +
                           std::to_string(kMaxIterations) +
                           " times, too many to unroll"));
    if (st.num_ops > kMaxOps)
      return done(fail(s->getBeginLoc(), "unrolling the loop makes more than " +
                                             std::to_string(kMaxOps) + " ops"));
    Flow f = Flow::Normal;
    if (!exec(body, f))
      return done(false);
    if (f == Flow::Return) {
      flow = Flow::Return;
      return done(true);
    }
    if (f == Flow::Break)
      break;
    if (inc && !expr_stmt(inc))
      return done(false);
  }
  return done(true);
}

bool Capturer::decl(const Decl *d) {
  if (const auto *vd = dyn_cast<VarDecl>(d))
    return var_decl(vd);
  if (isa<StaticAssertDecl, TypedefNameDecl, UsingDecl, UsingDirectiveDecl,
          UsingShadowDecl, NamespaceAliasDecl, UsingEnumDecl, TagDecl>(d))
    return true;
  return fail(d->getLocation(), std::string("declaration of a ") +
                                    d->getDeclKindName() +
                                    " is not supported yet");
}

bool Capturer::var_decl(const VarDecl *vd) {
  if (vd->isInvalidDecl())
    return (void)silent_fail(), false;
  if (!vd->hasLocalStorage())
    return fail(vd->getLocation(),
                "static local " + quoted(vd) + " is not supported yet");
  const Expr *init = vd->getInit();
  if (const auto *dd = dyn_cast<DecompositionDecl>(vd)) {
    if (!init)
      return fail(vd->getLocation(), "structured binding without a value");
    std::optional<Value> v = eval(init);
    if (!v)
      return false;
    if (v->kind != Value::Tuple || v->elems.size() != dd->bindings().size())
      return fail(vd->getLocation(), "structured bindings of this value are "
                                     "not supported yet");
    for (auto [i, b] : llvm::enumerate(dd->bindings()))
      st.names[b] = v->elems[i];
    return true;
  }
  if (init && env_.original_inits) {
    auto it = env_.original_inits->find(vd);
    if (it != env_.original_inits->end())
      init = it->second;
  }
  const bool of_fn = dyn_cast<FunctionDecl>(vd->getDeclContext()) == fd_;
  if (of_fn)
    st.declared.insert(vd);
  QualType t = vd->getType();
  if (t->isReferenceType() && init) {
    // A reference to a variable or member names that slot; a reference
    // bound to a temporary holds a value like a local.
    const Expr *x = init;
    if (const auto *ewc = dyn_cast<ExprWithCleanups>(x))
      x = ewc->getSubExpr();
    x = strip_noop(x, false, true);
    // A reference to an element of what split() or chunk() returns names
    // that piece: const, a value like a local; a non-const one could
    // rebind the element, which the pieces do not follow.
    const Expr *vec = nullptr, *index = nullptr;
    const bool element = is_kiln_tensor(t) &&
                         tensor_vector_element(skip(x), vec, index);
    if (element && !t.getNonReferenceType().isConstQualified())
      return fail(vd->getLocation(),
                  "a non-const reference to an element of what split() or "
                  "chunk() returns is not supported yet (bind a const "
                  "reference or a Tensor)");
    if (x->isGLValue() && !isa<MaterializeTemporaryExpr>(x) && !element &&
        (is_kiln_tensor(t) || scalar_kind(t))) {
      std::optional<SlotId> id = lvalue_slot(x);
      if (!id)
        return false;
      st.aliases[vd] = *id;
      return true;
    }
    if (x->isGLValue() && !isa<MaterializeTemporaryExpr>(x) &&
        is_tensor_vector(t))
      // The reference would see later push_backs to the vector; a copy of
      // its value would not.
      return fail(vd->getLocation(), "a reference to a std::vector of "
                                     "tensors is not supported yet (use the "
                                     "vector itself, or a copy)");
    if (x->isGLValue() && !isa<MaterializeTemporaryExpr>(x)) {
      // A reference to a closure or tuple names its value.
      std::optional<Value> v = eval(x);
      if (!v)
        return false;
      st.names[vd] = *v;
      return true;
    }
  }
  if (is_kiln_tensor(t)) {
    if (!init)
      return fail(vd->getLocation(), "tensor " + quoted(vd) +
                                         " declared without a value is not "
                                         "supported yet");
    if (undefined_tensor_expr(init)) {
      // `Tensor out;`, `Tensor out = Tensor();`: undefined until assigned.
      Value u;
      u.kind = Value::Undefined;
      write(intern({vd, {}}, t.getNonReferenceType()), u, true);
      return true;
    }
    std::optional<Value> v = tensor(init);
    if (!v)
      return false;
    ir::Node &n = st.b.graph().nodes[v->node];
    if (n.name.empty() && n.op != ir::Op::Input)
      n.name = vd->getName().str();
    write(intern({vd, {}}, t.getNonReferenceType()), *v, true);
    return true;
  }
  if (scalar_kind(t)) {
    if (!init)
      return fail(vd->getLocation(), "scalar " + quoted(vd) +
                                         " declared without a value is not "
                                         "supported yet");
    std::optional<Value> v = scalar(init);
    if (!v)
      return false;
    SlotId id = intern({vd, {}}, t.getNonReferenceType());
    const Frame &fr = frames_.back();
    bool top = frames_.size() == 1 && fr.loop_depth == 0;
    write(id, *v, top);
    if (top && of_fn)
      st.replays.push_back({id, Replay{vd, init, nullptr}});
    return true;
  }
  if (is_tensor_vector(t) && !t->isReferenceType()) {
    std::optional<Value> v = list_init(vd, init);
    if (!v)
      return false;
    st.names[vd] = *v;
    return true;
  }
  const auto *rd = t.getNonReferenceType()->getAsCXXRecordDecl();
  if ((rd && rd->isLambda()) || tensor_tuple_arity(t.getNonReferenceType()) ||
      is_tensor_vector(t)) {
    if (!init)
      return fail(vd->getLocation(), "local " + quoted(vd) +
                                         " declared without a value");
    std::optional<Value> v = eval(init);
    if (!v)
      return false;
    st.names[vd] = *v;
    return true;
  }
  return fail(vd->getLocation(),
              "local " + quoted(vd) + " of type '" +
                  t.getAsString(ctx_.getPrintingPolicy()) +
                  "' is not supported yet");
}

bool Capturer::expr_stmt(const Expr *e) {
  if (e->containsErrors())
    return (void)silent_fail(), false;
  const Expr *s = e;
  if (const auto *x = dyn_cast<ExprWithCleanups>(s))
    s = x->getSubExpr();
  s = s->IgnoreParens();
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s);
      mc && is_tensor_vector(mc->getImplicitObjectArgument()->getType()))
    return list_method(mc);
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s);
      mc && mc->getNumArgs() == 1 && mc->getMethodDecl() &&
      mc->getMethodDecl()->getIdentifier() &&
      mc->getMethodDecl()->getName() == "copy_" &&
      is_kiln_tensor(mc->getImplicitObjectArgument()->getType()))
    return store_copy(mc);
  if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(s);
      oc && oc->getOperator() == OO_Equal && oc->getNumArgs() == 2 &&
      is_tensor_vector(oc->getArg(0)->getType()))
    return list_set(oc->getArg(0), oc->getArg(1));
  if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(s);
      oc && oc->getNumArgs() == 2 && is_kiln_tensor(oc->getArg(0)->getType())) {
    const Expr *vec = nullptr, *index = nullptr;
    if (oc->getOperator() == OO_Equal &&
        tensor_vector_element(skip(oc->getArg(0)), vec, index))
      return list_assign(vec, index, oc->getArg(1));
    if (oc->getOperator() == OO_Equal)
      return assign_tensor(oc->getArg(0), oc->getArg(1), oc->getOperatorLoc());
    switch (oc->getOperator()) {
    case OO_PlusEqual:
    case OO_MinusEqual:
    case OO_StarEqual:
    case OO_SlashEqual:
      return inplace(oc);
    default:
      break;
    }
  }
  if (const auto *bo = dyn_cast<BinaryOperator>(s);
      bo && bo->isAssignmentOp() && scalar_kind(bo->getLHS()->getType()))
    return scalar_update(s);
  if (const auto *uo = dyn_cast<UnaryOperator>(s);
      uo && uo->isIncrementDecrementOp())
    return scalar_update(s);
  if (isa<CXXThrowExpr>(s))
    return fail(s->getExprLoc(), "'throw' runs eagerly");
  if (const auto *ce = dyn_cast<CStyleCastExpr>(s);
      ce && ce->getType()->isVoidType())
    return eval(ce->getSubExpr()).has_value();
  if (isa<CallExpr>(s) || is_kiln_tensor(s->getType()))
    return eval(s).has_value();
  if (isa<DeclRefExpr, IntegerLiteral, FloatingLiteral, CXXBoolLiteralExpr>(s))
    return true; // no effect
  return fail(s->getExprLoc(), std::string("expression statement (") +
                                   s->getStmtClassName() +
                                   ") is not supported yet");
}

bool Capturer::scalar_update(const Expr *e) {
  const Expr *lhs = nullptr;
  if (const auto *bo = dyn_cast<BinaryOperator>(e))
    lhs = bo->getLHS();
  else
    lhs = cast<UnaryOperator>(e)->getSubExpr();
  if (!scalar_kind(lhs->getType()))
    return fail(e->getExprLoc(), "update of a non-arithmetic value is not "
                                 "supported yet");
  std::optional<SlotId> id = lvalue_slot(lhs);
  if (!id)
    return false;
  std::optional<Value> v = scalar_assign(e);
  if (!v)
    return false;
  const Frame &fr = frames_.back();
  bool replayable = frames_.size() == 1 && fr.loop_depth == 0;
  write(*id, *v, replayable);
  if (replayable && slots_[*id].of_function)
    st.replays.push_back({*id, Replay{nullptr, nullptr, e}});
  return true;
}

} // namespace kiln::plugin::capture
