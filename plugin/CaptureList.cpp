// Capture of std::vector<kiln::Tensor> locals the region builds: declared
// empty or from braces, grown by push_back / emplace_back, read and
// assigned with constant indices, measured with size() / empty(), walked by
// a range-based for (unrolled: the length is known), and joined by
// kiln::cat / kiln::stack. Such a vector is a Value::List: its tensors, in
// order. The length never depends on run-time values (a loop that grows
// it has a compile-time trip count, or it is not captured), so nothing
// about it needs a guard.
//
// What split() and chunk() return (Value::Pieces) has a length known only
// at run time: it can be indexed with constants, and chunk()'s pieces
// joined, but not walked or changed.
#include "CaptureImpl.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

namespace kiln::plugin::capture {

namespace {

constexpr int kMaxElements = 64;

// The braces of `std::vector<Tensor> v = {a, b}` / `v{a, b}`.
const InitListExpr *braces(const Expr *e) {
  e = e->IgnoreImplicit();
  if (const auto *ce = dyn_cast<CXXConstructExpr>(e); ce && ce->getNumArgs() >= 1)
    if (const auto *il = dyn_cast<CXXStdInitializerListExpr>(
            ce->getArg(0)->IgnoreImplicit()))
      return dyn_cast<InitListExpr>(il->getSubExpr()->IgnoreImplicit());
  return nullptr;
}

} // namespace

// A List of the tensors written in braces.
std::optional<Value> Capturer::list_of(const InitListExpr *il) {
  Value l;
  l.kind = Value::List;
  for (const Expr *e : il->inits()) {
    std::optional<Value> t = tensor(e);
    if (!t)
      return std::nullopt;
    l.elems.push_back(*t);
  }
  return l;
}

std::optional<Value> Capturer::list_init(const VarDecl *vd, const Expr *init) {
  Value l;
  l.kind = Value::List;
  if (!init)
    return l;
  const Expr *x = init->IgnoreImplicit();
  if (const auto *ewc = dyn_cast<ExprWithCleanups>(x))
    x = ewc->getSubExpr()->IgnoreImplicit();
  if (const auto *ce = dyn_cast<CXXConstructExpr>(x);
      ce && ce->getNumArgs() == 0)
    return l;
  if (const InitListExpr *il = braces(x))
    return list_of(il);
  if (const auto *ce = dyn_cast<CXXConstructExpr>(x);
      ce && !ce->getConstructor()->isCopyOrMoveConstructor())
    return fail_value(vd->getLocation(),
                      "this construction of a std::vector of tensors is not "
                      "supported yet (declare it empty or with braces)");
  // A copy of another vector, or what split() or chunk() returns.
  return eval(init);
}

// The vector a name refers to, where the region holds it as a List (a
// local, or a lambda's copy of one); nullptr otherwise.
Value *Capturer::list_ref(const Expr *e) {
  e = strip_noop(e, true, true)->IgnoreParenImpCasts();
  const auto *dre = dyn_cast<DeclRefExpr>(e);
  if (!dre)
    return nullptr;
  const ValueDecl *d = dre->getDecl();
  const Frame &fr = frames_.back();
  if (dre->refersToEnclosingVariableOrCapture() && fr.closure >= 0) {
    Closure &cl = st.closures[fr.closure];
    if (auto it = cl.copies.find(d); it != cl.copies.end())
      return it->second.kind == Value::List ? &it->second : nullptr;
  }
  if (auto it = st.names.find(d); it != st.names.end())
    return it->second.kind == Value::List ? &it->second : nullptr;
  return nullptr;
}

bool Capturer::list_method(const CXXMemberCallExpr *mc) {
  const CXXMethodDecl *m = mc->getMethodDecl();
  const std::string name =
      m && m->getIdentifier() ? m->getName().str() : std::string("operator");
  const Expr *obj = mc->getImplicitObjectArgument();
  // size(), empty() and the like, as statements: nothing happens.
  if (m && m->isConst())
    return eval(obj).has_value();
  Value *l = list_ref(obj);
  if (!l) {
    std::optional<Value> v = eval(obj);
    if (!v)
      return false;
    return fail(mc->getExprLoc(),
                "'" + name + "' on " +
                    (v->kind == Value::Pieces
                         ? std::string("what split() or chunk() returns")
                         : std::string("this std::vector of tensors")) +
                    " is not supported yet (on a std::vector local the "
                    "region declares it is)");
  }
  if ((name == "push_back" || name == "emplace_back") &&
      mc->getNumArgs() == 1 && is_kiln_tensor(mc->getArg(0)->getType())) {
    if (l->elems.size() >= size_t(kMaxElements))
      return fail(mc->getExprLoc(),
                  "a std::vector of more than " +
                      std::to_string(kMaxElements) +
                      " tensors is not captured");
    std::optional<Value> t = tensor(mc->getArg(0));
    if (!t)
      return false;
    // (tensor() may have grown the names map: look the vector up again.)
    l = list_ref(obj);
    if (!l)
      return fail(mc->getExprLoc(), "internal error: the vector moved");
    l->elems.push_back(*t);
    return true;
  }
  if (name == "reserve" && mc->getNumArgs() == 1 &&
      !mc->getArg(0)->HasSideEffects(ctx_))
    return true;
  if (name == "clear" && mc->getNumArgs() == 0) {
    l->elems.clear();
    return true;
  }
  if (name == "pop_back" && mc->getNumArgs() == 0) {
    if (l->elems.empty())
      return fail(mc->getExprLoc(), "'pop_back' on an empty std::vector is "
                                    "undefined; it runs eagerly");
    l->elems.pop_back();
    return true;
  }
  return fail(mc->getExprLoc(), "std::vector's '" + name +
                                    "' on a vector of tensors is not "
                                    "supported yet (push_back, emplace_back, "
                                    "clear, pop_back and reserve are)");
}

// `v = {a, b}` or `v = w` of a vector the region holds.
bool Capturer::list_set(const Expr *lhs, const Expr *rhs) {
  if (!list_ref(lhs))
    return fail(lhs->getExprLoc(),
                "assigning this std::vector of tensors is not supported yet "
                "(a std::vector local the region declares it is)");
  const Expr *r = rhs->IgnoreImplicit();
  if (const auto *sil = dyn_cast<CXXStdInitializerListExpr>(r))
    r = sil->getSubExpr()->IgnoreImplicit();
  const InitListExpr *il = dyn_cast<InitListExpr>(r);
  if (!il)
    il = braces(r);
  // From braces; else a List, or what split() or chunk() returns.
  std::optional<Value> l = il ? list_of(il) : pieces(rhs);
  if (!l)
    return false;
  Value *dst = list_ref(lhs);
  if (!dst)
    return fail(lhs->getExprLoc(), "internal error: the vector moved");
  *dst = *l;
  return true;
}

// `v[i] = t` / `v.at(i) = t`, i a constant.
bool Capturer::list_assign(const Expr *vec, const Expr *index, const Expr *rhs) {
  if (!list_ref(vec))
    return fail(vec->getExprLoc(),
                "assigning an element of this std::vector of tensors is not "
                "supported yet (of a std::vector local the region declares "
                "it is)");
  std::optional<int64_t> i =
      constant_int(index, "index into a std::vector of tensors");
  if (!i)
    return false;
  std::optional<Value> t = tensor(rhs);
  if (!t)
    return false;
  Value *l = list_ref(vec);
  if (*i < 0 || *i >= int64_t(l->elems.size()))
    return fail(index->getBeginLoc(),
                "index " + std::to_string(*i) +
                    " is out of range for a std::vector of " +
                    std::to_string(l->elems.size()) + " tensors");
  l->elems[size_t(*i)] = *t;
  return true;
}

// `for (T p : v)` over a List: unrolled, p bound to each tensor in turn.
// Through a non-const reference (`for (auto &p : v)`) an assignment to p
// is the element's (written back after each pass).
bool Capturer::exec_range_for(const CXXForRangeStmt *f, Flow &flow) {
  const Expr *range = f->getRangeInit();
  const VarDecl *lv = f->getLoopVariable();
  if (!range || !lv || !is_tensor_vector(range->getType()) ||
      !is_kiln_tensor(lv->getType().getNonReferenceType()))
    return fail(f->getBeginLoc(), "a range-based 'for' loop is not unrolled "
                                  "(over a std::vector of tensors the region "
                                  "builds it is): it runs eagerly and its "
                                  "body is compiled on its own");
  std::optional<Value> v = pieces(range);
  if (!v)
    return false;
  if (v->kind != Value::List)
    return fail(range->getExprLoc(),
                "a range-based 'for' over what split() or chunk() returns is "
                "not unrolled: the number of pieces is known only at run time "
                "(index them with constants, or join them with kiln::cat); "
                "the loop runs eagerly and its body is compiled on its own");
  const bool write_back = lv->getType()->isReferenceType() &&
                          !lv->getType().getNonReferenceType().isConstQualified();
  const std::vector<Value> elems = v->elems;
  // The loop variable is the loop's own: never a result of the region.
  if (dyn_cast<FunctionDecl>(lv->getDeclContext()) == fd_)
    st.declared.insert(lv);
  const SlotId slot = intern({lv, {}}, lv->getType().getNonReferenceType());
  ++frames_.back().loop_depth;
  auto done = [&](bool ok) {
    --frames_.back().loop_depth;
    return ok;
  };
  for (size_t i = 0; i < elems.size(); ++i) {
    if (st.num_ops > kMaxOps)
      return done(fail(f->getBeginLoc(), "unrolling the loop makes more than " +
                                             std::to_string(kMaxOps) + " ops"));
    write(slot, elems[i], true);
    Flow fl = Flow::Normal;
    if (!exec(f->getBody(), fl))
      return done(false);
    if (Value *live = list_ref(range)) {
      if (live->elems.size() != elems.size())
        return done(fail(f->getBeginLoc(),
                         "the loop changes the length of the std::vector it "
                         "walks (undefined in C++); it runs eagerly"));
      if (write_back) {
        auto it = st.values.find(slot);
        if (it == st.values.end() || it->second.kind != Value::Tensor)
          return done(fail(f->getBeginLoc(), "the loop leaves its element "
                                             "without a tensor value"));
        live->elems[i] = it->second;
      }
    }
    if (fl == Flow::Return) {
      flow = Flow::Return;
      return done(true);
    }
    if (fl == Flow::Break)
      break;
  }
  return done(true);
}

std::optional<std::vector<ir::NodeId>>
Capturer::vector_tensors(const Expr *e) {
  std::optional<Value> v = pieces(e);
  if (!v)
    return std::nullopt;
  std::vector<ir::NodeId> out;
  if (v->kind == Value::List) {
    for (const Value &t : v->elems) {
      if (t.kind != Value::Tensor)
        return fail_value(e->getExprLoc(), "a std::vector element without a "
                                           "tensor value is not supported");
      out.push_back(t.node);
    }
    return out;
  }
  // chunk(c, d) with a constant c: pieces 0 .. c-1, each checked by the
  // host (fewer pieces than c runs the eager body, which joins those).
  // (Copies: add_op below grows the node list.)
  const ir::Node chunks = st.b.graph().nodes[v->piece_chunks];
  const ir::Node size = st.b.graph().nodes[v->piece_size];
  if (chunks.op != ir::Op::Constant || chunks.constant <= 0 ||
      size.op != ir::Op::Constant || size.constant != 0)
    return fail_value(e->getExprLoc(),
                      "joining what split(), or chunk() of a run-time count, "
                      "returns is not supported yet: the number of pieces is "
                      "known only at run time (join them with constant "
                      "indices in braces)");
  if (chunks.constant > kMaxElements)
    return fail_value(e->getExprLoc(), "joining more than " +
                                           std::to_string(kMaxElements) +
                                           " pieces is not captured");
  for (int64_t i = 0; i < int64_t(chunks.constant); ++i) {
    ir::NodeId id = add_op(ir::Op::Piece,
                           {v->node, v->piece_dim, int_constant(i, e),
                            v->piece_chunks, v->piece_size},
                           e->getExprLoc());
    st.dclass.resize(st.b.graph().nodes.size(), DClass::Variant);
    st.dclass[id] = st.dclass[v->node];
    out.push_back(id);
  }
  return out;
}

} // namespace kiln::plugin::capture
