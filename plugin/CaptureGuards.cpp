// Branches on host values: a condition known at compile time picks its arm;
// one the region's start can evaluate (it reads only constants and host
// values the region has not changed yet) becomes a guard, one
// specialisation of the region per value.
#include "CaptureImpl.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

#include <functional>

namespace kiln::plugin::capture {

// The value of an if/loop condition known now: a compile-time constant, or
// a branch this specialisation decided. Otherwise asks for a decision (a
// guard at the region's start) or fails.
std::optional<bool> Capturer::condition(const Expr *cond, SourceLocation at) {
  if (cond->containsErrors())
    return silent_fail();
  if (std::optional<APValue> k = fold_effects(cond)) {
    if (k->isInt())
      return k->getInt().getBoolValue();
    if (k->isFloat())
      return !k->getFloat().isZero();
  }
  if (failed())
    return std::nullopt;
  std::string why;
  if (!guardable(cond, why)) {
    fail(at, why);
    return std::nullopt;
  }
  return decided(cond);
}

// The value this specialisation assumes for a guard, or a request for a
// decision on it.
std::optional<bool> Capturer::decided(const Expr *cond) {
  for (const Decision &d : st.decisions)
    if (d.cond == cond)
      return d.value;
  failure.need_decision = cond;
  return std::nullopt;
}

// Can the region's start evaluate `cond` in place of this point? It must
// read only constants and host values that exist before the region and
// that the region has not changed so far: scalar variables and members,
// and the shape and layout of tensors (dim(), size(d), numel(), ...).
bool Capturer::guardable(const Expr *cond, std::string &why) {
  const std::string eager = kEagerIf.str();
  auto unchanged = [&](SlotId id, const std::string &name) {
    if (!nameable_at_entry(id)) {
      why = "the branch condition reads " + name +
            ", which the region itself computes" + eager;
      return false;
    }
    if (st.first_write.count(id)) {
      why = "the branch condition reads " + name +
            ", which the region changes before the branch" + eager;
      return false;
    }
    return true;
  };
  std::function<bool(const Expr *)> ok = [&](const Expr *e) -> bool {
    e = e->IgnoreParens();
    if (const auto *ewc = dyn_cast<ExprWithCleanups>(e)) {
      // Temporaries: fine to look into for the reason, never a guard.
      if (ok(ewc->getSubExpr()))
        why = "the branch condition makes temporaries" + eager;
      return false;
    }
    if (isa<MaterializeTemporaryExpr, CXXBindTemporaryExpr>(e)) {
      if (ok(e->IgnoreImplicit()))
        why = "the branch condition makes temporaries" + eager;
      return false;
    }
    if (isa<IntegerLiteral, FloatingLiteral, CXXBoolLiteralExpr,
            CharacterLiteral, ConstantExpr, SizeOfPackExpr,
            UnaryExprOrTypeTraitExpr>(e))
      return true;
    if (const auto *c = dyn_cast<CastExpr>(e)) {
      if (c->getType()->isRecordType() ||
          c->getCastKind() == CK_UserDefinedConversion ||
          c->getCastKind() == CK_ConstructorConversion)
        return why = "the branch condition converts an object" + eager, false;
      return ok(c->getSubExpr());
    }
    if (const auto *u = dyn_cast<UnaryOperator>(e)) {
      if (u->isIncrementDecrementOp() || u->getOpcode() == UO_Deref ||
          u->getOpcode() == UO_AddrOf)
        return why = "the branch condition has side effects or pointers" +
                     eager,
               false;
      return ok(u->getSubExpr());
    }
    if (const auto *b = dyn_cast<BinaryOperator>(e)) {
      if (b->isAssignmentOp() || b->getOpcode() == BO_Comma)
        return why = "the branch condition has side effects" + eager, false;
      return ok(b->getLHS()) && ok(b->getRHS());
    }
    if (const auto *c = dyn_cast<ConditionalOperator>(e))
      return ok(c->getCond()) && ok(c->getTrueExpr()) && ok(c->getFalseExpr());
    if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
      const ValueDecl *d = dre->getDecl();
      if (isa<EnumConstantDecl>(d))
        return true;
      Expr::EvalResult r;
      if (dre->EvaluateAsRValue(r, ctx_))
        return true;
      const auto *vd = dyn_cast<VarDecl>(d);
      std::string name = "'" + d->getNameAsString() + "'";
      if (frames_.size() > 1 || !vd) {
        why = "a branch on the runtime value " + name +
              " inside an inlined call is not supported yet";
        return false;
      }
      if (!vd->hasGlobalStorage() &&
          (st.declared.count(vd) ||
           dyn_cast<FunctionDecl>(vd->getDeclContext()) != fd_)) {
        why = "the branch condition reads " + name +
              ", which the region itself computes" + eager;
        return false;
      }
      std::optional<SlotId> id = var_slot(d, dre->getLocation());
      return id && unchanged(*id, name);
    }
    if (isa<MemberExpr>(e)) {
      std::optional<SlotId> id = lvalue_slot(e, /*quiet=*/true);
      if (!id || frames_.size() > 1) {
        why = "the branch condition reads a member Kiln cannot name at the "
              "region's start" + eager;
        return false;
      }
      return unchanged(*id, "'" + slots_[*id].slot.name() + "'");
    }
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e)) {
      const CXXMethodDecl *m = mc->getMethodDecl();
      const Expr *obj = mc->getImplicitObjectArgument();
      llvm::StringRef name = m && m->getIdentifier() ? m->getName() : "";
      if (is_kiln_tensor(obj->getType())) {
        if (name == "item") {
          why = "the branch condition reads tensor data ('item()'), a "
                "data-dependent value" + eager;
          return false;
        }
        static const char *const metadata[] = {
            "dim", "size", "numel", "defined", "is_contiguous", "dtype",
            "element_size", "stride"};
        if (llvm::is_contained(metadata, name)) {
          if (!ok(obj))
            return false;
          for (const Expr *a : mc->arguments())
            if (!ok(a))
              return false;
          return true;
        }
      }
      why = "the branch condition calls " + (m ? quoted(m) : "a method") +
            eager;
      return false;
    }
    if (const auto *c = dyn_cast<CallExpr>(e)) {
      const FunctionDecl *f = c->getDirectCallee();
      why = "the branch condition calls " + (f ? quoted(f) : "a function") +
            eager;
      return false;
    }
    why = std::string("the branch condition (") + e->getStmtClassName() +
          ") cannot be evaluated at the region's start" + eager;
    return false;
  };
  return ok(cond);
}

} // namespace kiln::plugin::capture
