// Capture of tensor expressions: names, kiln ops and operators, reductions,
// tensor methods, assignment and in-place updates, and tuples of tensors
// (std::pair, std::tuple, aggregates).
//
// Assignment rebinds a name (Tensor::operator= replaces the handle). An
// in-place update writes into storage: on storage the region made, every
// name sharing it sees the new value; on storage that came from outside,
// the region's result is copied back into it (slot.copy_(result)), which
// is what the caller sees after eager code too.
#include "CaptureImpl.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

#include <llvm/ADT/SmallVector.h>

#include <functional>

namespace kiln::plugin::capture {

static bool is_std_function(const FunctionDecl *f, llvm::StringRef name) {
  return f && f->isInStdNamespace() && f->getIdentifier() &&
         f->getName() == name;
}

// std::move(x) and std::forward<T>(x) name the same value.
static bool is_std_move(const CallExpr *c) {
  const FunctionDecl *f = c->getDirectCallee();
  return c->getNumArgs() == 1 &&
         (is_std_function(f, "move") || is_std_function(f, "forward"));
}

// The op behind a call of a kiln:: function or operator: by the op
// table's C++ operator (kiln/ops.def's cxx column) or by name.
static std::optional<ir::Op> op_for_callee(const FunctionDecl *callee,
                                           unsigned num_args) {
  if (OverloadedOperatorKind oo = callee->getOverloadedOperator();
      oo != OO_None)
    return ir::op_from_operator(getOperatorSpelling(oo), int(num_args));
  if (!callee->getIdentifier())
    return std::nullopt;
  std::optional<ir::Op> op = ir::op_from_name(callee->getName());
  if (!op || !ir::is_pointwise(*op))
    return std::nullopt;
  return op;
}

// Sees through parentheses, cleanups, temporaries, and the casts `cast_ok`
// accepts; the wrapper-peeling shared by skip(), operand() and tuple().
template <class CastOk>
static const Expr *peel(const Expr *e, CastOk cast_ok) {
  while (true) {
    e = e->IgnoreParens();
    if (const auto *x = dyn_cast<ExprWithCleanups>(e))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<MaterializeTemporaryExpr>(e))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<CXXBindTemporaryExpr>(e))
      e = x->getSubExpr();
    else if (const auto *x = dyn_cast<CastExpr>(e); x && cast_ok(x))
      e = x->getSubExpr();
    else
      return e;
  }
}

static bool value_cast(const CastExpr *x) {
  return x->getCastKind() == CK_NoOp ||
         x->getCastKind() == CK_ConstructorConversion ||
         x->getCastKind() == CK_LValueToRValue;
}

// Sees through what does not change the value of a tensor expression:
// parentheses, cleanups, temporaries, no-op casts, copies and moves.
const Expr *Capturer::skip(const Expr *e) {
  while (true) {
    e = peel(e, [](const CastExpr *x) {
      return value_cast(x) &&
             (isa<ImplicitCastExpr>(x) || isa<CXXFunctionalCastExpr>(x) ||
              isa<CXXStaticCastExpr>(x) || isa<CStyleCastExpr>(x));
    });
    if (const auto *x = dyn_cast<CXXConstructExpr>(e);
        x && x->getNumArgs() == 1 &&
        x->getConstructor()->isCopyOrMoveConstructor() &&
        (is_kiln_tensor(x->getType()) || tensor_tuple_arity(x->getType()) ||
         (x->getType()->getAsCXXRecordDecl() &&
          x->getType()->getAsCXXRecordDecl()->isLambda())))
      e = x->getArg(0);
    else if (const auto *x = dyn_cast<CallExpr>(e); x && is_std_move(x))
      e = x->getArg(0);
    else if (const auto *x = dyn_cast<CXXDefaultArgExpr>(e))
      e = x->getExpr();
    else
      return e;
  }
}

int Capturer::fresh_storage(Storage s) {
  st.storages.push_back(s);
  return int(st.storages.size()) - 1;
}

ir::NodeId Capturer::add_op(ir::Op op, llvm::ArrayRef<ir::NodeId> operands,
                            SourceLocation at) {
  ir::NodeId n = st.b.op(op, operands, loc(at));
  st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
  ++st.num_ops;
  bool all_scalar = true, any_variant = false, all_variant_or_scalar = true;
  for (ir::NodeId o : operands) {
    DClass c = st.dclass[o];
    all_scalar &= c == DClass::Scalar;
    any_variant |= c == DClass::Variant;
    if (c != DClass::Variant && c != DClass::Scalar)
      all_variant_or_scalar = false;
  }
  DClass c = DClass::Int;
  const ir::OpInfo &info = ir::op_info(op);
  if (op == ir::Op::ReduceSize || all_scalar)
    c = DClass::Scalar;
  else if (info.rule == ir::TypeRule::COMPARE)
    c = DClass::Bool;
  else if (info.rule == ir::TypeRule::INDEX)
    c = DClass::Int;
  else if (info.rule == ir::TypeRule::WHERE)
    c = st.dclass[operands[1]] == DClass::Variant ||
                st.dclass[operands[2]] == DClass::Variant
            ? DClass::Variant
            : DClass::Int;
  else if (ir::is_reduction(op) || ir::is_composite(op))
    c = st.dclass[operands[0]] == DClass::Variant ? DClass::Variant : DClass::Int;
  else if (any_variant && all_variant_or_scalar)
    c = DClass::Variant;
  st.dclass[n] = c;
  return n;
}

// A `to` node: x converted to `to`.
ir::NodeId Capturer::add_cast(ir::NodeId x, DType to, SourceLocation at) {
  ir::NodeId n = add_op(ir::Op::Cast, {x}, at);
  st.b.graph().nodes[n].cast_to = to;
  return n;
}

std::optional<Value> Capturer::name_value(const DeclRefExpr *dre) {
  const ValueDecl *d = dre->getDecl();
  const Frame &fr = frames_.back();
  if (dre->refersToEnclosingVariableOrCapture() && fr.closure >= 0) {
    const Closure &cl = st.closures[fr.closure];
    if (auto it = cl.copies.find(d); it != cl.copies.end())
      return it->second;
  }
  if (auto it = st.names.find(d); it != st.names.end())
    return it->second;
  if (const auto *rd = d->getType()->getAsCXXRecordDecl();
      rd && (rd->isLambda() || is_tensor_vector(d->getType()) ||
             (tensor_tuple_arity(d->getType()) && !is_kiln_tensor(d->getType()))))
    return fail_value(dre->getLocation(),
                      quoted(d) + ", declared outside the compiled region, "
                                  "is not supported yet here");
  if (std::optional<SlotId> id = var_slot(d, dre->getLocation()))
    return read(*id, dre->getLocation());
  if (isa<FunctionDecl>(d))
    return fail_value(dre->getLocation(), "a function used as a value is not "
                                          "supported yet");
  return fail_value(dre->getLocation(),
                    "reference to " + quoted(d) + " is not supported yet");
}

std::optional<Value> Capturer::eval(const Expr *e) {
  if (e->containsErrors())
    return silent_fail();
  QualType t = e->getType();
  if (is_kiln_tensor(t))
    return tensor(e);
  if (t->isArithmeticType())
    return scalar(e);
  const Expr *s = skip(e);
  if (t->isVoidType()) {
    if (const auto *c = dyn_cast<CallExpr>(s))
      return call(c);
    if (const auto *ce = dyn_cast<CastExpr>(s))
      return eval(ce->getSubExpr()).has_value() ? std::optional(Value())
                                                : std::nullopt;
    if (isa<CXXThrowExpr>(s))
      return fail_value(s->getExprLoc(), "'throw' runs eagerly");
    return fail_value(s->getExprLoc(), std::string("expression (") +
                                           s->getStmtClassName() +
                                           ") is not supported yet");
  }
  if (const auto *rd = t.getNonReferenceType()->getAsCXXRecordDecl();
      rd && rd->isLambda()) {
    if (const auto *le = dyn_cast<LambdaExpr>(s))
      return make_closure(le);
    if (const auto *dre = dyn_cast<DeclRefExpr>(s))
      return name_value(dre);
    return fail_value(s->getExprLoc(), "this use of a lambda is not supported "
                                       "yet");
  }
  if (unsigned n = tensor_tuple_arity(t.getNonReferenceType()))
    return tuple(e, n);
  if (is_tensor_vector(t))
    return pieces(e);
  if (const auto *c = dyn_cast<CallExpr>(s))
    return call(c);
  return fail_value(e->getExprLoc(),
                    "a value of type '" +
                        t.getAsString(ctx_.getPrintingPolicy()) +
                        "' is not supported yet");
}

std::optional<Value> Capturer::tensor(const Expr *e) {
  if (e->containsErrors())
    return silent_fail();
  e = skip(e);
  std::optional<Value> v;
  if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
    v = name_value(dre);
  } else if (const auto *me = dyn_cast<MemberExpr>(e)) {
    // An element of a tuple value (r.first, out.a), or a member slot.
    const Expr *base = skip(me->getBase());
    const auto *f = dyn_cast<FieldDecl>(me->getMemberDecl());
    bool tuple_base = !me->isArrow() &&
                      tensor_tuple_arity(me->getBase()->getType()) && f;
    if (tuple_base) {
      const auto *bref = dyn_cast<DeclRefExpr>(base);
      bool named_tuple = bref && (st.names.count(bref->getDecl()) ||
                                  (frames_.back().closure >= 0 &&
                                   st.closures[frames_.back().closure]
                                       .copies.count(bref->getDecl())));
      if (named_tuple || !base->isGLValue()) {
        std::optional<Value> t = eval(base);
        if (!t)
          return std::nullopt;
        if (t->kind != Value::Tuple || f->getFieldIndex() >= t->elems.size())
          return fail_value(me->getExprLoc(), "this member of a returned "
                                              "value is not supported yet");
        return t->elems[f->getFieldIndex()];
      }
    }
    std::optional<SlotId> id = lvalue_slot(me);
    if (!id)
      return std::nullopt;
    v = read(*id, me->getExprLoc());
  } else if (const Expr *vec = nullptr, *index = nullptr;
             tensor_vector_element(e, vec, index)) {
    v = piece(vec, index, e->getExprLoc());
  } else if (const auto *c = dyn_cast<CallExpr>(e)) {
    v = call(c);
  } else if (const auto *ce = dyn_cast<CXXConstructExpr>(e)) {
    if (ce->getNumArgs() == 0)
      return fail_value(ce->getBeginLoc(), "a default-constructed (undefined) "
                                           "tensor is not supported yet");
    return fail_value(ce->getBeginLoc(), "this construction of a kiln::Tensor "
                                         "is not supported yet");
  } else if (const auto *co = dyn_cast<ConditionalOperator>(e)) {
    // Like an 'if': a known condition picks its arm, one the region's
    // start can evaluate specialises the region.
    std::optional<bool> taken;
    if (std::optional<APValue> k = fold(co->getCond()); k && k->isInt())
      taken = k->getInt().getBoolValue();
    else if (failed())
      return std::nullopt;
    std::string why;
    if (!taken && guardable(co->getCond(), why)) {
      taken = decided(co->getCond());
      if (!taken)
        return std::nullopt;
    }
    if (!taken)
      return fail_value(e->getExprLoc(), "the conditional operator '?:' is "
                                         "not supported yet (use kiln::where)");
    return tensor(*taken ? co->getTrueExpr() : co->getFalseExpr());
  } else {
    return fail_value(e->getExprLoc(), std::string("expression (") +
                                           e->getStmtClassName() +
                                           ") is not supported yet");
  }
  if (!v)
    return std::nullopt;
  if (v->kind == Value::Undefined)
    return fail_value(e->getExprLoc(), undefined_use(e));
  if (v->kind != Value::Tensor)
    return fail_value(e->getExprLoc(), "expected a tensor value here");
  return v;
}

// Why a use of an undefined tensor (`Tensor out;` before a value is
// assigned on this path) ends the region.
std::string Capturer::undefined_use(const Expr *e) const {
  std::string name = "this tensor";
  if (const auto *dre = dyn_cast<DeclRefExpr>(skip(e)))
    name = quoted(dre->getDecl());
  return name + " is undefined here (default-constructed, no value assigned "
                "on this path); of an undefined tensor only assignment, "
                "defined() and optional arguments are captured, so this "
                "runs eagerly";
}

std::optional<Value> Capturer::kiln_call(const CallExpr *c,
                                         const FunctionDecl *callee) {
  if (callee->getIdentifier() &&
      (callee->getName() == "cat" || callee->getName() == "stack"))
    return join(c, callee->getName() == "stack");
  if (callee->getIdentifier() && callee->getOverloadedOperator() == OO_None)
    if (std::optional<ir::Op> r = ir::op_from_name(callee->getName());
        r && (ir::is_reduction(*r) || ir::is_composite(*r)))
      return reduction(c, *r);
  if (callee->getIdentifier() && callee->getOverloadedOperator() == OO_None)
    if (std::optional<ir::Op> r = ir::op_from_name(callee->getName());
        r && ir::is_product(*r))
      return product(c, *r);
  if (callee->getIdentifier() &&
      callee->getName() == "scaled_dot_product_attention")
    return attention(c);
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
    if (!lit || (lit->getString() != "none" && lit->getString() != "tanh"))
      return fail_value(c->getArg(1)->getBeginLoc(),
                        "kiln::gelu's 'approximate' argument must be the "
                        "literal \"none\" or \"tanh\"");
    if (lit->getString() == "tanh")
      op = ir::Op::GeluTanh;
    num_operands = 1;
  }
  if (!op || ir::op_info(*op).arity != int(num_operands))
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(callee) + " is not supported yet");
  llvm::SmallVector<ir::NodeId, 3> operands;
  for (unsigned i = 0; i < num_operands; ++i) {
    std::optional<ir::NodeId> v = operand(c->getArg(i));
    if (!v)
      return std::nullopt;
    operands.push_back(*v);
  }
  ir::NodeId n = add_op(*op, operands, c->getExprLoc());
  return Value::tensor(n, fresh_storage());
}

// matmul(a, b) and linear(x, w[, b]): graph ops the runtime's GEMM runs.
// linear's bias is optional: an undefined one is a constant (-0.0, which
// adds nothing), chosen per call by a specialisation on `b.defined()`.
std::optional<Value> Capturer::product(const CallExpr *c, ir::Op op) {
  const unsigned n = c->getNumArgs();
  if (n != (op == ir::Op::Linear ? 3u : 2u))
    return fail_value(c->getExprLoc(), "this form of " + quoted(c->getDirectCallee()) +
                                           " is not supported yet");
  llvm::SmallVector<ir::NodeId, 3> operands;
  for (unsigned i = 0; i < n; ++i) {
    if (i == 2) {
      std::optional<bool> present = optional_tensor(c->getArg(i));
      if (!present)
        return std::nullopt;
      if (!*present) {
        operands.push_back(st.b.constant(-0.0, DType::f64,
                                         loc(c->getArg(i)->getBeginLoc())));
        st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
        continue;
      }
    }
    std::optional<ir::NodeId> v = operand(c->getArg(i));
    if (!v)
      return std::nullopt;
    operands.push_back(*v);
  }
  ir::NodeId r = add_op(op, operands, c->getExprLoc());
  return Value::tensor(r, fresh_storage());
}

// scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale): a
// graph op the runtime's fused kernel runs (kiln/attention.h). An undefined
// mask is a constant, chosen per call by a specialisation on
// `mask.defined()` as linear's bias; is_causal is a bool (a constant or a
// host value); scale a double or std::nullopt (1/sqrt(E), the op's).
std::optional<Value> Capturer::attention(const CallExpr *c) {
  if (c->getNumArgs() != 6)
    return fail_value(c->getExprLoc(), "this form of " +
                                           quoted(c->getDirectCallee()) +
                                           " is not supported yet");
  // Sees through default arguments, temporaries (peel) and conversions
  // that keep the value (std::optional<double> made from a number).
  auto see_through = [](const Expr *e) {
    auto keeps = [](const CastExpr *c) {
      const CastKind k = c->getCastKind();
      return k == CK_NoOp || k == CK_LValueToRValue ||
             k == CK_UncheckedDerivedToBase || k == CK_ConstructorConversion;
    };
    while (true) {
      e = peel(e, keeps);
      const auto *d = dyn_cast<CXXDefaultArgExpr>(e);
      if (!d)
        return e;
      e = d->getExpr();
    }
  };
  llvm::SmallVector<ir::NodeId, 6> operands;
  for (unsigned i = 0; i < 3; ++i) {
    std::optional<ir::NodeId> v = operand(c->getArg(i));
    if (!v)
      return std::nullopt;
    operands.push_back(*v);
  }
  std::optional<bool> present = optional_tensor(c->getArg(3));
  if (!present)
    return std::nullopt;
  if (!*present) {
    operands.push_back(
        st.b.constant(-0.0, DType::f64, loc(c->getArg(3)->getBeginLoc())));
    st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
  } else {
    std::optional<ir::NodeId> m = operand(c->getArg(3));
    if (!m)
      return std::nullopt;
    operands.push_back(*m);
  }
  std::optional<ir::NodeId> causal = operand(see_through(c->getArg(4)));
  if (!causal)
    return std::nullopt;
  operands.push_back(*causal);
  // scale: std::optional<double>, made from std::nullopt or from a number.
  const Expr *s = see_through(c->getArg(5));
  if (const auto *ce = dyn_cast<CXXConstructExpr>(s)) {
    const Expr *inner =
        ce->getNumArgs() == 1 ? see_through(ce->getArg(0)) : nullptr;
    const bool none =
        ce->getNumArgs() == 0 ||
        (inner && inner->getType().getAsString().find("nullopt_t") !=
                      std::string::npos);
    if (!none) {
      if (!inner || !inner->getType()->isArithmeticType())
        return fail_value(c->getArg(5)->getBeginLoc(),
                          "attention's scale must be a number or "
                          "std::nullopt (a std::optional<double> variable is "
                          "not supported yet)");
      std::optional<ir::NodeId> sc = operand(inner);
      if (!sc)
        return std::nullopt;
      operands.push_back(*sc);
    }
  } else
    return fail_value(c->getArg(5)->getBeginLoc(),
                      "attention's scale must be a number or std::nullopt "
                      "(a std::optional<double> variable is not supported "
                      "yet)");
  ir::NodeId r = add_op(ir::Op::Attention, operands, c->getExprLoc());
  return Value::tensor(r, fresh_storage());
}

// cat({t0, ...}, dim) and stack({t0, ...}, dim) (kiln/join.h): the
// tensors written in braces, or a std::vector of them the region built
// (or chunk()'s pieces: vector_tensors), the dim a compile-time constant. A cat node
// (the runtime's op runs it); stack is cat of each tensor unsqueezed at dim
// (views), as the eager op is.
std::optional<Value> Capturer::join(const CallExpr *c, bool stack) {
  const std::string name = quoted(c->getDirectCallee());
  if (c->getNumArgs() != 2)
    return fail_value(c->getExprLoc(),
                      "this form of " + name + " is not supported yet");
  // std::vector<Tensor>{...} made from an initializer list.
  const InitListExpr *list = nullptr;
  if (const auto *ctor =
          dyn_cast<CXXConstructExpr>(peel(c->getArg(0), value_cast));
      ctor && ctor->getNumArgs() >= 1)
    if (const auto *il = dyn_cast<CXXStdInitializerListExpr>(
            peel(ctor->getArg(0), value_cast)))
      list = dyn_cast<InitListExpr>(peel(il->getSubExpr(), value_cast));
  // Or a std::vector the region built, or chunk()'s pieces.
  std::vector<ir::NodeId> tensors;
  if (list) {
    if (list->getNumInits() == 0)
      return fail_value(c->getArg(0)->getBeginLoc(),
                        name + " of no tensors raises; it runs eagerly");
    for (const Expr *e : list->inits()) {
      std::optional<ir::NodeId> t = operand(e);
      if (!t)
        return std::nullopt;
      tensors.push_back(*t);
    }
  } else {
    std::optional<std::vector<ir::NodeId>> ts = vector_tensors(c->getArg(0));
    if (!ts)
      return std::nullopt;
    if (ts->empty())
      return fail_value(c->getArg(0)->getBeginLoc(),
                        name + " of no tensors raises; it runs eagerly");
    tensors = std::move(*ts);
  }
  const Expr *dim_arg = c->getArg(1);
  if (const auto *d = dyn_cast<CXXDefaultArgExpr>(dim_arg))
    dim_arg = d->getExpr();
  std::optional<int64_t> dim = constant_int(dim_arg, "dim");
  if (!dim)
    return std::nullopt;
  llvm::SmallVector<ir::NodeId, 8> operands;
  for (ir::NodeId t : tensors) {
    if (stack) {
      ir::NodeId u = add_op(ir::Op::Unsqueeze, {t, int_constant(*dim, dim_arg)},
                            c->getArg(0)->getBeginLoc());
      st.dclass[u] = st.dclass[t];
      t = u;
    }
    operands.push_back(t);
  }
  operands.push_back(int_constant(*dim, dim_arg));
  ir::NodeId r = add_op(ir::Op::Cat, operands, c->getExprLoc());
  return Value::tensor(r, fresh_storage());
}

// What x.split(size, d) or x.chunk(chunks, d) returns, a std::vector of
// views of x, named (`auto parts = x.chunk(3, -1);`) or not: a Pieces
// value; its elements become piece nodes where the code indexes it with a
// constant (piece()). d is a constant, size and chunks may be run-time
// integers. A copy of such a vector is the same pieces.
std::optional<Value> Capturer::pieces(const Expr *e) {
  const Expr *s = skip(e);
  if (const auto *ce = dyn_cast<CXXConstructExpr>(s);
      ce && ce->getNumArgs() == 1 &&
      ce->getConstructor()->isCopyOrMoveConstructor())
    return pieces(ce->getArg(0));
  if (const auto *dre = dyn_cast<DeclRefExpr>(s)) {
    std::optional<Value> v = name_value(dre);
    if (v && v->kind != Value::Pieces && v->kind != Value::List)
      return fail_value(dre->getLocation(), "this std::vector of tensors is "
                                            "not supported yet");
    return v;
  }
  const auto *mc = dyn_cast<CXXMemberCallExpr>(s);
  const CXXMethodDecl *m = mc ? mc->getMethodDecl() : nullptr;
  llvm::StringRef name = m && m->getIdentifier() ? m->getName() : "";
  if (!mc || !is_kiln_tensor(mc->getImplicitObjectArgument()->getType()) ||
      (name != "split" && name != "chunk") || mc->getNumArgs() != 2)
    return fail_value(s->getExprLoc(),
                      "a std::vector of tensors is captured only as a local "
                      "the region fills (push_back, braces) or what split() "
                      "or chunk() returns");
  const Expr *obj = mc->getImplicitObjectArgument();
  std::optional<Value> x = tensor(obj);
  if (!x)
    return std::nullopt;
  // As view_method: a piece of an argument updated in place in the region
  // would view a copy.
  if (const Storage &base = st.storages[x->storage];
      base.kind == Storage::Input && st.copy_back.count(base.slot))
    return fail_value(mc->getExprLoc(),
                      "'" + name.str() + "' of '" +
                          slots_[base.slot].slot.name() +
                          "', updated in place in the same region, is not "
                          "supported yet");
  const Expr *dim_arg = mc->getArg(1);
  if (const auto *d = dyn_cast<CXXDefaultArgExpr>(dim_arg))
    dim_arg = d->getExpr();
  std::optional<int64_t> d = dim_of(dim_arg, obj);
  if (!d)
    return std::nullopt;
  std::optional<ir::NodeId> count = operand(mc->getArg(0));
  if (!count)
    return std::nullopt;
  Value v;
  v.kind = Value::Pieces;
  v.node = x->node;
  v.storage = x->storage;
  v.piece_dim = int_constant(*d, dim_arg);
  const bool chunk = name == "chunk";
  v.piece_chunks = chunk ? *count : int_constant(0, mc);
  v.piece_size = chunk ? int_constant(0, mc) : *count;
  st.storages[x->storage].viewed = true;
  return v;
}

// `parts[i]` or `parts.at(i)` of split()'s or chunk()'s result, i a
// compile-time constant: a piece node, which the host checks before the
// launches (a piece past the last runs the eager body, where the index is
// out of range).
std::optional<Value> Capturer::piece(const Expr *vec, const Expr *index,
                                     SourceLocation at) {
  std::optional<Value> p = pieces(vec);
  if (!p)
    return std::nullopt;
  if (p->kind == Value::List) {
    std::optional<int64_t> i =
        constant_int(index, "index into a std::vector of tensors");
    if (!i)
      return std::nullopt;
    if (*i < 0 || *i >= int64_t(p->elems.size()))
      return fail_value(index->getBeginLoc(),
                        "index " + std::to_string(*i) +
                            " is out of range for a std::vector of " +
                            std::to_string(p->elems.size()) + " tensors");
    return p->elems[size_t(*i)];
  }
  std::optional<int64_t> i =
      constant_int(index, "index into what split() or chunk() returns");
  if (!i)
    return std::nullopt;
  const ir::Node &chunks = st.b.graph().nodes[p->piece_chunks];
  if (*i < 0 || (chunks.op == ir::Op::Constant && chunks.constant > 0 &&
                 *i >= int64_t(chunks.constant)))
    return fail_value(index->getBeginLoc(),
                      "index " + std::to_string(*i) +
                          " is out of range for what chunk() returns");
  ir::NodeId id = add_op(ir::Op::Piece,
                         {p->node, p->piece_dim, int_constant(*i, index),
                          p->piece_chunks, p->piece_size},
                         at);
  st.dclass.resize(st.b.graph().nodes.size(), DClass::Variant);
  st.dclass[id] = st.dclass[p->node];
  return Value::tensor(id, p->storage);
}

// An i64 constant operand (a dim, an index) at `at`'s start.
ir::NodeId Capturer::int_constant(int64_t v, const Expr *at) {
  ir::NodeId k = st.b.constant(double(v), DType::i64, loc(at->getBeginLoc()));
  st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
  return k;
}

// A compile-time integer argument (a dim, keepdim, a correction).
std::optional<int64_t> Capturer::constant_int(const Expr *e, const char *what) {
  std::optional<APValue> k = fold(e);
  if (k && k->isInt() && k->getInt().getSignificantBits() <= 64)
    return k->getInt().getExtValue();
  if (failed())
    return std::nullopt;
  return fail_value(e->getBeginLoc(), std::string("the ") + what +
                                          " must be a compile-time constant");
}

// A dim of the tensor `of` (an op's tensor argument as written): a
// compile-time constant, or `t.dim() - c` with t the same variable as `of`
// and c a constant of at least 1: the c-th dim from the end whatever the
// rank, which is the graph's dim -c. (Eager raises for c past the rank, as
// -c does; `t.dim() - 0` is no dim of t, and is left to constant_int's
// message.) `softmax(x, x.dim() - 1)` and `y.transpose(y.dim() - 2,
// y.dim() - 1)` are how model code often writes the last dims.
std::optional<int64_t> Capturer::dim_of(const Expr *e, const Expr *of,
                                        const char *what) {
  const Expr *s = e->IgnoreParenImpCasts();
  if (const auto *sub = dyn_cast<BinaryOperator>(s);
      of && sub && sub->getOpcode() == BO_Sub) {
    const auto *dim = dyn_cast<CXXMemberCallExpr>(sub->getLHS()->IgnoreParenImpCasts());
    const CXXMethodDecl *m = dim ? dim->getMethodDecl() : nullptr;
    if (m && m->getIdentifier() && m->getName() == "dim" &&
        dim->getNumArgs() == 0 &&
        is_kiln_tensor(dim->getImplicitObjectArgument()->getType())) {
      std::optional<SlotId> a = lvalue_slot(dim->getImplicitObjectArgument(), true),
                            b = lvalue_slot(of, true);
      Expr::EvalResult r;
      if (a && b && *a == *b &&
          sub->getRHS()->EvaluateAsInt(r, ctx_) && r.Val.getInt() >= 1 &&
          r.Val.getInt().getSignificantBits() <= 64)
        return -r.Val.getInt().getExtValue();
    }
  }
  if (std::optional<APValue> k = fold(e);
      k && k->isInt() && k->getInt().getSignificantBits() <= 64)
    return k->getInt().getExtValue();
  if (failed())
    return std::nullopt;
  // A dim known only at run time (a parameter): the region is specialised
  // for it naming the last dim, as TorchDynamo specialises an int on its
  // value; a call passing another dim runs eagerly.
  if (Expr *cond = last_dim_condition(e, of)) {
    std::optional<bool> last = decided(cond);
    if (!last)
      return std::nullopt;
    if (*last)
      return -1;
    return fail_value(e->getBeginLoc(),
                      std::string("the ") + what + " is a runtime value, "
                      "compiled for the last dim only (-1" +
                      (isa<BinaryOperator>(cond) &&
                               cast<BinaryOperator>(cond)->getOpcode() == BO_LOr
                           ? " or dim() - 1"
                           : "") +
                      "); a call with another dim runs eagerly");
  }
  return constant_int(e, what);
}

// `e == -1 || e == of.dim() - 1` (the second test where `of` is a tensor
// the region's start can name), or `e == -1`: a condition the region's
// start evaluates, made once per dim expression and tensor, since
// decisions compare conditions by identity. Null when the region's start
// cannot evaluate `e`.
Expr *Capturer::last_dim_condition(const Expr *e, const Expr *of) {
  // A variable or a member (a dim parameter): not an expression such as
  // `t.dim() - 0`, which names no dim of t.
  const Expr *key_e = e->IgnoreParenImpCasts();
  if (!isa<DeclRefExpr, MemberExpr>(key_e))
    return nullptr;
  const void *key = key_e;
  if (const auto *dre = dyn_cast<DeclRefExpr>(key_e))
    key = dre->getDecl();
  std::optional<SlotId> of_slot =
      of ? lvalue_slot(strip_noop(of, true, true), /*quiet=*/true) : std::nullopt;
  if (failed())
    return nullptr;
  std::string why;
  Expr *&cond = last_dim_conds_[{key, of_slot.value_or(-1)}];
  if (cond) // still evaluable at this region's start?
    return guardable(cond, why) ? cond : nullptr;
  QualType t = e->getType().getNonReferenceType().getUnqualifiedType();
  if (!t->isIntegerType() || t->isBooleanType())
    return nullptr;
  if (!guardable(e, why))
    return nullptr;
  SourceLocation at = e->getBeginLoc();
  auto *lhs = const_cast<Expr *>(e);
  auto *one = IntegerLiteral::Create(ctx_, llvm::APInt(ctx_.getIntWidth(t), 1),
                                     t, at);
  auto *minus_one =
      UnaryOperator::Create(ctx_, one, UO_Minus, t, VK_PRValue, OK_Ordinary,
                            at, false, FPOptionsOverride());
  Expr *is_minus_one =
      BinaryOperator::Create(ctx_, lhs, minus_one, BO_EQ, ctx_.BoolTy,
                             VK_PRValue, OK_Ordinary, at, FPOptionsOverride());
  cond = is_minus_one;
  // Also `e == of.dim() - 1`, where `of` is a tensor from outside the
  // region that it has not changed.
  if (!of_slot || st.first_write.count(*of_slot) || !nameable_at_entry(*of_slot))
    return cond;
  Expr *rank = method_call(strip_noop(of, true, true), "dim", at);
  if (!rank || !rank->getType()->isIntegerType())
    return cond;
  if (!ctx_.hasSameType(rank->getType(), t)) // int dim() -> e's type
    rank = ImplicitCastExpr::Create(ctx_, t, CK_IntegralCast, rank, nullptr,
                                    VK_PRValue, FPOptionsOverride());
  Expr *last = BinaryOperator::Create(ctx_, rank, one, BO_Sub, t, VK_PRValue,
                                      OK_Ordinary, at, FPOptionsOverride());
  Expr *is_last = BinaryOperator::Create(ctx_, lhs, last, BO_EQ, ctx_.BoolTy,
                                         VK_PRValue, OK_Ordinary, at,
                                         FPOptionsOverride());
  Expr *either =
      BinaryOperator::Create(ctx_, is_minus_one, is_last, BO_LOr, ctx_.BoolTy,
                             VK_PRValue, OK_Ordinary, at, FPOptionsOverride());
  if (guardable(either, why))
    cond = either;
  return cond;
}

// Reductions and row-wise ops of kiln/ops.h: op(x), op(x, dim[, keepdim
// [, correction]]), softmax/log_softmax(x, dim), layer_norm(x, w, b, eps),
// rms_norm(x, w, eps). Dims, keepdim and the correction are compile-time
// constants (they shape the kernel); eps is a runtime value.
std::optional<Value> Capturer::reduction(const CallExpr *c, ir::Op op) {
  const unsigned n = c->getNumArgs();
  llvm::SmallVector<ir::NodeId, 4> operands;
  llvm::SmallVector<int64_t, 2> dims;
  bool keepdim = false;
  auto x = operand(c->getArg(0));
  if (!x)
    return std::nullopt;
  operands.push_back(*x);
  switch (ir::op_info(op).form) {
  case ir::CompositeForm::NORM: {
    dims = {-1};
    // eps is a runtime scalar; rms_norm's negative one (the default, -1)
    // is x's machine epsilon, which decompose puts in per variant. The
    // weight and bias are optional: an undefined one is a constant the
    // decomposition's mul (1) or add (-0.0) drops, chosen per call by a
    // specialisation on `w.defined()`.
    for (unsigned i = 1; i < n; ++i) {
      if (i + 1 < n) {
        std::optional<bool> present = optional_tensor(c->getArg(i));
        if (!present)
          return std::nullopt;
        if (!*present) {
          bool is_bias = op == ir::Op::LayerNorm && i == 2;
          operands.push_back(
              st.b.constant(is_bias ? -0.0 : 1.0, DType::f64,
                            loc(c->getArg(i)->getBeginLoc())));
          st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
          continue;
        }
      }
      auto v = operand(c->getArg(i));
      if (!v)
        return std::nullopt;
      operands.push_back(*v);
    }
    break;
  }
  case ir::CompositeForm::ROWWISE: {
    auto d = dim_of(c->getArg(1), c->getArg(0));
    if (!d)
      return std::nullopt;
    dims = {*d};
    break;
  }
  default: // REDUCE and the reductions: sum, mean, amax, ..., var
    if (n >= 2) {
      auto d = dim_of(c->getArg(1), c->getArg(0));
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
      operands.push_back(st.b.constant(double(correction), DType::i64));
      st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
    }
    break;
  }
  if (ir::op_info(op).arity != int(operands.size()))
    return fail_value(c->getExprLoc(), "this form of " +
                                           quoted(c->getDirectCallee()) +
                                           " is not supported yet");
  ir::NodeId id = add_op(op, operands, c->getExprLoc());
  st.b.graph().nodes[id].dims = dims;
  st.b.graph().nodes[id].keepdim = keepdim;
  return Value::tensor(id, fresh_storage());
}

// Sees through temporaries, no-op casts and default arguments.
static const Expr *peel_temporaries(const Expr *e) {
  e = strip_noop(e, true, true);
  while (true) {
    if (const auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
      e = strip_noop(m->getSubExpr(), true, true);
    else if (const auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
      e = strip_noop(b->getSubExpr(), true, true);
    else if (const auto *d = dyn_cast<CXXDefaultArgExpr>(e)) // `= Tensor()`
      e = strip_noop(d->getExpr(), true, true);
    else if (const auto *w = dyn_cast<ExprWithCleanups>(e))
      e = strip_noop(w->getSubExpr(), true, true);
    else if (const auto *c = dyn_cast<CXXFunctionalCastExpr>(e);
             c && c->getCastKind() == CK_ConstructorConversion)
      e = strip_noop(c->getSubExpr(), true, true);
    else
      return e;
  }
}

bool undefined_tensor_expr(const Expr *e) {
  const auto *ce = dyn_cast<CXXConstructExpr>(peel_temporaries(e));
  return ce && ce->getNumArgs() == 0 && is_kiln_tensor(ce->getType());
}

// `obj.name()`, a call of obj's method of that name without parameters,
// made for a guard the region's start evaluates; null when there is none.
Expr *Capturer::method_call(const Expr *obj, llvm::StringRef name,
                            SourceLocation at) {
  const CXXRecordDecl *rd = obj->getType()->getAsCXXRecordDecl();
  const CXXMethodDecl *md = nullptr;
  if (rd)
    for (const NamedDecl *d : rd->lookup(&ctx_.Idents.get(name)))
      if (const auto *m = dyn_cast<CXXMethodDecl>(d); m && m->getNumParams() == 0)
        md = m;
  if (!md)
    return nullptr;
  auto *me = MemberExpr::CreateImplicit(
      ctx_, const_cast<Expr *>(obj), /*IsArrow=*/false,
      const_cast<CXXMethodDecl *>(md), ctx_.BoundMemberTy, VK_PRValue,
      OK_Ordinary);
  return CXXMemberCallExpr::Create(ctx_, me, {}, md->getReturnType(),
                                   VK_PRValue, at, FPOptionsOverride());
}

// Whether an optional tensor argument (a norm's weight or bias) is there:
// false for `Tensor()`, a decision on `t.defined()` for a tensor from
// outside the region, true otherwise (a tensor the region made is defined).
// nullopt: a failure, or a decision to make.
std::optional<bool> Capturer::optional_tensor(const Expr *arg) {
  if (undefined_tensor_expr(arg))
    return false; // Tensor(), kiln::Tensor{}
  const Expr *e = peel_temporaries(arg);
  if (!isa<DeclRefExpr, MemberExpr>(e) || !is_kiln_tensor(e->getType()))
    return true;
  std::optional<SlotId> id = lvalue_slot(e, /*quiet=*/true);
  if (failed())
    return std::nullopt;
  if (id)
    if (auto it = st.values.find(*id); it != st.values.end())
      // A `Tensor w;` not assigned yet, or a tensor the region assigned
      // or read (an input is guarded to be defined).
      return it->second.kind != Value::Undefined;
  if (!id)
    return true; // not a tensor from outside
  // `e.defined()`, made once per argument: decisions compare conditions by
  // identity, and the rewrite evaluates it at the region's start.
  Expr *&cond = defined_calls_[*id];
  if (!cond && !(cond = method_call(e, "defined", e->getEndLoc())))
    return true;
  std::string why;
  if (!guardable(cond, why))
    return true; // the tensor itself is read, and its guard says the rest
  return decided(cond);
}

// An argument of an op: a tensor, a C++ number, or a kiln::Operand made
// from either.
std::optional<ir::NodeId> Capturer::operand(const Expr *e) {
  if (is_kiln_class(e->getType(), "Operand")) {
    const Expr *x = peel(e, [](const CastExpr *y) {
      return y->getCastKind() == CK_NoOp ||
             y->getCastKind() == CK_ConstructorConversion;
    });
    const auto *ce = dyn_cast<CXXConstructExpr>(x);
    if (!ce || ce->getNumArgs() != 1 ||
        ce->getConstructor()->isCopyOrMoveConstructor())
      return fail_value(e->getBeginLoc(), "this kiln::Operand argument is not "
                                          "supported yet (pass a tensor or a "
                                          "number)");
    e = ce->getArg(0);
  }
  if (is_kiln_tensor(e->getType())) {
    std::optional<Value> v = tensor(e);
    if (!v)
      return std::nullopt;
    return v->node;
  }
  if (e->getType()->isArithmeticType() && scalar_kind(e->getType())) {
    std::optional<Value> v = scalar(e);
    if (!v)
      return std::nullopt;
    return materialize(*v, e->getExprLoc());
  }
  return fail_value(e->getBeginLoc(),
                    "operand of type '" +
                        e->getType().getAsString(ctx_.getPrintingPolicy()) +
                        "' is not supported yet");
}

std::optional<Value> Capturer::tensor_method(const CXXMemberCallExpr *c) {
  const CXXMethodDecl *m = c->getMethodDecl();
  llvm::StringRef name = m && m->getIdentifier() ? m->getName() : "";
  const Expr *obj = c->getImplicitObjectArgument();
  if ((name == "clone" || name == "contiguous") && c->getNumArgs() == 0) {
    std::optional<Value> v = tensor(obj);
    if (!v)
      return std::nullopt;
    if (name == "clone")
      return Value::tensor(v->node, fresh_storage());
    // A view may be laid out any way: a contiguous node, made on the host
    // as eager does (the view itself, or a copy).
    if (ir::is_view(st.b.graph().nodes[v->node].op))
      return view_method(c, ir::Op::Contiguous, v);
    // contiguous() returns its object when it is contiguous already, as
    // PyTorch's does: a tensor the region made is (ops write fresh
    // contiguous tensors), so it is the same tensor. One from outside may
    // be either: it keeps sharing the storage (an in-place update of
    // either name then stays eager), and is handed out as
    // `x.contiguous()`, which decides at run time.
    if (st.storages[v->storage].kind == Storage::Input) {
      v->contiguous = true;
      v->contiguous_of = strip_noop(obj, true, true);
    }
    return v;
  }
  if (name == "to" && c->getNumArgs() == 1 &&
      is_kiln_dtype(m->getParamDecl(0)->getType()))
    return to_dtype(c, obj);
  if (std::optional<ir::Op> op = ir::op_from_name(name);
      op && ir::is_view(*op) && *op != ir::Op::Contiguous)
    return view_method(c, *op);
  if (name == "item")
    return fail_value(c->getExprLoc(), "'item()' reads a tensor's data on the "
                                       "host (a data-dependent value), so it "
                                       "runs eagerly");
  return fail_value(c->getExprLoc(),
                    "call to " + quoted(m) + " is not supported yet");
}

// The elements of a braced shape or order argument (`x.view({B, T, -1})`:
// a kiln::Dims made from an initializer list), or none.
static std::optional<llvm::SmallVector<const Expr *, 8>>
braced_dims(const Expr *e) {
  e = e->IgnoreImplicit();
  while (const auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
    e = m->getSubExpr()->IgnoreImplicit();
  const auto *ce = dyn_cast<CXXConstructExpr>(e);
  if (!ce || ce->getNumArgs() != 1)
    return std::nullopt;
  const auto *il = dyn_cast<CXXStdInitializerListExpr>(
      ce->getArg(0)->IgnoreImplicit());
  if (!il)
    return std::nullopt;
  const Expr *sub = il->getSubExpr()->IgnoreImplicit();
  while (const auto *m = dyn_cast<MaterializeTemporaryExpr>(sub))
    sub = m->getSubExpr()->IgnoreImplicit();
  const auto *list = dyn_cast<InitListExpr>(sub);
  if (!list)
    return std::nullopt;
  llvm::SmallVector<const Expr *, 8> out(list->inits().begin(),
                                         list->inits().end());
  return out;
}

// A layout op (kiln/ops.def's KILN_VIEW): a node whose integer arguments
// are i64 scalar operands (sizes and slice bounds may be run-time values,
// `x.size(0)` or a parameter; dims are constants). The view shares its
// base's storage.
std::optional<Value> Capturer::view_method(const CXXMemberCallExpr *c,
                                           ir::Op op, std::optional<Value> x) {
  if (!x)
    x = tensor(c->getImplicitObjectArgument());
  if (!x)
    return std::nullopt;
  const std::string name = std::string("'") + ir::op_info(op).name + "'";
  // An argument updated in place gets its new value only when the region
  // copies it back: a view of it here would view a copy, not the argument.
  if (const Storage &base = st.storages[x->storage];
      base.kind == Storage::Input && st.copy_back.count(base.slot))
    return fail_value(c->getExprLoc(),
                      name + " of '" + slots_[base.slot].slot.name() +
                          "', updated in place in the same region, is not "
                          "supported yet");
  llvm::SmallVector<ir::NodeId, 8> operands{x->node};
  auto runtime_int = [&](const Expr *e) {
    std::optional<ir::NodeId> n = operand(e);
    if (n)
      operands.push_back(*n);
    return n.has_value();
  };
  // Dims of x (unsqueeze's counts in the result's rank, so only a constant).
  auto constant_dim = [&](const Expr *e) {
    std::optional<int64_t> d =
        ir::view_kind(op) == ViewKind::Unsqueeze
            ? constant_int(e, "dim")
            : dim_of(e, c->getImplicitObjectArgument());
    if (!d)
      return false;
    operands.push_back(int_constant(*d, e));
    return true;
  };
  auto each = [&](const Expr *arg, auto &&one) -> bool {
    std::optional<llvm::SmallVector<const Expr *, 8>> elems = braced_dims(arg);
    if (!elems)
      return fail(arg->getBeginLoc(),
                  "the shape or order of " + name +
                      " must be written in braces ({B, T, -1}) in a "
                      "compiled function");
    for (const Expr *e : *elems)
      if (!one(e))
        return false;
    return true;
  };
  bool ok = true;
  switch (ir::view_kind(op)) {
  case ViewKind::View:
  case ViewKind::Reshape:
  case ViewKind::Expand:
    ok = each(c->getArg(0), runtime_int);
    break;
  case ViewKind::Permute:
    ok = each(c->getArg(0), constant_dim);
    break;
  case ViewKind::Transpose:
    ok = constant_dim(c->getArg(0)) && constant_dim(c->getArg(1));
    break;
  case ViewKind::Unsqueeze:
  case ViewKind::Squeeze:
    ok = constant_dim(c->getArg(0));
    break;
  case ViewKind::Slice:
    ok = constant_dim(c->getArg(0)) && runtime_int(c->getArg(1)) &&
         runtime_int(c->getArg(2)) && runtime_int(c->getArg(3));
    break;
  case ViewKind::Contiguous:
    break;
  case ViewKind::Piece: // split's and chunk's elements (piece())
  case ViewKind::Part: // the compiler's (sink-cat), not a Tensor method
  case ViewKind::Broadcast: // the compiler's (sink-views)
    return std::nullopt;
  }
  if (!ok)
    return std::nullopt;
  ir::NodeId id = add_op(op, operands, c->getExprLoc());
  st.dclass.resize(st.b.graph().nodes.size(), DClass::Variant);
  st.dclass[id] = st.dclass[x->node];
  st.storages[x->storage].viewed = true;
  return Value::tensor(id, x->storage);
}

// `x.to(dtype)`: a constant dtype (kiln::f32, a constexpr variable) gives
// a `to` node; `x.to(y.dtype())` a `to_like` node that decompose resolves
// per variant. A to() of a variant-dtype tensor to another's dtype is the
// tensor itself.
std::optional<Value> Capturer::to_dtype(const CXXMemberCallExpr *c,
                                        const Expr *obj) {
  std::optional<Value> x = tensor(obj);
  if (!x)
    return std::nullopt;
  const Expr *arg = c->getArg(0);
  ir::NodeId n = -1;
  DClass dc = DClass::Int;
  const auto *dm = dyn_cast<CXXMemberCallExpr>(strip_noop(arg, true));
  if (dm && dm->getMethodDecl() && dm->getMethodDecl()->getIdentifier() &&
      dm->getMethodDecl()->getName() == "dtype" && dm->getNumArgs() == 0 &&
      is_kiln_tensor(dm->getImplicitObjectArgument()->getType())) {
    std::optional<Value> like = tensor(dm->getImplicitObjectArgument());
    if (!like)
      return std::nullopt;
    dc = st.dclass[like->node];
    if (dc == DClass::Variant && st.dclass[x->node] == DClass::Variant)
      return x;
    n = add_op(ir::Op::CastLike, {x->node, like->node}, c->getExprLoc());
  } else {
    std::optional<APValue> k = fold(arg);
    if (failed())
      return std::nullopt;
    if (!k || !k->isInt() || k->getInt().getZExtValue() >= kNumDTypes)
      return fail_value(arg->getBeginLoc(),
                        "the dtype of 'to' must be a compile-time constant "
                        "(kiln::f32) or 't.dtype()' of a tensor");
    DType to = static_cast<DType>(k->getInt().getZExtValue());
    n = add_cast(x->node, to, c->getExprLoc());
    dc = to == DType::b8 ? DClass::Bool : DClass::Fixed;
  }
  st.dclass[n] = dc;
  st.storages[x->storage].cast_shared = true;
  Storage s;
  s.cast_shared = true;
  s.cast_result = true;
  return Value::tensor(n, fresh_storage(s));
}

bool Capturer::assign_tensor(const Expr *lhs, const Expr *rhs,
                             SourceLocation at) {
  std::optional<SlotId> id = lvalue_slot(lhs, /*quiet=*/true);
  if (!id || !slots_[*id].tensor) {
    if (failed())
      return false;
    return fail(at, "assignment to this tensor expression is not supported "
                    "yet (a variable or a member is)");
  }
  // After an in-place update of an argument, `x = ...` rebinds x: the
  // tensor x named keeps the update (the fast path writes it there before
  // the rebinding) and x names the new value. Nothing else of the region
  // may name that tensor then, since its value would be handed out as a
  // new tensor, not as the argument.
  const bool rebinds = st.copy_back.count(*id) && !st.rebound.count(*id);
  const Value before = rebinds ? st.values.lookup(*id) : Value();
  auto named_elsewhere = [&](const Value &nv) {
    auto shares = [&](const Value &v) {
      return v.kind == Value::Tensor && v.storage == before.storage;
    };
    return shares(nv) || st.any_held([&](SlotId sid, const Value &v) {
             return sid != *id && shares(v);
           });
  };
  std::optional<Value> v;
  if (undefined_tensor_expr(rhs)) {
    // `t = Tensor()`: t is undefined from here on.
    v = Value();
    v->kind = Value::Undefined;
  } else if (!(v = tensor(rhs))) {
    return false;
  }
  if (rebinds) {
    if (named_elsewhere(*v))
      return fail(at, "assignment to '" + slots_[*id].slot.name() +
                          "' after an in-place update of it in the same "
                          "region, while another name holds the updated "
                          "tensor, is not supported yet");
    st.rebound[*id] = before;
  }
  write(*id, *v, true);
  return true;
}

// `c = x.contiguous()` with x from outside the region is x itself when x
// is contiguous and a copy otherwise: before an in-place update of c the
// region is specialised on `x.is_contiguous()` (evaluated at its start).
// Contiguous: every contiguous() of x is x, and c's update is x's. Not: c
// is a copy of its own (a fresh storage), unless another name holds a
// contiguous() of x, which may be c's copy or another one. False when the
// update cannot be captured (or a decision is needed: see failure).
bool Capturer::resolve_contiguous(SlotId id, Value &cur) {
  const SlotId arg = st.storages[cur.storage].slot;
  if (!cur.contiguous_of || arg < 0)
    return false;
  Expr *&cond = contiguous_calls_[arg];
  if (!cond && !(cond = method_call(cur.contiguous_of, "is_contiguous",
                                    cur.contiguous_of->getEndLoc())))
    return false;
  std::string why;
  if (!guardable(cond, why))
    return false;
  std::optional<bool> contiguous = decided(cond);
  if (!contiguous)
    return false;
  auto flagged = [&](const Value &v) {
    return v.kind == Value::Tensor && v.storage == cur.storage && v.contiguous;
  };
  if (*contiguous) {
    st.any_held([&](SlotId, Value &v) {
      if (flagged(v))
        v.contiguous = false;
      return false;
    });
    cur.contiguous = false;
    return true;
  }
  if (st.any_held([&](SlotId sid, const Value &v) { return sid != id && flagged(v); }))
    return false;
  cur = Value::tensor(cur.node, fresh_storage());
  st.values[id] = cur;
  return true;
}

// `dst.copy_(src)`, dst a tensor argument or a view of one (a cache
// updated in place: `cache.slice(2, pos, pos + 1).copy_(k)`): a store node
// (ir::Op::Store) that writes the argument's elements where the call
// runs, as eager does. From then on every name of the argument, and every
// view of it a name holds, is the store or a view of it, so what reads
// them runs after the write. Not captured (a region split, the copy_ runs
// eagerly): a copy_ into a tensor the region makes, into an argument the
// region updated with `+=` (its value is copied back at the end) or
// assigned, into a contiguous() or to() of one (a copy or the tensor
// itself), and a region that read the argument's elements before the
// copy_ (a kernel could run after the write).
bool Capturer::store_copy(const CXXMemberCallExpr *mc) {
  const Expr *obj = mc->getImplicitObjectArgument();
  const SourceLocation at = mc->getExprLoc();
  std::optional<Value> d = tensor(obj);
  if (!d)
    return false;
  if (d->kind != Value::Tensor)
    return fail(at, "copy_ into this value is not supported yet");
  const Storage storage = st.storages[d->storage];
  if (storage.kind != Storage::Input)
    return fail(at, "copy_ into a tensor the region makes is not supported "
                    "yet (into a tensor argument, or a view of one, it is)");
  const SlotId arg = storage.slot;
  const std::string name = slots_[arg].slot.name();
  if (st.copy_back.count(arg) || st.rebound.count(arg))
    return fail(at, "copy_ into '" + name + "', updated in place or assigned "
                    "earlier in the region, is not supported yet");
  if (d->contiguous || storage.cast_shared)
    return fail(at, "copy_ into a contiguous() or to() of '" + name +
                        "' (the tensor itself or a copy) is not supported yet");
  std::optional<ir::NodeId> src = operand(mc->getArg(0));
  if (!src)
    return false;
  if (st.dclass[*src] == DClass::Scalar)
    return fail(at, "copy_ of a number is not supported yet");
  // The argument as it is now: its node, or its last store.
  ir::NodeId root = -1;
  if (auto it = st.stored.find(arg); it != st.stored.end())
    root = it->second;
  else
    for (const State::Input &in : st.inputs)
      if (in.slot == arg)
        root = in.node;
  const std::vector<ir::Node> &nodes = st.b.graph().nodes;
  // The argument's elements as they are now: root and the views of it.
  std::vector<char> now(nodes.size(), 0);
  if (root >= 0)
    now[size_t(root)] = 1;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (ir::is_view(nodes[i].op) && now[size_t(nodes[i].operands[0])])
      now[i] = 1;
  if (root < 0 || !now[size_t(d->node)])
    return fail(at, "copy_ into this view of '" + name +
                        "' is not supported yet (a slice, view or other "
                        "layout op of it is)");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node &n = nodes[i];
    if (ir::is_view(n.op) || ir::op_info(n.op).kind == ir::OpKind::Shape)
      continue;
    for (ir::NodeId o : n.operands)
      if (now[size_t(o)])
        return fail(at, "copy_ into '" + name + "', whose elements the region "
                        "reads before it, is not supported yet (a kernel "
                        "reading them might run after the write)");
  }
  ir::NodeId s = add_op(ir::Op::Store, {root, d->node, *src}, at);
  st.dclass[s] = st.dclass[root];
  // Names of the argument's elements now name them after the write: the
  // store, and each view of the argument rebuilt on it.
  llvm::DenseMap<ir::NodeId, ir::NodeId> rebuilt{{root, s}};
  std::function<ir::NodeId(ir::NodeId)> rebase = [&](ir::NodeId x) {
    if (auto it = rebuilt.find(x); it != rebuilt.end())
      return it->second;
    const ir::Node n = st.b.graph().nodes[size_t(x)];
    llvm::SmallVector<ir::NodeId, 6> ops(n.operands.begin(), n.operands.end());
    ops[0] = rebase(ops[0]);
    ir::NodeId y = st.b.op(n.op, ops, n.loc);
    st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
    st.dclass[y] = st.dclass[x];
    rebuilt[x] = y;
    return y;
  };
  bool other = false;
  st.any_held([&](SlotId, Value &v) {
    if ((v.kind != Value::Tensor && v.kind != Value::Pieces) ||
        v.storage != d->storage)
      return false;
    if (v.node < 0 || size_t(v.node) >= now.size() || !now[size_t(v.node)]) {
      other = true;
      return true;
    }
    v.node = rebase(v.node);
    return false;
  });
  if (other)
    return fail(at, "copy_ into '" + name + "', whose storage another name "
                    "holds in a form other than a view, is not supported yet");
  st.stored[arg] = s;
  return true;
}

bool Capturer::inplace(const CXXOperatorCallExpr *oc) {
  // `x op= y` updates x with the op the table spells `op` (+= is add).
  std::optional<ir::Op> op = ir::op_from_operator(
      llvm::StringRef(getOperatorSpelling(oc->getOperator())).drop_back(), 2);
  const std::string what = std::string("in-place operator '") +
                           getOperatorSpelling(oc->getOperator()) + "'";
  if (!op)
    return fail(oc->getOperatorLoc(), what + " is not supported yet");
  std::optional<SlotId> id = lvalue_slot(oc->getArg(0), /*quiet=*/true);
  if (!id || !slots_[*id].tensor) {
    if (failed())
      return false;
    return fail(oc->getOperatorLoc(), what + " on this expression is not "
                                             "supported yet (on a variable "
                                             "or a member it is)");
  }
  std::optional<Value> cur = read(*id, oc->getArg(0)->getExprLoc());
  if (!cur)
    return false;
  if (cur->kind == Value::Undefined)
    return fail(oc->getOperatorLoc(), undefined_use(oc->getArg(0)));
  std::optional<ir::NodeId> rhs = operand(oc->getArg(1));
  if (!rhs)
    return false;
  const std::string name = slots_[*id].slot.name();
  if (cur->contiguous && !resolve_contiguous(*id, *cur))
    return failed() ? false
                    : fail(oc->getOperatorLoc(),
                           what + " on '" + name + "', a contiguous() of a "
                           "tensor from outside the region (that tensor or a "
                           "copy of it), is not supported yet");
  Storage storage = st.storages[cur->storage];
  if (storage.viewed)
    return fail(oc->getOperatorLoc(),
                what + " on '" + name + "', which shares its elements with a "
                "view (or is one), is not supported yet");
  if (storage.cast_shared)
    return fail(oc->getOperatorLoc(),
                what + " on '" + name + "', which may be one tensor with a "
                "to() of it or its source (to() returns its object when the "
                "dtypes agree), is not supported yet");
  // The result is converted to the updated tensor's dtype (to_into), as
  // eager does; where eager raises, decompose fails the variant and such
  // calls run the original body. Where both are of the variant's dtype,
  // or the operand is a number, this is the identity in the variants of
  // one floating dtype (decompose drops it), but not in a dtype profile's
  // variant, which may pin them apart (an i32 `t /= 2.0` raises).
  ir::NodeId m = add_op(*op, {cur->node, *rhs}, oc->getOperatorLoc());
  const DClass dc = st.dclass[cur->node];
  m = add_op(ir::Op::CastInto, {m, cur->node}, oc->getOperatorLoc());
  st.dclass[m] = dc;
  // Every name of the storage sees the update (handles share elements):
  // slots, bound names and closures' copies.
  // (Slots through write(), after the walk: it records the write.)
  auto update_names = [&] {
    llvm::SmallVector<SlotId, 4> sharing;
    st.any_held([&](SlotId sid, Value &v) {
      if (v.kind == Value::Tensor && v.storage == cur->storage) {
        if (sid >= 0)
          sharing.push_back(sid);
        else
          v.node = m;
      }
      return false;
    });
    for (SlotId sid : sharing)
      write(sid, Value::tensor(m, cur->storage), true);
  };
  switch (storage.kind) {
  case Storage::Fresh:
    update_names();
    return true;
  case Storage::Input: {
    // The tensor of an argument (or a handle of it: `Tensor t = x; t += 1;`
    // updates x's elements, as eager's handles share them): every name of
    // it sees the update, and the region writes it back into the
    // argument's tensor, which its slot must still name.
    const SlotId arg = storage.slot;
    auto held = st.values.find(arg);
    if (held == st.values.end() || held->second.kind != Value::Tensor ||
        held->second.storage != cur->storage || st.rebound.count(arg))
      return fail(oc->getOperatorLoc(),
                  what + " on '" + name + "', which shares its storage with '" +
                      slots_[arg].slot.name() +
                      "' from outside the region (now another tensor), is "
                      "not supported yet");
    update_names();
    st.copy_back.insert(arg);
    return true;
  }
  }
  return true;
}

// The tensors of a pair, tuple or aggregate value being constructed (or
// named, or returned by an inlined call).
std::optional<Value> Capturer::tuple(const Expr *e, unsigned arity) {
  const Expr *x = peel(e, [](const CastExpr *y) {
    return value_cast(y) && !isa<CXXStaticCastExpr>(y);
  });
  llvm::SmallVector<const Expr *, 4> parts;
  if (const auto *il = dyn_cast<InitListExpr>(x)) {
    if (il->getNumInits() == 1 && !is_kiln_tensor(il->getInit(0)->getType()) &&
        tensor_tuple_arity(il->getInit(0)->getType()) == arity)
      return tuple(il->getInit(0), arity);
    for (const Expr *i : il->inits())
      parts.push_back(i);
  } else if (const auto *ce = dyn_cast<CXXConstructExpr>(x)) {
    if (ce->getNumArgs() == 1 && ce->getConstructor()->isCopyOrMoveConstructor())
      return tuple(ce->getArg(0), arity);
    for (const Expr *a : ce->arguments())
      parts.push_back(a);
  } else if (const auto *c = dyn_cast<CallExpr>(x)) {
    const FunctionDecl *f = c->getDirectCallee();
    if (is_std_move(c))
      return tuple(c->getArg(0), arity);
    if (is_std_function(f, "make_pair") || is_std_function(f, "make_tuple")) {
      for (const Expr *a : c->arguments())
        parts.push_back(a);
    } else {
      std::optional<Value> v = call(c);
      if (!v)
        return std::nullopt;
      if (v->kind != Value::Tuple || v->elems.size() != arity)
        return fail_value(c->getExprLoc(), "expected a value of " +
                                               std::to_string(arity) +
                                               " tensors");
      return v;
    }
  } else if (const auto *dre = dyn_cast<DeclRefExpr>(x)) {
    std::optional<Value> v = name_value(dre);
    if (!v)
      return std::nullopt;
    if (v->kind != Value::Tuple || v->elems.size() != arity)
      return fail_value(dre->getLocation(), "expected a value of " +
                                                std::to_string(arity) +
                                                " tensors");
    return v;
  } else {
    return fail_value(x->getExprLoc(), "this construction of a returned value "
                                       "is not supported yet (braces, "
                                       "std::make_pair or std::make_tuple of "
                                       "tensors are)");
  }
  if (parts.size() != arity)
    return fail_value(x->getExprLoc(), "this construction of a returned value "
                                       "is not supported yet (one tensor per "
                                       "element)");
  Value t;
  t.kind = Value::Tuple;
  for (const Expr *p : parts) {
    if (isa<ImplicitValueInitExpr>(p))
      return fail_value(x->getExprLoc(), "an element left undefined is not "
                                         "supported yet");
    std::optional<Value> v = tensor(p);
    if (!v)
      return std::nullopt;
    t.elems.push_back(*v);
  }
  return t;
}

} // namespace kiln::plugin::capture
