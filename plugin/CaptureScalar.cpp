// Capture of scalars. A scalar is known at compile time (a constant, a
// loop counter, a local bound to constants) or a runtime value (a host
// scalar read at the region's start, and the arithmetic on it that the
// graph computes as C++ does). Known scalars fold with C++'s semantics
// (the operand type's width, signedness and rounding); they become graph
// constants only where a tensor op uses them.
#include "CaptureImpl.h"

#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <cmath>

namespace kiln::plugin::capture {

static const char *category_name(DType dt) {
  return dt == DType::b8 ? "bool" : dt == DType::i64 ? "integer" : "floating-point";
}

static QualType plain(QualType t) {
  return t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
}

std::optional<Value> Capturer::scalar(const Expr *e) {
  if (e->containsErrors())
    return silent_fail();
  if (std::optional<APValue> k = fold(e)) {
    Value v;
    v.kind = Value::Scalar;
    v.known = std::move(*k);
    v.type = plain(e->getType());
    return v;
  }
  if (failed())
    return std::nullopt;
  if (!scalar_kind(e->getType()))
    return fail_value(e->getExprLoc(),
                      "value of type '" +
                          e->getType().getAsString(ctx_.getPrintingPolicy()) +
                          "' is not supported yet");
  return runtime_scalar(e, scalar_dtype(e->getType()));
}

std::optional<ir::NodeId> Capturer::materialize(const Value &v,
                                                SourceLocation at) {
  if (v.kind != Value::Scalar)
    return fail_value(at, "internal error: not a scalar");
  if (!v.known) {
    return v.node;
  }
  DType dt = scalar_dtype(v.type);
  double d = 0;
  if (v.known->isInt()) {
    const llvm::APSInt &i = v.known->getInt();
    if (i.getBitWidth() > 64)
      return fail_value(at, "integer constant wider than 64 bits");
    d = i.isSigned() ? double(i.getSExtValue()) : double(i.getZExtValue());
  } else if (v.known->isFloat()) {
    llvm::APFloat f = v.known->getFloat();
    bool lost = false;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    d = f.convertToDouble();
  } else {
    return fail_value(at, "internal error: scalar constant of an unknown kind");
  }
  ir::NodeId n = st.b.constant(d, dt, loc(at));
  st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
  return n;
}

// A scalar expression as a graph node (a constant for a known value).
std::optional<ir::NodeId> Capturer::scalar_node(const Expr *e) {
  std::optional<Value> v = scalar(e);
  if (!v)
    return std::nullopt;
  return materialize(*v, e->getExprLoc());
}

// A runtime scalar: a scalar parameter, local or member, used at its own
// kind (int as int, floating as floating), arithmetic on such, the size of
// a tensor, or what an inlined call returns.
std::optional<Value> Capturer::runtime_scalar(const Expr *e, DType want) {
  if (std::optional<Value> v = scalar_arith(e, want); v || failed())
    return v;
  const Expr *s = e;
  while (true) {
    s = s->IgnoreParens();
    const auto *ce = dyn_cast<CastExpr>(s);
    if (!ce || !ce->getType()->isArithmeticType())
      break;
    CastKind k = ce->getCastKind();
    if (k == CK_IntegralToFloating || k == CK_FloatingToIntegral ||
        k == CK_IntegralToBoolean || k == CK_FloatingToBoolean) {
      // A conversion between kinds (int <-> double, to bool): a `to` node
      // on the weak scalar, which converts as C++ does (op_to).
      return converted(ce, scalar_dtype(ce->getType()), want);
    }
    // Conversions within a kind: the graph's weak scalars are i64, f64
    // and b8, so one that keeps every value (int to long, float to
    // double) is let through, and one that rounds or wraps is written as
    // C++ does it: a to(f32) or to(i32) of the same kind (narrowed()).
    if ((k == CK_IntegralCast || k == CK_FloatingCast) &&
        !exact_conversion(ce->getSubExpr()->getType(), ce->getType()))
      return narrowed(ce, want);
    if (k != CK_LValueToRValue && k != CK_NoOp && k != CK_IntegralCast &&
        k != CK_FloatingCast)
      break;
    s = ce->getSubExpr();
  }
  if (const auto *d = dyn_cast<CXXDefaultArgExpr>(s))
    return runtime_scalar(d->getExpr(), want);
  // A value bound to a `const T &` parameter (std::max's), and the full
  // expression holding such a temporary: the value itself.
  if (const auto *m = dyn_cast<MaterializeTemporaryExpr>(s))
    return runtime_scalar(m->getSubExpr(), want);
  if (const auto *w = dyn_cast<ExprWithCleanups>(s))
    return runtime_scalar(w->getSubExpr(), want);
  std::optional<Value> v;
  std::string what = "the value";
  if (const auto *dre = dyn_cast<DeclRefExpr>(s)) {
    v = name_value(dre);
    what = "'" + dre->getDecl()->getNameAsString() + "'";
  } else if (isa<MemberExpr>(s)) {
    std::optional<SlotId> id = lvalue_slot(s);
    if (!id)
      return std::nullopt;
    v = read(*id, s->getExprLoc());
    what = "'" + slots_[*id].slot.name() + "'";
  } else if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s);
             mc && is_kiln_tensor(mc->getImplicitObjectArgument()->getType())) {
    const CXXMethodDecl *m = mc->getMethodDecl();
    llvm::StringRef name = m && m->getIdentifier() ? m->getName() : "";
    if (name == "size" || name == "numel" || name == "dim" ||
        name == "stride") {
      // A shape query: evaluated where the region starts and passed in;
      // of a tensor the region computes, size(d) is a `size` node, which
      // the host reads from the shape it computes before the launches.
      std::string why;
      if (!guardable(mc, why)) {
        if ((name != "size" || mc->getNumArgs() != 1) && name != "numel")
          return fail_value(mc->getExprLoc(),
                            "'" + name.str() + "()' of a tensor the region "
                            "computes or changes is not supported yet (its "
                            "size(d) and numel() are)");
        return computed_size(mc);
      }
      v = Value();
      v->kind = Value::Scalar;
      v->node = entry_input(mc, DType::i64, name);
      v->type = plain(mc->getType());
    } else if (name == "item") {
      return fail_value(mc->getExprLoc(),
                        "'item()' reads a tensor's data on the host (a "
                        "data-dependent value), so it runs eagerly");
    } else {
      return fail_value(mc->getExprLoc(), "call to " + quoted(m) +
                                              " is not supported yet");
    }
    what = "'" + name.str() + "()'";
  } else if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s);
             mc && is_tensor_vector(mc->getImplicitObjectArgument()->getType())) {
    return fail_value(mc->getExprLoc(), "the number of pieces split() or "
                                        "chunk() returns is not captured yet");
  } else if (const auto *c = dyn_cast<CallExpr>(s)) {
    v = call(c);
  } else if (const auto *co = dyn_cast<ConditionalOperator>(s)) {
    return fail_value(co->getExprLoc(), "the conditional operator '?:' on a "
                                        "runtime value is not supported yet");
  } else {
    return fail_value(e->getExprLoc(),
                      "scalar expression is not supported yet (only "
                      "constants, scalar parameters, locals and members, "
                      "their arithmetic and tensor sizes)");
  }
  if (!v)
    return std::nullopt;
  if (v->kind != Value::Scalar)
    return fail_value(s->getExprLoc(), "expected a scalar value");
  if (v->known)
    return v; // e.g. an inlined call folded
  DType have = scalar_dtype(v->type);
  if (have != want)
    return fail_value(s->getExprLoc(), "conversion of " + what + " from " +
                                           category_name(have) + " to " +
                                           category_name(want) +
                                           " is not supported yet");
  return v;
}

ir::NodeId Capturer::entry_input(const Expr *e, DType dt,
                                 llvm::StringRef fallback) {
  for (const State::Input &in : st.inputs)
    if (in.expr == e)
      return in.node;
  std::string text =
      Lexer::getSourceText(CharSourceRange::getTokenRange(e->getSourceRange()),
                           ctx_.getSourceManager(), ctx_.getLangOpts())
          .str();
  ir::NodeId n = st.b.scalar_input(int(st.inputs.size()), dt,
                                   text.empty() ? fallback.str() : text,
                                   loc(e->getExprLoc()));
  st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
  st.inputs.push_back({-1, e, n});
  return n;
}

// t.size(d) or t.numel() of a tensor the region computes: a `size` node
// of t's graph value, with dims {d} (a compile-time constant: it names a
// dim of a known rank) or none (the number of elements).
std::optional<Value> Capturer::computed_size(const CXXMemberCallExpr *mc) {
  std::optional<int64_t> d;
  if (mc->getNumArgs() == 1) {
    d = dim_of(mc->getArg(0), mc->getImplicitObjectArgument(), "dim of size()");
    if (!d)
      return std::nullopt;
  }
  std::optional<Value> t = tensor(mc->getImplicitObjectArgument());
  if (!t)
    return std::nullopt;
  Value v;
  v.kind = Value::Scalar;
  v.node = add_op(ir::Op::Size, {t->node}, mc->getExprLoc());
  if (d)
    st.b.graph().nodes[v.node].dims = {*d};
  v.type = plain(mc->getType());
  return v;
}

// Whether converting a `from` to a `to` keeps every value (both
// integral, or both floating).
bool Capturer::exact_conversion(QualType from, QualType to) const {
  from = plain(from);
  to = plain(to);
  if (to->isRealFloatingType())
    return from->isRealFloatingType() &&
           ctx_.getTypeSize(to) >= ctx_.getTypeSize(from);
  if (!from->isIntegralOrEnumerationType() || !to->isIntegralOrEnumerationType())
    return false;
  unsigned fw = ctx_.getIntWidth(from), tw = ctx_.getIntWidth(to);
  bool fs = from->isSignedIntegerOrEnumerationType(),
       ts = to->isSignedIntegerOrEnumerationType();
  if (fs == ts)
    return tw >= fw;
  return !fs && ts && tw > fw; // unsigned into a wider signed type
}

// A conversion that rounds (double to float) or wraps (to a 32-bit int):
// a to(f32) or to(i32) of the graph's f64 or i64 value, which converts as
// static_cast does and keeps the kind. Others (to unsigned, to 8 or 16
// bits) are refused.
std::optional<Value> Capturer::narrowed(const CastExpr *ce, DType want) {
  QualType to = plain(ce->getType());
  if (to->isIntegerType() && !to->isBooleanType() &&
      !(to->isSignedIntegerType() && ctx_.getIntWidth(to) == 32))
    return wrapped(ce, want);
  std::optional<DType> through = narrowing_dtype(ce->getType(), ce->getExprLoc());
  if (!through)
    return std::nullopt;
  return converted(ce, *through, want);
}

// A conversion to an integer type that wraps (to unsigned, to 8 or 16
// bits, between 64-bit signed and unsigned). C++20 defines it: the value
// modulo 2^N in the type's range. The graph's integers are int64, so for
// N < 64 it is C++'s `%` twice and a shift into the range, exact for every
// int64; to 64 bits, where the graph cannot hold every result, only a
// value the graph knows is never negative (a size, numel(), dim(), an
// unsigned value) converts, as itself.
std::optional<Value> Capturer::wrapped(const CastExpr *ce, DType want) {
  QualType to = plain(ce->getType());
  std::optional<ir::NodeId> xn = scalar_node(ce->getSubExpr());
  if (!xn)
    return std::nullopt;
  if (want != DType::i64)
    return fail_value(ce->getExprLoc(), "conversion to an integer type used "
                                        "as a non-integer is not supported "
                                        "yet");
  Value r;
  r.kind = Value::Scalar;
  r.type = to;
  const std::string type_name =
      ce->getType().getNonReferenceType().getUnqualifiedType().getAsString(
          ctx_.getPrintingPolicy());
  const unsigned w = ctx_.getIntWidth(to);
  if (w >= 64) {
    if (!nonnegative(*xn))
      return fail_value(ce->getExprLoc(),
                        "conversion of a runtime scalar that may be negative "
                        "to '" + type_name + "' is not supported yet (of "
                        "sizes, numel(), dim() and other values known not to "
                        "be negative it is)");
    r.node = *xn;
    return r;
  }
  const SourceLocation at = ce->getExprLoc();
  auto constant = [&](double v) {
    ir::NodeId n = st.b.constant(v, DType::i64, loc(at));
    st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
    return n;
  };
  const double m = std::ldexp(1.0, int(w));
  const bool is_signed = to->isSignedIntegerType();
  // x % m is in (-m, m); adding m (and m/2 for a signed type) makes it
  // positive and congruent, so a second % lands in [0, m).
  ir::NodeId rem = add_op(ir::Op::Fmod, {*xn, constant(m)}, at);
  ir::NodeId up = add_op(ir::Op::Add, {rem, constant(is_signed ? m + m / 2 : m)}, at);
  r.node = add_op(ir::Op::Fmod, {up, constant(m)}, at);
  if (is_signed)
    r.node = add_op(ir::Op::Sub, {r.node, constant(m / 2)}, at);
  else
    st.nonnegative.insert(r.node);
  return r;
}

// Whether a runtime integer scalar of the graph is never negative: sizes,
// numel() and dim(), unsigned values, and + * / % of such.
bool Capturer::nonnegative(ir::NodeId id) const {
  if (st.nonnegative.count(id))
    return true;
  const ir::Node &n = const_cast<ir::GraphBuilder &>(st.b).graph().nodes[id];
  auto all = [&] {
    return llvm::all_of(n.operands, [&](ir::NodeId o) { return nonnegative(o); });
  };
  switch (n.op) {
  case ir::Op::Constant:
    return n.constant >= 0;
  case ir::Op::Size:
    return true;
  case ir::Op::ScalarInput:
    for (const State::Input &in : st.inputs) {
      if (in.node != id)
        continue;
      if (const auto *mc = dyn_cast_or_null<CXXMemberCallExpr>(in.expr)) {
        const CXXMethodDecl *m = mc->getMethodDecl();
        return m && m->getIdentifier() &&
               (m->getName() == "size" || m->getName() == "numel" ||
                m->getName() == "dim");
      }
      if (in.slot >= 0)
        return slots_[in.slot].type->isUnsignedIntegerType();
    }
    return false;
  case ir::Op::Add:
  case ir::Op::Mul:
  case ir::Op::TruncDiv:
    return all();
  case ir::Op::Fmod: // C++'s %: the dividend's sign
    return nonnegative(n.operands[0]);
  case ir::Op::Cast:
    return n.cast_to == DType::i64 && nonnegative(n.operands[0]);
  default:
    return false;
  }
}

// The dtype a runtime scalar goes through to become a `to` (f32 for a
// float, i32 for a 32-bit int); a failure for other narrow types.
std::optional<DType> Capturer::narrowing_dtype(QualType to, SourceLocation at) {
  QualType t = plain(to);
  if (is_float_type(t))
    return DType::f32;
  if (t->isSignedIntegerType() && ctx_.getIntWidth(t) == 32)
    return DType::i32;
  fail(at, "conversion of a runtime scalar to '" +
               to.getNonReferenceType().getUnqualifiedType().getAsString(
                   ctx_.getPrintingPolicy()) +
               "' is not supported yet (it may wrap or round; to float, "
               "double, int32 or int64 it is)");
  return std::nullopt;
}

// A `to` node of the cast's operand into `cast_to`, converting as op_to
// (static_cast) does; its value has the kind of the cast's type, which
// must be `want`.
std::optional<Value> Capturer::converted(const CastExpr *ce, DType cast_to,
                                         DType want) {
  std::optional<ir::NodeId> xn = scalar_node(ce->getSubExpr());
  if (!xn)
    return std::nullopt;
  QualType to = plain(ce->getType());
  if (scalar_dtype(to) != want)
    return fail_value(ce->getExprLoc(),
                      std::string("conversion from ") +
                          category_name(scalar_dtype(to)) + " to " +
                          category_name(want) + " is not supported yet");
  Value r;
  r.kind = Value::Scalar;
  r.node = add_cast(*xn, cast_to, ce->getExprLoc());
  r.type = to;
  return r;
}

bool Capturer::exact_host_type(QualType t) const {
  return t->isSpecificBuiltinType(BuiltinType::Double) ||
         (t->isSignedIntegerType() && ctx_.getTypeSize(t) >= 32 &&
          !t->isEnumeralType());
}

// The table's ops that C++'s arithmetic operators spell (+ - * /, unary
// -): the graph computes them on weak scalars as C++ does, within the
// limits scalar_arith checks.
static bool is_scalar_arith(ir::Op op) {
  return *ir::op_info(op).cxx && ir::op_info(op).rule != ir::TypeRule::COMPARE;
}

// + - * / of runtime scalars, as graph ops on weak scalars (/ of integers
// is trunc_div: C++ rounds toward zero). Only where the graph computes what
// C++ does: the result is a double, a float or a signed integer (unsigned
// wraps), and promotion in the graph gives the C++ result's kind. A float
// result is the op on its operands converted to float (an integer operand
// rounds as C++ converts it), rounded to float: + - * / of two floats
// computed in double and rounded once to float give C++'s float result
// exactly (double has more than 2 x 24 + 2 bits, so the double rounding is
// innocuous).
std::optional<Value> Capturer::scalar_arith(const Expr *e, DType want) {
  const Expr *x = e->IgnoreParens();
  ir::Op op;
  llvm::SmallVector<const Expr *, 2> operands;
  if (const auto *bo = dyn_cast<BinaryOperator>(x)) {
    // The op the table spells with this C++ operator (kiln/ops.def).
    std::optional<ir::Op> found =
        ir::op_from_operator(bo->getOpcodeStr(), 2);
    if (bo->isLogicalOp() ||
        (found && ir::op_info(*found).rule == ir::TypeRule::COMPARE))
      return fail_value(bo->getOperatorLoc(),
                        "comparison of runtime scalars is not supported yet "
                        "outside an 'if' condition");
    if (!found || !is_scalar_arith(*found))
      return std::nullopt;
    op = *found;
    operands = {bo->getLHS(), bo->getRHS()};
  } else if (const auto *uo = dyn_cast<UnaryOperator>(x);
             uo && (uo->getOpcode() == UO_Minus || uo->getOpcode() == UO_Plus)) {
    if (uo->getOpcode() == UO_Plus)
      return scalar(uo->getSubExpr());
    op = *ir::op_from_operator(UnaryOperator::getOpcodeStr(UO_Minus), 1);
    operands = {uo->getSubExpr()};
  } else {
    return std::nullopt;
  }
  QualType t = plain(x->getType());
  bool is_double = t->isSpecificBuiltinType(BuiltinType::Double);
  bool is_float = is_float_type(t);
  if (!exact_host_type(t) && !is_float)
    return fail_value(x->getExprLoc(),
                      "arithmetic on runtime scalars of type '" +
                          t.getAsString(ctx_.getPrintingPolicy()) +
                          "' is not supported yet (use double, float or a "
                          "signed integer)");
  // C++'s `/` on integers rounds toward zero: trunc_div's formula.
  if (op == ir::Op::Div && !is_double && !is_float)
    op = ir::Op::TruncDiv;
  llvm::SmallVector<ir::NodeId, 2> ids;
  int category = 0; // the kind the graph promotes to: b8 < i64 < f64
  for (const Expr *o : operands) {
    // The usual arithmetic conversions are redone by the graph's promotion.
    const Expr *inner = o;
    while (const auto *ic = dyn_cast<ImplicitCastExpr>(inner->IgnoreParens())) {
      CastKind k = ic->getCastKind();
      if (k != CK_IntegralToFloating && k != CK_IntegralCast &&
          k != CK_FloatingCast)
        break;
      inner = ic->getSubExpr();
    }
    std::optional<Value> v = scalar(inner);
    if (!v)
      return std::nullopt;
    std::optional<ir::NodeId> id = materialize(*v, inner->getExprLoc());
    if (!id)
      return std::nullopt;
    category = std::max(category, dtype_category(scalar_dtype(inner->getType())));
    if (is_float && !is_float_type(inner->getType()))
      id = add_cast(*id, DType::f32, inner->getExprLoc());
    ids.push_back(*id);
  }
  if (category != dtype_category(want))
    return fail_value(x->getExprLoc(),
                      "arithmetic on bool scalars is not supported yet");
  Value r;
  r.kind = Value::Scalar;
  r.node = add_op(op, ids, x->getExprLoc());
  if (is_float)
    r.node = add_cast(r.node, DType::f32, x->getExprLoc());
  r.type = t;
  return r;
}

// The new value of the variable an assignment, compound assignment or
// increment writes.
std::optional<Value> Capturer::scalar_assign(const Expr *e) {
  QualType lhs_t;
  if (const auto *bo = dyn_cast<BinaryOperator>(e))
    lhs_t = plain(bo->getLHS()->getType());
  else
    lhs_t = plain(cast<UnaryOperator>(e)->getSubExpr()->getType());
  auto result = [&](std::optional<APValue> k) -> std::optional<Value> {
    if (!k)
      return fail_value(e->getExprLoc(), "this update overflows or is "
                                         "undefined at compile time");
    Value v;
    v.kind = Value::Scalar;
    v.known = std::move(*k);
    v.type = lhs_t;
    return v;
  };
  auto runtime = [&](ir::Op op, const Value &a, const Value &b,
                     QualType op_t) -> std::optional<Value> {
    op_t = plain(op_t);
    bool is_double = op_t->isSpecificBuiltinType(BuiltinType::Double);
    bool is_float = is_float_type(op_t);
    bool is_signed_int = op_t->isSignedIntegerType() &&
                         ctx_.getTypeSize(op_t) >= 32;
    if ((!is_double && !is_float && !is_signed_int) ||
        scalar_dtype(op_t) != scalar_dtype(lhs_t))
      return fail_value(e->getExprLoc(),
                        "update of a runtime scalar of type '" +
                            lhs_t.getAsString(ctx_.getPrintingPolicy()) +
                            "' is not supported yet");
    if (op == ir::Op::Div && !is_double && !is_float) // C++'s: toward zero
      op = ir::Op::TruncDiv;
    std::optional<ir::NodeId> x = materialize(a, e->getExprLoc());
    std::optional<ir::NodeId> y = materialize(b, e->getExprLoc());
    if (!x || !y)
      return std::nullopt;
    // In float (scalar_arith says why this is C++'s result): the operands
    // converted to float first; the result of a double operation stored
    // into a float variable rounds to float.
    if (is_float && !is_float_type(a.type))
      x = add_cast(*x, DType::f32, e->getExprLoc());
    if (is_float && !is_float_type(b.type))
      y = add_cast(*y, DType::f32, e->getExprLoc());
    Value v;
    v.kind = Value::Scalar;
    v.node = add_op(op, {*x, *y}, e->getExprLoc());
    if (is_float_type(lhs_t))
      v.node = add_cast(v.node, DType::f32, e->getExprLoc());
    v.type = lhs_t;
    return v;
  };

  if (const auto *u = dyn_cast<UnaryOperator>(e)) {
    std::optional<Value> cur = scalar(u->getSubExpr());
    if (!cur)
      return std::nullopt;
    bool up = u->isIncrementOp();
    Value one;
    one.kind = Value::Scalar;
    one.type = lhs_t;
    if (lhs_t->isRealFloatingType())
      one.known = APValue(llvm::APFloat(ctx_.getFloatTypeSemantics(lhs_t), 1));
    else if (lhs_t->isIntegerType() && !lhs_t->isBooleanType())
      one.known = APValue(llvm::APSInt(llvm::APInt(ctx_.getIntWidth(lhs_t), 1),
                                       !lhs_t->isSignedIntegerType()));
    else
      return fail_value(e->getExprLoc(), "increment of this type is not "
                                         "supported yet");
    if (cur->known)
      return result(fold_binary(up ? BO_Add : BO_Sub, *cur->known, *one.known,
                                lhs_t, lhs_t));
    return runtime(up ? ir::Op::Add : ir::Op::Sub, *cur, one, lhs_t);
  }
  const auto *bo = cast<BinaryOperator>(e);
  if (bo->getOpcode() == BO_Assign) {
    std::optional<Value> v = scalar(bo->getRHS());
    if (!v)
      return std::nullopt;
    v->type = lhs_t;
    return v;
  }
  const auto *ca = cast<CompoundAssignOperator>(bo);
  std::optional<Value> cur = scalar(bo->getLHS());
  std::optional<Value> rhs = cur ? scalar(bo->getRHS()) : std::nullopt;
  if (!cur || !rhs)
    return std::nullopt;
  BinaryOperatorKind op = BinaryOperator::getOpForCompoundAssignment(
      bo->getOpcode());
  QualType op_t = ca->getComputationLHSType();
  QualType res_t = ca->getComputationResultType();
  if (cur->known && rhs->known) {
    std::optional<APValue> a = convert(*cur->known, lhs_t, op_t);
    std::optional<APValue> b =
        op == BO_Shl || op == BO_Shr
            ? rhs->known
            : convert(*rhs->known, bo->getRHS()->getType(), op_t);
    if (!a || !b)
      return result(std::nullopt);
    std::optional<APValue> r = fold_binary(op, *a, *b, op_t, res_t);
    if (!r)
      return result(std::nullopt);
    return result(convert(*r, res_t, lhs_t));
  }
  std::optional<ir::Op> gop =
      ir::op_from_operator(BinaryOperator::getOpcodeStr(op), 2);
  if (!gop || !is_scalar_arith(*gop))
    return fail_value(bo->getOperatorLoc(),
                      "this update of a runtime scalar is not supported yet");
  std::optional<Value> v = runtime(*gop, *cur, *rhs, res_t);
  if (!v || exact_conversion(res_t, lhs_t))
    return v;
  // Stored back into a narrower variable (an int32_t += an int64_t, a
  // float += a double): converted as the assignment does.
  std::optional<DType> through =
      narrowing_dtype(bo->getLHS()->getType(), bo->getOperatorLoc());
  if (!through)
    return std::nullopt;
  v->node = add_cast(v->node, *through, bo->getOperatorLoc());
  return v;
}

} // namespace kiln::plugin::capture
