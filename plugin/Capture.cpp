// Capture: walks straight-line code on kiln::Tensor into an ir::Graph.
//
// Tensor parameters become Input nodes and scalar parameters ScalarInput
// nodes (runtime values, never baked in); compile-time constants become
// Constant nodes; locals are names bound to values; calls of the ops of
// kiln/ops.h become op nodes. The first thing that is not understood stops
// the capture with its location and a reason, and the function stays eager.
#include "CaptureImpl.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <optional>

using namespace clang;

namespace kiln::plugin {

static bool in_kiln_namespace(const Decl *d) {
  const DeclContext *dc = d->getDeclContext();
  while (dc && isa<LinkageSpecDecl>(dc))
    dc = dc->getParent();
  const auto *ns = dyn_cast_or_null<NamespaceDecl>(dc);
  return ns && !ns->isAnonymousNamespace() && ns->getName() == "kiln" &&
         ns->getParent()->getRedeclContext()->isTranslationUnit();
}

static bool is_kiln_class(QualType t, llvm::StringRef name) {
  if (t.isNull())
    return false;
  const auto *rd = t.getNonReferenceType()->getAsCXXRecordDecl();
  return rd && rd->getIdentifier() && rd->getName() == name &&
         in_kiln_namespace(rd);
}

bool is_kiln_tensor(QualType t) { return is_kiln_class(t, "Tensor"); }

ir::Loc to_ir_loc(const ASTContext &ctx, SourceLocation loc) {
  if (loc.isInvalid())
    return {};
  const SourceManager &sm = ctx.getSourceManager();
  PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (p.isInvalid())
    return {};
  return {p.getFilename(), p.getLine(), p.getColumn()};
}

namespace capture {

// std::move(x) and std::forward<T>(x) name the same value.
static bool is_std_move(const CallExpr *c) {
  const FunctionDecl *f = c->getDirectCallee();
  return f && c->getNumArgs() == 1 && f->isInStdNamespace() &&
         f->getIdentifier() &&
         (f->getName() == "move" || f->getName() == "forward");
}

std::optional<codegen::ArgKind> scalar_kind(QualType t) {
  t = t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (t->isBooleanType())
    return codegen::ArgKind::Bool;
  if (t->isRealFloatingType())
    return codegen::ArgKind::Double;
  if (t->isIntegerType() && !t->isEnumeralType())
    return codegen::ArgKind::Int64;
  return std::nullopt;
}

DType scalar_dtype(QualType t) {
  switch (*scalar_kind(t)) {
  case codegen::ArgKind::Bool:
    return DType::b8;
  case codegen::ArgKind::Double:
    return DType::f64;
  default:
    return DType::i64;
  }
}

// The op behind a call of a kiln:: function or operator, by name.
static std::optional<ir::Op> op_for_callee(const FunctionDecl *callee,
                                           unsigned num_args) {
  switch (callee->getOverloadedOperator()) {
  case OO_None:
    break;
  case OO_Plus:
    return num_args == 2 ? std::optional(ir::Op::Add) : std::nullopt;
  case OO_Minus:
    return num_args == 2 ? ir::Op::Sub : ir::Op::Neg;
  case OO_Star:
    return ir::Op::Mul;
  case OO_Slash:
    return ir::Op::Div;
  case OO_Greater:
    return ir::Op::Gt;
  case OO_Less:
    return ir::Op::Lt;
  case OO_GreaterEqual:
    return ir::Op::Ge;
  case OO_LessEqual:
    return ir::Op::Le;
  case OO_EqualEqual:
    return ir::Op::Eq;
  case OO_ExclaimEqual:
    return ir::Op::Ne;
  default:
    return std::nullopt;
  }
  if (!callee->getIdentifier())
    return std::nullopt;
  std::optional<ir::Op> op = ir::op_from_name(callee->getName());
  if (!op || !ir::is_pointwise(*op))
    return std::nullopt;
  return op;
}

// Sees through what does not change the value of a tensor expression:
// parentheses, cleanups, temporaries, no-op casts, copies and moves.
const Expr *Capturer::skip(const Expr *e) {
  while (true) {
    e = e->IgnoreParens();
    if (const auto *x = dyn_cast<ExprWithCleanups>(e))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<MaterializeTemporaryExpr>(e))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<CXXBindTemporaryExpr>(e))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<CastExpr>(e);
             x && (x->getCastKind() == CK_NoOp ||
                   x->getCastKind() == CK_ConstructorConversion ||
                   x->getCastKind() == CK_LValueToRValue) &&
             (isa<ImplicitCastExpr>(x) || isa<CXXFunctionalCastExpr>(x) ||
              isa<CXXStaticCastExpr>(x) || isa<CStyleCastExpr>(x)))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<CXXConstructExpr>(e);
             x && x->getNumArgs() == 1 &&
             x->getConstructor()->isCopyOrMoveConstructor() &&
             is_kiln_tensor(x->getType()))
      e = x->getArg(0);
    else if (const auto *x = dyn_cast<CallExpr>(e); x && is_std_move(x))
      e = x->getArg(0);
    else
      return e;
  }
}

bool Capturer::run(const Stmt *body) {
  if (!is_kiln_tensor(fd_->getReturnType()) ||
      fd_->getReturnType()->isReferenceType())
    return fail(fd_->getLocation(),
                "functions returning '" +
                    fd_->getReturnType().getAsString(ctx_.getPrintingPolicy()) +
                    "' are not supported yet (the result must be a "
                    "kiln::Tensor)");

  int arg = 0;
  for (const ParmVarDecl *p : fd_->parameters()) {
    // An unnamed parameter cannot be used, so it is not an argument.
    if (!p->getIdentifier())
      continue;
    QualType t = p->getType();
    ir::Loc l = loc(p->getLocation());
    std::string name = p->getName().str();
    if (is_kiln_tensor(t)) {
      ir::NodeId id = b_.input(arg, ir::Type::tensor(DType::f32), name, l);
      tensors_[p] = id;
      out_.args.push_back(codegen::ArgKind::Tensor);
    } else if (std::optional<codegen::ArgKind> k = scalar_kind(t)) {
      DType dt = scalar_dtype(t);
      scalars_[p] = {b_.scalar_input(arg, dt, name, l), dt};
      out_.args.push_back(*k);
    } else {
      continue; // referring to it stops the capture
    }
    out_.params.push_back(p);
    ++arg;
  }

  const auto *cs = dyn_cast<CompoundStmt>(body);
  if (!cs)
    return fail(body->getBeginLoc(),
                "a function-try-block is not supported yet");
  bool returned = false;
  if (!stmt(cs, returned))
    return false;
  if (!returned)
    return fail(cs->getRBracLoc(), "the function does not end with "
                                   "'return' of a tensor");
  out_.graph = b_.take();
  std::string err = ir::verify(out_.graph);
  if (!err.empty())
    return fail(fd_->getLocation(), "internal error: captured graph is "
                                    "malformed: " + err);
  return true;
}

bool Capturer::stmt(const Stmt *s, bool &returned) {
  if (isa<NullStmt>(s))
    return true;
  if (const auto *cs = dyn_cast<CompoundStmt>(s)) {
    for (const Stmt *sub : cs->body()) {
      if (returned) // unreachable after a return
        break;
      if (!stmt(sub, returned))
        return false;
    }
    return true;
  }
  if (const auto *ds = dyn_cast<DeclStmt>(s)) {
    for (const Decl *d : ds->decls())
      if (!decl(d))
        return false;
    return true;
  }
  if (const auto *rs = dyn_cast<ReturnStmt>(s)) {
    if (!rs->getRetValue())
      return fail(rs->getReturnLoc(), "'return' without a value");
    std::optional<ir::NodeId> v = tensor(rs->getRetValue());
    if (!v)
      return false;
    b_.output(*v);
    returned = true;
    return true;
  }
  if (const auto *e = dyn_cast<Expr>(s))
    return expr_stmt(e);

  const char *what = s->getStmtClassName();
  switch (s->getStmtClass()) {
  case Stmt::IfStmtClass:
    what = "'if' statement";
    break;
  case Stmt::ForStmtClass:
    what = "'for' loop";
    break;
  case Stmt::CXXForRangeStmtClass:
    what = "range-based 'for' loop";
    break;
  case Stmt::WhileStmtClass:
    what = "'while' loop";
    break;
  case Stmt::DoStmtClass:
    what = "'do' loop";
    break;
  case Stmt::SwitchStmtClass:
    what = "'switch' statement";
    break;
  case Stmt::CXXTryStmtClass:
    what = "'try' block";
    break;
  case Stmt::GotoStmtClass:
    what = "'goto'";
    break;
  case Stmt::LabelStmtClass:
    what = "label";
    break;
  default:
    break;
  }
  return fail(s->getBeginLoc(), std::string(what) + " is not supported yet");
}

bool Capturer::decl(const Decl *d) {
  const auto *vd = dyn_cast<VarDecl>(d);
  if (!vd) {
    if (isa<StaticAssertDecl, TypedefNameDecl, UsingDecl, UsingDirectiveDecl,
            UsingShadowDecl, NamespaceAliasDecl>(d))
      return true;
    return fail(d->getLocation(), std::string("declaration of a ") +
                                      d->getDeclKindName() +
                                      " is not supported yet");
  }
  if (isa<DecompositionDecl>(vd))
    return fail(vd->getLocation(), "structured bindings are not supported yet");
  if (!vd->hasLocalStorage())
    return fail(vd->getLocation(),
                "static local " + quoted(vd) + " is not supported yet");
  QualType t = vd->getType();
  const Expr *init = vd->getInit();
  if (is_kiln_tensor(t)) {
    if (!init)
      return fail(vd->getLocation(), "tensor " + quoted(vd) +
                                         " declared without a value is not "
                                         "supported yet");
    std::optional<ir::NodeId> v = tensor(init);
    if (!v)
      return false;
    tensors_[vd] = *v;
    ir::Node &n = b_.graph().nodes[*v];
    if (n.name.empty())
      n.name = vd->getName().str();
    return true;
  }
  if (scalar_kind(t)) {
    // constexpr scalars are folded where they are used.
    if (vd->isConstexpr())
      return true;
    if (!init)
      return fail(vd->getLocation(), "scalar " + quoted(vd) +
                                         " declared without a value is not "
                                         "supported yet");
    std::optional<ir::NodeId> v = scalar(init);
    if (!v)
      return false;
    scalars_[vd] = {*v, scalar_dtype(t)};
    return true;
  }
  return fail(vd->getLocation(),
              "local " + quoted(vd) + " of type '" +
                  t.getAsString(ctx_.getPrintingPolicy()) +
                  "' is not supported yet");
}

bool Capturer::expr_stmt(const Expr *e) {
  const Expr *s = e;
  if (const auto *x = dyn_cast<ExprWithCleanups>(s))
    s = x->getSubExpr();
  s = s->IgnoreParens();
  // `a = <expr>;` rebinds a local tensor (or a by-value tensor parameter):
  // Tensor::operator= replaces the handle, it does not write into storage.
  if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(s);
      oc && oc->getOperator() == OO_Equal && oc->getNumArgs() == 2 &&
      is_kiln_tensor(oc->getArg(0)->getType())) {
    const auto *dre = dyn_cast<DeclRefExpr>(oc->getArg(0)->IgnoreParenImpCasts());
    const auto *vd = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
    if (!vd || !tensors_.count(vd) || vd->getType()->isReferenceType())
      return fail(oc->getOperatorLoc(),
                  "assignment to a tensor that is not a local of this "
                  "function is not supported yet");
    std::optional<ir::NodeId> v = tensor(oc->getArg(1));
    if (!v)
      return false;
    tensors_[vd] = *v;
    return true;
  }
  if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(s);
      oc && isa_and_nonnull<CXXMethodDecl>(oc->getCalleeDecl()) &&
      oc->getNumArgs() >= 1 &&
      is_kiln_tensor(oc->getArg(0)->getType()))
    return fail(oc->getOperatorLoc(),
                std::string("in-place operator '") +
                    getOperatorSpelling(oc->getOperator()) +
                    "' is not supported yet");
  // A call of a kiln op whose result is dropped is harmless; anything
  // else has effects the graph cannot hold.
  if (is_kiln_tensor(s->getType()))
    return tensor(s).has_value();
  if (const auto *c = dyn_cast<CallExpr>(s))
    if (const auto *callee = c->getDirectCallee())
      return fail(c->getExprLoc(),
                  "call to " + quoted(callee) + " is not supported yet");
  return fail(s->getExprLoc(), std::string("expression statement (") +
                                   s->getStmtClassName() +
                                   ") is not supported yet");
}

std::optional<ir::NodeId> Capturer::tensor(const Expr *e) {
  if (e->containsErrors())
    return silent_fail();
  e = skip(e);
  if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
    const auto *vd = dyn_cast<VarDecl>(dre->getDecl());
    if (vd) {
      auto it = tensors_.find(vd);
      if (it != tensors_.end())
        return it->second;
      fail(dre->getLocation(),
           "reference to " + quoted(vd) +
               (vd->hasGlobalStorage() ? ", a global or static variable,"
                                       : ", which is not a parameter or local "
                                         "of this function,") +
               " is not supported yet");
      return std::nullopt;
    }
  }
  if (const auto *c = dyn_cast<CallExpr>(e))
    return call(c);
  if (const auto *ce = dyn_cast<CXXConstructExpr>(e)) {
    if (ce->getNumArgs() == 0)
      fail(ce->getBeginLoc(),
           "a default-constructed (undefined) tensor is not supported yet");
    else
      fail(ce->getBeginLoc(), "this construction of a kiln::Tensor is not "
                              "supported yet");
    return std::nullopt;
  }
  if (isa<ConditionalOperator>(e)) {
    fail(e->getExprLoc(), "the conditional operator '?:' is not supported "
                          "yet (use kiln::where)");
    return std::nullopt;
  }
  fail(e->getExprLoc(), std::string("expression (") + e->getStmtClassName() +
                            ") is not supported yet");
  return std::nullopt;
}

std::optional<ir::NodeId> Capturer::call(const CallExpr *c) {
  const FunctionDecl *callee = c->getDirectCallee();
  if (!callee) {
    fail(c->getExprLoc(), "indirect call is not supported yet");
    return std::nullopt;
  }
  if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(c);
      oc && isa<CXXMethodDecl>(callee)) {
    fail(oc->getOperatorLoc(),
         std::string("in-place operator '") +
             getOperatorSpelling(oc->getOperator()) + "' is not supported yet");
    return std::nullopt;
  }
  if (isa<CXXMemberCallExpr>(c) || !in_kiln_namespace(callee)) {
    fail(c->getExprLoc(), "call to " + quoted(callee) + " is not supported yet");
    return std::nullopt;
  }
  if (callee->getIdentifier() && callee->getOverloadedOperator() == OO_None)
    if (std::optional<ir::Op> r = ir::op_from_name(callee->getName());
        r && (ir::is_reduction(*r) ||
              ir::op_info(*r).kind == ir::OpKind::Composite))
      return reduction(c, *r);
  std::optional<ir::Op> op = op_for_callee(callee, c->getNumArgs());
  unsigned num_operands = c->getNumArgs();
  if (op == ir::Op::Gelu && num_operands == 2) {
    // gelu(x, approximate): "none" (the default) or "tanh", as a literal.
    const Expr *a = c->getArg(1);
    if (const auto *d = dyn_cast<CXXDefaultArgExpr>(a))
      a = d->getExpr();
    const StringLiteral *lit = nullptr;
    for (int depth = 0; depth < 8 && a && !lit; ++depth) {
      a = a->IgnoreParenImpCasts();
      if ((lit = dyn_cast<StringLiteral>(a)))
        break;
      if (const auto *x = dyn_cast<MaterializeTemporaryExpr>(a))
        a = x->getSubExpr();
      else if (const auto *x = dyn_cast<CXXConstructExpr>(a);
               x && x->getNumArgs() >= 1)
        a = x->getArg(0);
      else if (const auto *x = dyn_cast<ExprWithCleanups>(a))
        a = x->getSubExpr();
      else
        a = nullptr;
    }
    if (!lit || (lit->getString() != "none" && lit->getString() != "tanh")) {
      fail(c->getArg(1)->getBeginLoc(),
           "kiln::gelu's 'approximate' argument must be the literal \"none\" "
           "or \"tanh\"");
      return std::nullopt;
    }
    if (lit->getString() == "tanh")
      op = ir::Op::GeluTanh;
    num_operands = 1;
  }
  if (!op || ir::op_info(*op).arity != int(num_operands)) {
    fail(c->getExprLoc(), "call to " + quoted(callee) + " is not supported yet");
    return std::nullopt;
  }
  llvm::SmallVector<ir::NodeId, 3> operands;
  for (unsigned i = 0; i < num_operands; ++i) {
    std::optional<ir::NodeId> v = operand(c->getArg(i));
    if (!v)
      return std::nullopt;
    operands.push_back(*v);
  }
  return b_.op(*op, operands, loc(c->getExprLoc()));
}

// A compile-time integer argument (a dim, keepdim, a correction).
std::optional<int64_t> Capturer::constant_int(const Expr *e, const char *what) {
  Expr::EvalResult r;
  if (e->isValueDependent() || !e->EvaluateAsInt(r, ctx_)) {
    fail(e->getBeginLoc(), std::string("the ") + what +
                               " must be a compile-time constant");
    return std::nullopt;
  }
  return r.Val.getInt().getExtValue();
}

// Reductions and row-wise ops of kiln/ops.h: op(x), op(x, dim[, keepdim
// [, correction]]), softmax/log_softmax(x, dim), layer_norm(x, w, b, eps),
// rms_norm(x, w, eps). Dims, keepdim and the correction are compile-time
// constants (they shape the kernel); eps is a runtime value.
std::optional<ir::NodeId> Capturer::reduction(const CallExpr *c, ir::Op op) {
  const unsigned n = c->getNumArgs();
  llvm::SmallVector<ir::NodeId, 4> operands;
  llvm::SmallVector<int64_t, 2> dims;
  bool keepdim = false;
  auto arg = [&](unsigned i) -> std::optional<ir::NodeId> {
    return operand(c->getArg(i));
  };
  auto x = arg(0);
  if (!x)
    return std::nullopt;
  operands.push_back(*x);
  switch (op) {
  case ir::Op::LayerNorm:
  case ir::Op::RmsNorm: {
    dims = {-1};
    for (unsigned i = 1; i < n; ++i) {
      if (i == n - 1) {
        // eps: a runtime scalar; rms_norm's default (-1: the dtype's
        // machine epsilon) depends on the dtype and is not captured yet.
        Expr::EvalResult r;
        if (op == ir::Op::RmsNorm && c->getArg(i)->EvaluateAsFloat(r.Val.getFloat(), ctx_) &&
            r.Val.getFloat().isNegative()) {
          fail(c->getArg(i)->getBeginLoc(),
               "rms_norm's default eps is not supported yet (pass an eps)");
          return std::nullopt;
        }
      }
      auto v = arg(i);
      if (!v)
        return std::nullopt;
      operands.push_back(*v);
    }
    break;
  }
  case ir::Op::Softmax:
  case ir::Op::LogSoftmax: {
    auto d = constant_int(c->getArg(1), "dim");
    if (!d)
      return std::nullopt;
    dims = {*d};
    break;
  }
  default: // sum, mean, amax, amin, argmax, logsumexp, var
    if (n >= 2) {
      auto d = constant_int(c->getArg(1), "dim");
      if (!d)
        return std::nullopt;
      dims = {*d};
    }
    if (n >= 3) {
      auto k = constant_int(c->getArg(2), "keepdim argument");
      if (!k)
        return std::nullopt;
      keepdim = *k != 0;
    }
    if (op == ir::Op::Var) {
      int64_t correction = 1;
      if (n >= 4) {
        auto k = constant_int(c->getArg(3), "correction");
        if (!k)
          return std::nullopt;
        correction = *k;
      }
      operands.push_back(b_.constant(double(correction), DType::i64));
    }
    break;
  }
  if (ir::op_info(op).arity != int(operands.size())) {
    fail(c->getExprLoc(), "this form of " + quoted(c->getDirectCallee()) +
                              " is not supported yet");
    return std::nullopt;
  }
  ir::NodeId id = b_.op(op, operands, loc(c->getExprLoc()));
  b_.graph().nodes[id].dims = dims;
  b_.graph().nodes[id].keepdim = keepdim;
  return id;
}

// An argument of an op: a tensor, a C++ number, or a kiln::Operand made
// from either.
std::optional<ir::NodeId> Capturer::operand(const Expr *e) {
  if (is_kiln_class(e->getType(), "Operand")) {
    const Expr *x = e;
    while (true) {
      x = x->IgnoreParens();
      if (const auto *y = dyn_cast<ExprWithCleanups>(x))
        x = y->getSubExpr();
      else if (const auto *y = dyn_cast<MaterializeTemporaryExpr>(x))
        x = y->getSubExpr();
      else if (const auto *y = dyn_cast<CXXBindTemporaryExpr>(x))
        x = y->getSubExpr();
      else if (const auto *y = dyn_cast<CastExpr>(x);
               y && (y->getCastKind() == CK_NoOp ||
                     y->getCastKind() == CK_ConstructorConversion))
        x = y->getSubExpr();
      else
        break;
    }
    const auto *ce = dyn_cast<CXXConstructExpr>(x);
    if (!ce || ce->getNumArgs() != 1 ||
        ce->getConstructor()->isCopyOrMoveConstructor()) {
      fail(e->getBeginLoc(), "this kiln::Operand argument is not supported "
                             "yet (pass a tensor or a number)");
      return std::nullopt;
    }
    e = ce->getArg(0);
  }
  if (is_kiln_tensor(e->getType()))
    return tensor(e);
  if (e->getType()->isArithmeticType() && scalar_kind(e->getType()))
    return scalar(e);
  fail(e->getBeginLoc(), "operand of type '" +
                             e->getType().getAsString(ctx_.getPrintingPolicy()) +
                             "' is not supported yet");
  return std::nullopt;
}

} // namespace capture

static std::string fingerprint(const ir::Graph &g) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const ir::Node &n : g.nodes) {
    os << ir::op_info(n.op).name;
    for (ir::NodeId o : n.operands)
      os << " %" << o;
    if (n.op == ir::Op::Constant)
      os << " " << llvm::format("%a", n.constant) << ":"
         << dtype_name(n.type.dtype);
    if (n.arg_index >= 0)
      os << " #" << n.arg_index << ":" << dtype_name(n.type.dtype)
         << (n.type.scalar ? "s" : "t");
    os << "\n";
  }
  for (ir::NodeId o : g.outputs)
    os << "out %" << o << "\n";
  return text;
}

Capture capture_function(ASTContext &ctx, const FunctionDecl *fd,
                         const Stmt *body) {
  Capture out;
  capture::Capturer c(ctx, fd, out);
  out.ok = c.run(body);
  if (!out.ok)
    return out;
  out.fingerprint = fingerprint(out.graph);
  return out;
}

} // namespace kiln::plugin
