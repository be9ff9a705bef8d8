// Capture of scalars: compile-time constants, runtime scalar parameters and
// locals, and the arithmetic on them that the graph computes as C++ does.
#include "CaptureImpl.h"

#include <clang/AST/Expr.h>

#include <algorithm>

namespace kiln::plugin::capture {

static const char *category_name(DType dt) {
  return dt == DType::b8 ? "bool" : dt == DType::i64 ? "integer" : "floating-point";
}

std::optional<ir::NodeId> Capturer::scalar(const Expr *e) {
  if (e->containsErrors())
    return silent_fail();
  DType want = scalar_dtype(e->getType());
  ir::Loc l = loc(e->getExprLoc());
  Expr::EvalResult r;
  if (!e->isValueDependent() && e->EvaluateAsRValue(r, ctx_) &&
      !r.HasSideEffects) {
    if (r.Val.isInt() && r.Val.getInt().getBitWidth() <= 64) {
      const llvm::APSInt &v = r.Val.getInt();
      return b_.constant(v.isSigned() ? double(v.getSExtValue())
                                      : double(v.getZExtValue()),
                         want, l);
    }
    if (r.Val.isFloat()) {
      llvm::APFloat f = r.Val.getFloat();
      bool lost = false;
      f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      return b_.constant(f.convertToDouble(), want, l);
    }
  }
  if (std::optional<ir::NodeId> v = scalar_arith(e, want); v || failed())
    return v;
  // A runtime scalar: a parameter or a local bound to one, used at its own
  // kind (int as int, floating as floating).
  const Expr *s = e;
  while (true) {
    s = s->IgnoreParens();
    // Conversions between kinds are let through here and reported below
    // as what they are.
    const auto *ce = dyn_cast<CastExpr>(s);
    if (!ce || !ce->getType()->isArithmeticType())
      break;
    CastKind k = ce->getCastKind();
    if (k != CK_LValueToRValue && k != CK_NoOp && k != CK_IntegralCast &&
        k != CK_FloatingCast && k != CK_IntegralToFloating &&
        k != CK_FloatingToIntegral && k != CK_IntegralToBoolean &&
        k != CK_FloatingToBoolean)
      break;
    s = ce->getSubExpr();
  }
  if (const auto *dre = dyn_cast<DeclRefExpr>(s)) {
    const auto *vd = dyn_cast<VarDecl>(dre->getDecl());
    auto it = vd ? scalars_.find(vd) : scalars_.end();
    if (it != scalars_.end()) {
      if (it->second.dtype == want)
        return it->second.id;
      fail(dre->getLocation(), std::string("conversion of ") + quoted(vd) +
                                   " from " + category_name(it->second.dtype) +
                                   " to " + category_name(want) +
                                   " is not supported yet");
      return std::nullopt;
    }
    if (vd) {
      fail(dre->getLocation(),
           "reference to " + quoted(vd) +
               (vd->hasGlobalStorage() ? ", a global or static variable,"
                                       : ", which is not a parameter or local "
                                         "of this function,") +
               " is not supported yet");
      return std::nullopt;
    }
  }
  fail(e->getExprLoc(), "scalar expression is not supported yet (only "
                        "constants, scalar parameters and scalar locals "
                        "bound to them)");
  return std::nullopt;
}

// + - * (and / on doubles) of runtime scalars, as graph ops on weak
// scalars. Only where the graph computes what C++ does: the result is a
// double or a signed integer (float arithmetic rounds differently, unsigned
// wraps, integer division truncates), and promotion in the graph gives the
// C++ result's kind.
std::optional<ir::NodeId> Capturer::scalar_arith(const Expr *e, DType want) {
  const Expr *x = e->IgnoreParens();
  ir::Op op;
  llvm::SmallVector<const Expr *, 2> operands;
  if (const auto *bo = dyn_cast<BinaryOperator>(x)) {
    switch (bo->getOpcode()) {
    case BO_Add:
      op = ir::Op::Add;
      break;
    case BO_Sub:
      op = ir::Op::Sub;
      break;
    case BO_Mul:
      op = ir::Op::Mul;
      break;
    case BO_Div:
      op = ir::Op::Div;
      break;
    default:
      return std::nullopt;
    }
    operands = {bo->getLHS(), bo->getRHS()};
  } else if (const auto *uo = dyn_cast<UnaryOperator>(x);
             uo && (uo->getOpcode() == UO_Minus || uo->getOpcode() == UO_Plus)) {
    if (uo->getOpcode() == UO_Plus)
      return scalar(uo->getSubExpr());
    op = ir::Op::Neg;
    operands = {uo->getSubExpr()};
  } else {
    return std::nullopt;
  }
  QualType t = x->getType().getCanonicalType().getUnqualifiedType();
  bool is_double = t->isSpecificBuiltinType(BuiltinType::Double);
  bool is_signed_int =
      t->isSignedIntegerType() && ctx_.getTypeSize(t) >= 32 && !t->isEnumeralType();
  if (!is_double && !is_signed_int) {
    fail(x->getExprLoc(), "arithmetic on runtime scalars of type '" +
                              t.getAsString(ctx_.getPrintingPolicy()) +
                              "' is not supported yet (use double or a "
                              "signed integer)");
    return std::nullopt;
  }
  if (op == ir::Op::Div && !is_double) {
    fail(x->getExprLoc(), "integer division of runtime scalars is not "
                          "supported yet");
    return std::nullopt;
  }
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
    std::optional<ir::NodeId> v = scalar(inner);
    if (!v)
      return std::nullopt;
    DType dt = scalar_dtype(inner->getType());
    category = std::max(category, dtype_category(dt));
    ids.push_back(*v);
  }
  if (category != dtype_category(want)) {
    fail(x->getExprLoc(), "arithmetic on bool scalars is not supported yet");
    return std::nullopt;
  }
  return b_.op(op, ids, loc(x->getExprLoc()));
}

} // namespace kiln::plugin::capture
