// Slots: the variables and members a region reads and writes, named the
// way code at the region's boundary can name them, and the region's
// inputs (read before written) and writes.
#include "CaptureImpl.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

namespace kiln::plugin::capture {

SlotId Capturer::intern(const Slot &s, QualType held) {
  std::vector<const void *> key{s.var};
  for (const FieldDecl *f : s.fields)
    key.push_back(f);
  auto [it, inserted] = slot_ids_.emplace(key, SlotId(slots_.size()));
  if (!inserted)
    return it->second;
  SlotInfo info;
  info.slot = s;
  info.type = held.getNonReferenceType();
  info.tensor = is_kiln_tensor(info.type);
  if (info.tensor && tensor_type_.isNull())
    tensor_type_ = info.type.getCanonicalType().getUnqualifiedType();
  if (s.var && s.var->hasGlobalStorage()) {
    // Globals and statics: any code may name them.
    info.of_function = true;
    info.may_alias = true;
  } else if (s.var) {
    const auto *owner = dyn_cast<FunctionDecl>(s.var->getDeclContext());
    info.of_function = owner == fd_;
    info.may_alias = s.var->getType()->isReferenceType();
    // A compiled lambda reads its captures as the body names them: a copy
    // (the closure's own), or the outer variable (by reference).
    if (const LambdaCapture *c = owner != fd_ ? lambda_capture(fd_, s.var) : nullptr) {
      info.of_function = true;
      info.may_alias = c->getCaptureKind() == LCK_ByRef ||
                       s.var->getType()->isReferenceType();
    }
  } else {
    // Rooted in `this`: the compiled function's object.
    info.of_function = true;
    info.may_alias = true;
  }
  slots_.push_back(info);
  return it->second;
}

bool Capturer::closure_state(const VarDecl *v) const {
  const LambdaCapture *c = lambda_capture(fd_, v);
  return c && c->getCaptureKind() == LCK_ByCopy &&
         !cast<CXXMethodDecl>(fd_)->isConst();
}

bool Capturer::nameable_at_entry(SlotId id) const {
  const SlotInfo &info = slots_[id];
  return info.of_function && !(info.slot.var && st.declared.count(info.slot.var));
}

// The slot a variable names: its own, or (a reference) the one it was
// bound to. Captured copies and structured bindings are no slots.
std::optional<SlotId> Capturer::var_slot(const ValueDecl *d, SourceLocation at) {
  if (auto it = st.aliases.find(d); it != st.aliases.end())
    return it->second;
  const auto *vd = dyn_cast<VarDecl>(d);
  if (!vd)
    return std::nullopt;
  return intern({vd, {}}, vd->getType());
}

std::optional<Slot> Capturer::object_slot(const Expr *e) {
  e = strip_noop(e, true);
  if (isa<CXXThisExpr>(e)) {
    const Frame &fr = frames_.back();
    if (!fr.has_this)
      return std::nullopt;
    return fr.this_slot;
  }
  if (const auto *u = dyn_cast<UnaryOperator>(e);
      u && u->getOpcode() == UO_Deref &&
      isa<CXXThisExpr>(u->getSubExpr()->IgnoreParenImpCasts()))
    return object_slot(u->getSubExpr());
  if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
    const auto *vd = dyn_cast<VarDecl>(dre->getDecl());
    if (!vd)
      return std::nullopt;
    if (auto it = st.aliases.find(vd); it != st.aliases.end())
      return slots_[it->second].slot;
    return Slot{vd, {}};
  }
  if (const auto *me = dyn_cast<MemberExpr>(e)) {
    const auto *f = dyn_cast<FieldDecl>(me->getMemberDecl());
    if (!f || f->getType()->isReferenceType() || f->isBitField())
      return std::nullopt;
    std::optional<Slot> base;
    if (me->isArrow()) {
      if (!isa<CXXThisExpr>(me->getBase()->IgnoreParenImpCasts()))
        return std::nullopt;
      base = object_slot(me->getBase()->IgnoreParenImpCasts());
    } else {
      base = object_slot(me->getBase());
    }
    if (!base)
      return std::nullopt;
    base->fields.push_back(f);
    return base;
  }
  return std::nullopt;
}

// The slot an lvalue expression names (a variable, a reference to one, a
// member of `this` or of a variable).
std::optional<SlotId> Capturer::lvalue_slot(const Expr *e, bool quiet) {
  const Expr *x = strip_noop(e);
  if (const auto *dre = dyn_cast<DeclRefExpr>(x)) {
    const ValueDecl *d = dre->getDecl();
    if (std::optional<SlotId> id = var_slot(d, dre->getLocation())) {
      // A by-copy lambda capture is a value, not the outer variable.
      if (dre->refersToEnclosingVariableOrCapture() &&
          frames_.back().closure >= 0 &&
          st.closures[frames_.back().closure].copies.count(d)) {
        if (!quiet)
          fail(dre->getLocation(), "assignment to " + quoted(d) +
                                       ", a copy captured by a lambda, is "
                                       "not supported yet");
        return std::nullopt;
      }
      return id;
    }
    if (!quiet) {
      const auto *vd = dyn_cast<VarDecl>(d);
      fail(dre->getLocation(),
           "reference to " + quoted(d) +
               (vd && vd->hasGlobalStorage()
                    ? ", a global or static variable,"
                    : ", which is not a variable of this function,") +
               " is not supported yet");
    }
    return std::nullopt;
  }
  if (isa<MemberExpr>(x)) {
    std::optional<Slot> s = object_slot(x);
    if (!s) {
      if (!quiet)
        fail(x->getExprLoc(), "this member access is not supported yet (a "
                              "member of 'this' or of a variable is)");
      return std::nullopt;
    }
    const FieldDecl *f = s->fields.back();
    return intern(*s, f->getType());
  }
  if (!quiet)
    fail(x->getExprLoc(), std::string("this ") +
                              (x->isLValue() ? "lvalue" : "expression") +
                              " (" + x->getStmtClassName() +
                              ") is not supported yet");
  return std::nullopt;
}

std::optional<Value> Capturer::read(SlotId id, SourceLocation at) {
  st.last_read[id] = ++st.event;
  if (auto it = st.values.find(id); it != st.values.end())
    return it->second;
  const SlotInfo &info = slots_[id];
  if (!nameable_at_entry(id)) {
    fail(at, "'" + info.slot.name() + "' is read before it has a value");
    return std::nullopt;
  }
  int arg = int(st.inputs.size());
  ir::Loc l = loc(at);
  std::string name = info.slot.name();
  Value v;
  if (info.tensor) {
    ir::NodeId n = st.b.input(arg, ir::Type::tensor(DType::f32), name, l);
    st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
    // A parameter of its own dtypes ([[kiln::dtype]]) is not of the
    // variant's: b8 only is Bool; else Int, a dtype the type rules of
    // in-place ops cannot assume.
    st.dclass[n] = DClass::Variant;
    if (std::vector<DType> pins = info.slot.pinned_dtypes(); !pins.empty())
      st.dclass[n] = llvm::all_of(pins, [](DType d) { return d == DType::b8; })
                         ? DClass::Bool
                         : DClass::Int;
    v = Value::tensor(n, fresh_storage({Storage::Input, id}));
  } else if (std::optional<codegen::ArgKind> k = scalar_kind(info.type)) {
    QualType t = info.type.getCanonicalType();
    if (t->isUnsignedIntegerType() && !t->isBooleanType() &&
        ctx_.getIntWidth(t) >= 64) {
      fail(at, "'" + name + "', an unsigned 64-bit scalar, is not supported "
                            "yet (its values do not all fit the graph's "
                            "int64)");
      return std::nullopt;
    }
    DType dt = scalar_dtype(info.type);
    ir::NodeId n = st.b.scalar_input(arg, dt, name, l);
    st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
    v.kind = Value::Scalar;
    v.node = n;
    v.type = info.type;
  } else {
    fail(at, "'" + name + "' of type '" +
                 info.type.getAsString(ctx_.getPrintingPolicy()) +
                 "' is not supported yet");
    return std::nullopt;
  }
  st.inputs.push_back({id, nullptr, v.node});
  st.values[id] = v;
  return v;
}

void Capturer::write(SlotId id, Value v, bool replayable) {
  const SlotInfo &info = slots_[id];
  if (info.of_function) {
    if (!st.first_write.count(id)) {
      st.first_write[id] = ++st.event;
      st.written.push_back(id);
    }
    if (!info.tensor && !replayable)
      st.unreplayable.insert(id);
  }
  st.values[id] = std::move(v);
}

} // namespace kiln::plugin::capture
