// Compile-time scalars: folding with C++'s semantics (the operand type's
// width and signedness, overflow and division by zero left unfolded, IEEE
// rounding in the operand's format), over constants and the scalars the
// region knows (loop counters, locals bound to constants).
#include "CaptureImpl.h"

#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

namespace kiln::plugin::capture {

static QualType plain(QualType t) {
  return t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
}

std::optional<APValue> Capturer::convert(const APValue &v, QualType from,
                                         QualType to) {
  to = plain(to);
  if (to->isBooleanType()) {
    bool b = v.isInt() ? v.getInt().getBoolValue()
                       : v.isFloat() && !v.getFloat().isZero();
    return APValue(llvm::APSInt(llvm::APInt(1, b), true));
  }
  if (to->isIntegerType()) {
    unsigned w = ctx_.getIntWidth(to);
    bool is_unsigned = !to->isSignedIntegerOrEnumerationType();
    if (v.isInt()) {
      llvm::APSInt r = v.getInt().extOrTrunc(w);
      r.setIsUnsigned(is_unsigned);
      return APValue(r);
    }
    if (v.isFloat()) {
      llvm::APSInt r(w, is_unsigned);
      bool exact = false;
      if (v.getFloat().convertToInteger(r, llvm::APFloat::rmTowardZero,
                                        &exact) &
          llvm::APFloat::opInvalidOp)
        return std::nullopt; // out of range: undefined in C++
      return APValue(r);
    }
    return std::nullopt;
  }
  if (to->isRealFloatingType()) {
    const llvm::fltSemantics &sem = ctx_.getFloatTypeSemantics(to);
    if (v.isInt()) {
      llvm::APFloat f(sem);
      f.convertFromAPInt(v.getInt(), v.getInt().isSigned(),
                         llvm::APFloat::rmNearestTiesToEven);
      return APValue(f);
    }
    if (v.isFloat()) {
      llvm::APFloat f = v.getFloat();
      bool lost = false;
      f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
      return APValue(f);
    }
  }
  (void)from;
  return std::nullopt;
}

static APValue bool_value(bool b) {
  return APValue(llvm::APSInt(llvm::APInt(1, b), true));
}

std::optional<APValue> Capturer::fold_binary(BinaryOperatorKind op,
                                             const APValue &a, const APValue &b,
                                             QualType operands, QualType result) {
  (void)operands;
  (void)result;
  if (a.isInt() && b.isInt()) {
    const llvm::APSInt &x = a.getInt(), &y = b.getInt();
    bool is_signed = x.isSigned();
    bool ov = false;
    llvm::APInt r;
    auto same = [&]() { return x.getBitWidth() == y.getBitWidth(); };
    switch (op) {
    case BO_Add:
      if (!same())
        return std::nullopt;
      r = is_signed ? x.sadd_ov(y, ov) : x + y;
      break;
    case BO_Sub:
      if (!same())
        return std::nullopt;
      r = is_signed ? x.ssub_ov(y, ov) : x - y;
      break;
    case BO_Mul:
      if (!same())
        return std::nullopt;
      r = is_signed ? x.smul_ov(y, ov) : x * y;
      break;
    case BO_Div:
    case BO_Rem:
      if (!same() || y.isZero())
        return std::nullopt;
      if (is_signed) {
        (void)x.sdiv_ov(y, ov);
        r = op == BO_Div ? x.sdiv(y) : x.srem(y);
      } else {
        r = op == BO_Div ? x.udiv(y) : x.urem(y);
      }
      break;
    case BO_Shl:
    case BO_Shr: {
      if (y.isSigned() && y.isNegative())
        return std::nullopt;
      uint64_t n = y.getLimitedValue();
      if (n >= x.getBitWidth())
        return std::nullopt;
      r = op == BO_Shl ? x.shl(unsigned(n))
                       : (is_signed ? x.ashr(unsigned(n)) : x.lshr(unsigned(n)));
      break;
    }
    case BO_And:
      r = x & y;
      break;
    case BO_Or:
      r = x | y;
      break;
    case BO_Xor:
      r = x ^ y;
      break;
    case BO_LT:
      return bool_value(x < y);
    case BO_GT:
      return bool_value(x > y);
    case BO_LE:
      return bool_value(x <= y);
    case BO_GE:
      return bool_value(x >= y);
    case BO_EQ:
      return bool_value(x == y);
    case BO_NE:
      return bool_value(x != y);
    default:
      return std::nullopt;
    }
    if (ov)
      return std::nullopt; // signed overflow: undefined in C++
    return APValue(llvm::APSInt(r, !is_signed));
  }
  if (a.isFloat() && b.isFloat()) {
    llvm::APFloat x = a.getFloat();
    const llvm::APFloat &y = b.getFloat();
    if (&x.getSemantics() != &y.getSemantics())
      return std::nullopt;
    auto rm = llvm::APFloat::rmNearestTiesToEven;
    llvm::APFloat::cmpResult c = x.compare(y);
    switch (op) {
    case BO_Add:
      x.add(y, rm);
      return APValue(x);
    case BO_Sub:
      x.subtract(y, rm);
      return APValue(x);
    case BO_Mul:
      x.multiply(y, rm);
      return APValue(x);
    case BO_Div:
      x.divide(y, rm);
      return APValue(x);
    case BO_LT:
      return bool_value(c == llvm::APFloat::cmpLessThan);
    case BO_GT:
      return bool_value(c == llvm::APFloat::cmpGreaterThan);
    case BO_LE:
      return bool_value(c == llvm::APFloat::cmpLessThan ||
                        c == llvm::APFloat::cmpEqual);
    case BO_GE:
      return bool_value(c == llvm::APFloat::cmpGreaterThan ||
                        c == llvm::APFloat::cmpEqual);
    case BO_EQ:
      return bool_value(c == llvm::APFloat::cmpEqual);
    case BO_NE:
      return bool_value(c != llvm::APFloat::cmpEqual);
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The value of a condition that may update known scalars on the way.
std::optional<APValue> Capturer::fold_effects(const Expr *e) {
  effects_ = true;
  std::optional<APValue> v = fold(e);
  effects_ = false;
  return v;
}

// ++i, i--, i += k, i = k inside a condition, on a known scalar: the
// update happens (it cannot be replayed after the region) and the value
// is the expression's.
std::optional<APValue> Capturer::fold_update(const Expr *e) {
  const Expr *lhs = isa<UnaryOperator>(e) ? cast<UnaryOperator>(e)->getSubExpr()
                                          : cast<BinaryOperator>(e)->getLHS();
  std::optional<SlotId> id = lvalue_slot(lhs, /*quiet=*/true);
  if (!id || slots_[*id].tensor)
    return std::nullopt;
  auto it = st.values.find(*id);
  if (it == st.values.end() || !it->second.known)
    return std::nullopt;
  APValue old = *it->second.known;
  if (const auto *b = dyn_cast<BinaryOperator>(e))
    if (!fold(b->getRHS()))
      return std::nullopt;
  effects_ = false;
  std::optional<Value> v = scalar_assign(e);
  effects_ = true;
  if (!v || !v->known)
    return std::nullopt;
  write(*id, *v, /*replayable=*/false);
  const auto *u = dyn_cast<UnaryOperator>(e);
  return u && u->isPostfix() ? old : *v->known;
}

// The value of `e` if it is known now; never fails loudly and changes
// nothing (but see fold_effects).
std::optional<APValue> Capturer::fold(const Expr *e) {
  if (e->containsErrors() || e->isValueDependent() || e->isTypeDependent())
    return std::nullopt;
  e = e->IgnoreParens();
  if (!e->getType()->isArithmeticType() && !e->getType()->isEnumeralType() &&
      !e->getType()->isReferenceType())
    if (!isa<DeclRefExpr, MemberExpr>(e))
      return std::nullopt;
  {
    Expr::EvalResult r;
    if (!isa<DeclRefExpr>(e) && e->EvaluateAsRValue(r, ctx_) &&
        !r.HasSideEffects && (r.Val.isInt() || r.Val.isFloat()))
      return r.Val;
  }
  if (const auto *ce = dyn_cast<ConstantExpr>(e))
    return fold(ce->getSubExpr());
  if (const auto *d = dyn_cast<CXXDefaultArgExpr>(e))
    return fold(d->getExpr());
  if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
    const ValueDecl *d = dre->getDecl();
    if (isa<EnumConstantDecl>(d))
      return APValue(cast<EnumConstantDecl>(d)->getInitVal());
    const Frame &fr = frames_.back();
    if (dre->refersToEnclosingVariableOrCapture() && fr.closure >= 0) {
      auto it = st.closures[fr.closure].copies.find(d);
      if (it != st.closures[fr.closure].copies.end())
        return it->second.known;
    }
    if (auto it = st.names.find(d); it != st.names.end())
      return it->second.known;
    if (std::optional<SlotId> id = var_slot(d, dre->getLocation()))
      if (auto it = st.values.find(*id); it != st.values.end())
        return it->second.known;
    // A constant the evaluator knows (a const variable with a constant
    // initialiser, not one the region assigns).
    Expr::EvalResult r;
    if (e->EvaluateAsRValue(r, ctx_) && !r.HasSideEffects &&
        (r.Val.isInt() || r.Val.isFloat()))
      return r.Val;
    return std::nullopt;
  }
  if (isa<MemberExpr>(e)) {
    if (std::optional<SlotId> id = lvalue_slot(e, /*quiet=*/true))
      if (auto it = st.values.find(*id); it != st.values.end())
        return it->second.known;
    return std::nullopt;
  }
  if (const auto *ce = dyn_cast<CastExpr>(e)) {
    if (isa<ImplicitCastExpr>(ce) || isa<CStyleCastExpr>(ce) ||
        isa<CXXStaticCastExpr>(ce) || isa<CXXFunctionalCastExpr>(ce)) {
      switch (ce->getCastKind()) {
      case CK_LValueToRValue:
      case CK_NoOp:
        return fold(ce->getSubExpr());
      case CK_IntegralCast:
      case CK_IntegralToBoolean:
      case CK_IntegralToFloating:
      case CK_FloatingToIntegral:
      case CK_FloatingToBoolean:
      case CK_FloatingCast: {
        std::optional<APValue> v = fold(ce->getSubExpr());
        if (!v)
          return std::nullopt;
        return convert(*v, ce->getSubExpr()->getType(), ce->getType());
      }
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
  if (const auto *u = dyn_cast<UnaryOperator>(e)) {
    if (u->isIncrementDecrementOp())
      return effects_ ? fold_update(u) : std::nullopt;
    std::optional<APValue> v;
    switch (u->getOpcode()) {
    case UO_Plus:
      return fold(u->getSubExpr());
    case UO_Minus:
      if (!(v = fold(u->getSubExpr())))
        return std::nullopt;
      if (v->isFloat()) {
        llvm::APFloat f = v->getFloat();
        f.changeSign();
        return APValue(f);
      }
      if (v->isInt()) {
        const llvm::APSInt &x = v->getInt();
        if (x.isSigned() && x.isMinSignedValue())
          return std::nullopt;
        return APValue(llvm::APSInt(-x, x.isUnsigned()));
      }
      return std::nullopt;
    case UO_Not:
      if (!(v = fold(u->getSubExpr())) || !v->isInt())
        return std::nullopt;
      return APValue(llvm::APSInt(~v->getInt(), v->getInt().isUnsigned()));
    case UO_LNot:
      if (!(v = fold(u->getSubExpr())))
        return std::nullopt;
      return bool_value(!(v->isInt() ? v->getInt().getBoolValue()
                                     : !v->getFloat().isZero()));
    default:
      return std::nullopt;
    }
  }
  if (const auto *b = dyn_cast<BinaryOperator>(e)) {
    if (b->isAssignmentOp())
      return effects_ && scalar_kind(b->getLHS()->getType()) ? fold_update(b)
                                                            : std::nullopt;
    if (b->getOpcode() == BO_Comma)
      return std::nullopt;
    std::optional<APValue> l = fold(b->getLHS());
    if (!l)
      return std::nullopt;
    if (b->getOpcode() == BO_LAnd || b->getOpcode() == BO_LOr) {
      bool lv = l->isInt() ? l->getInt().getBoolValue() : !l->getFloat().isZero();
      if (b->getOpcode() == BO_LAnd ? !lv : lv)
        return bool_value(lv);
      std::optional<APValue> r = fold(b->getRHS());
      if (!r)
        return std::nullopt;
      return bool_value(r->isInt() ? r->getInt().getBoolValue()
                                   : !r->getFloat().isZero());
    }
    std::optional<APValue> r = fold(b->getRHS());
    if (!r)
      return std::nullopt;
    return fold_binary(b->getOpcode(), *l, *r, b->getLHS()->getType(),
                       b->getType());
  }
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e);
      mc && is_tensor_vector(mc->getImplicitObjectArgument()->getType())) {
    // size() and empty() of a std::vector of tensors the region builds:
    // its length is known.
    const CXXMethodDecl *m = mc->getMethodDecl();
    llvm::StringRef name = m && m->getIdentifier() ? m->getName() : "";
    const Value *l = list_ref(mc->getImplicitObjectArgument());
    if (!l || mc->getNumArgs() != 0)
      return std::nullopt;
    if (name == "empty")
      return bool_value(l->elems.empty());
    if (name == "size" && mc->getType()->isIntegerType())
      return APValue(llvm::APSInt(
          llvm::APInt(unsigned(ctx_.getTypeSize(mc->getType())),
                      uint64_t(l->elems.size())),
          mc->getType()->isUnsignedIntegerOrEnumerationType()));
    return std::nullopt;
  }
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e)) {
    // t.defined() of a tensor the region holds: false for `Tensor t;` not
    // assigned yet, true for any tensor value (one the region made, or an
    // input, which is guarded to be defined).
    const CXXMethodDecl *m = mc->getMethodDecl();
    const Expr *obj = mc->getImplicitObjectArgument();
    if (m && m->getIdentifier() && m->getName() == "defined" &&
        mc->getNumArgs() == 0 && obj && is_kiln_tensor(obj->getType()) &&
        isa<DeclRefExpr, MemberExpr>(strip_noop(obj, true, true)))
      if (std::optional<SlotId> id =
              lvalue_slot(strip_noop(obj, true, true), /*quiet=*/true))
        if (auto it = st.values.find(*id); it != st.values.end() &&
            (it->second.kind == Value::Undefined ||
             it->second.kind == Value::Tensor))
          return bool_value(it->second.kind == Value::Tensor);
    return std::nullopt;
  }
  if (const auto *c = dyn_cast<ConditionalOperator>(e)) {
    std::optional<APValue> k = fold(c->getCond());
    if (!k || !k->isInt())
      return std::nullopt;
    return fold(k->getInt().getBoolValue() ? c->getTrueExpr() : c->getFalseExpr());
  }
  return std::nullopt;
}

} // namespace kiln::plugin::capture
