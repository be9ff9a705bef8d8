// Planning: cuts a function's statement lists into compiled regions and
// graph breaks.
//
// A region starts at a statement and takes the following statements of
// the same list for as long as each can be captured (in every
// specialisation). Then it is finalised: the locals it declares and later
// code uses are hoisted before it, what it leaves behind for later code
// becomes its outputs, and the guards its assumptions need are listed. A
// statement that cannot start a region is a graph break; when it is a
// compound statement (a loop with a runtime trip count, a branch on a
// tensor's data, a try block) its bodies are planned the same way.
#include "CaptureImpl.h"

#include <kiln/passes/text.h>

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>

#include <llvm/Support/raw_ostream.h>

#include <deque>
#include <map>
#include <set>

using namespace clang;

namespace kiln::plugin {
namespace capture {
namespace {

// Specialisations of one region, at most.
constexpr size_t kMaxSpecs = 8;

using RefCounts = llvm::DenseMap<const Decl *, int>;

void count_refs(const Stmt *s, RefCounts &m) {
  if (!s)
    return;
  if (const auto *dre = dyn_cast<DeclRefExpr>(s))
    ++m[dre->getDecl()];
  for (const Stmt *c : s->children())
    count_refs(c, m);
}

// What the graph computes, as KIR without source locations and value
// names: moving or renaming code keeps a region's symbol.
std::string fingerprint(const ir::Graph &g) {
  ir::PrintOptions what_it_computes;
  what_it_computes.locations = false;
  what_it_computes.names = false;
  return ir::print(g, what_it_computes);
}

// The first goto or label in a body: Kiln does not move code that can be
// jumped into.
const Stmt *find_jump(const Stmt *s) {
  if (!s)
    return nullptr;
  if (isa<GotoStmt, IndirectGotoStmt, LabelStmt, AddrLabelExpr>(s))
    return s;
  if (isa<LambdaExpr>(s))
    return nullptr;
  for (const Stmt *c : s->children())
    if (const Stmt *j = find_jump(c))
      return j;
  return nullptr;
}

// The bodies of a compound statement that is kept as written when it
// cannot be captured whole.
llvm::SmallVector<const Stmt *, 4> bodies(const Stmt *s) {
  llvm::SmallVector<const Stmt *, 4> out;
  if (const auto *a = dyn_cast<AttributedStmt>(s))
    return bodies(a->getSubStmt());
  if (const auto *c = dyn_cast<CompoundStmt>(s)) {
    out.push_back(c);
  } else if (const auto *i = dyn_cast<IfStmt>(s)) {
    if (!i->isConsteval() && !i->isConstexpr()) {
      out.push_back(i->getThen());
      if (i->getElse())
        out.push_back(i->getElse());
    }
  } else if (const auto *f = dyn_cast<ForStmt>(s)) {
    out.push_back(f->getBody());
  } else if (const auto *w = dyn_cast<WhileStmt>(s)) {
    out.push_back(w->getBody());
  } else if (const auto *d = dyn_cast<DoStmt>(s)) {
    out.push_back(d->getBody());
  } else if (const auto *r = dyn_cast<CXXForRangeStmt>(s)) {
    out.push_back(r->getBody());
  } else if (const auto *t = dyn_cast<CXXTryStmt>(s)) {
    out.push_back(t->getTryBlock());
    for (unsigned h = 0; h < t->getNumHandlers(); ++h)
      out.push_back(t->getHandler(h)->getHandlerBlock());
  }
  return out;
}

llvm::SmallVector<const Stmt *, 8> as_list(const Stmt *s) {
  llvm::SmallVector<const Stmt *, 8> out;
  if (const auto *c = dyn_cast<CompoundStmt>(s))
    out.append(c->body_begin(), c->body_end());
  else
    out.push_back(s);
  return out;
}

class Planner {
public:
  Planner(ASTContext &ctx, const FunctionDecl *fd, const PlanEnv &env)
      : ctx_(ctx), fd_(fd), cap_(ctx, fd, env) {}

  FunctionPlan run(const Stmt *body) {
    if (const Stmt *j = find_jump(body)) {
      plan_.fatal = isa<LabelStmt>(j) ? "label is not supported yet"
                                      : "'goto' is not supported yet";
      plan_.fatal_loc = j->getBeginLoc();
      return std::move(plan_);
    }
    if (isa<CXXTryStmt>(body)) {
      plan_.fatal = "a function-try-block is not supported yet";
      plan_.fatal_loc = body->getBeginLoc();
      return std::move(plan_);
    }
    count_refs(body, refs_);
    body_ = body;
    list(as_list(body), /*top=*/true);
    for (auto [i, r] : llvm::enumerate(plan_.regions))
      r.index = int(i) + 1;
    const SourceManager &sm = ctx_.getSourceManager();
    llvm::stable_sort(plan_.breaks, [&](const Break &a, const Break &b) {
      return sm.isBeforeInTranslationUnit(a.loc, b.loc);
    });
    return std::move(plan_);
  }

private:
  void list(llvm::ArrayRef<const Stmt *> stmts, bool top);
  bool try_stmt(std::vector<State> &states, const Stmt *s, Failure &f);
  bool finalize(const std::vector<State> &states,
                llvm::ArrayRef<const Stmt *> region,
                llvm::ArrayRef<const Stmt *> rest, bool whole, Region &out,
                Failure &f);
  bool inside(SourceLocation loc, const Stmt *s) const {
    if (loc.isInvalid())
      return false;
    const SourceManager &sm = ctx_.getSourceManager();
    SourceLocation l = sm.getExpansionLoc(loc);
    SourceLocation b = sm.getExpansionLoc(s->getBeginLoc());
    SourceLocation e = sm.getExpansionLoc(s->getEndLoc());
    return !sm.isBeforeInTranslationUnit(l, b) &&
           !sm.isBeforeInTranslationUnit(e, l);
  }

  // Locals that name the storage of another variable (`Tensor t = x;`) at
  // the end of the previous region, when the next region starts right
  // after it: the next region sees both as inputs, and an in-place update
  // of one that assumes it shares nothing with the other would fail its
  // guard on every call.
  void note_aliases(const std::vector<State> &states);
  void keep_unwritten(const Stmt *s);
  std::set<std::pair<const VarDecl *, const VarDecl *>> shared_;

  ASTContext &ctx_;
  const FunctionDecl *fd_;
  Capturer cap_;
  FunctionPlan plan_;
  RefCounts refs_;
  const Stmt *body_ = nullptr;
};

void Planner::note_aliases(const std::vector<State> &states) {
  shared_.clear();
  bool first = true;
  for (const State &st : states) {
    if (st.abandoned) { // runs code the capture did not follow to the end
      shared_.clear();
      return;
    }
    // The plain variables naming each storage (an input's storage is also
    // named by the variable it came through).
    std::map<int, std::set<const VarDecl *>> names;
    auto plain = [&](SlotId id) -> const VarDecl * {
      const Slot &s = cap_.slot(id).slot;
      return s.fields.empty() ? s.var : nullptr;
    };
    for (const auto &[id, v] : st.values) {
      if (v.kind != Value::Tensor || v.storage < 0)
        continue;
      if (const VarDecl *vd = plain(id))
        names[v.storage].insert(vd);
      const Storage &s = st.storages[v.storage];
      if (s.kind == Storage::Input)
        if (const VarDecl *vd = plain(s.slot))
          names[v.storage].insert(vd);
    }
    std::set<std::pair<const VarDecl *, const VarDecl *>> here;
    for (const auto &[storage, vars] : names)
      for (auto a = vars.begin(); a != vars.end(); ++a)
        for (auto b = std::next(a); b != vars.end(); ++b)
          here.insert({std::min(*a, *b), std::max(*a, *b)});
    if (first)
      shared_ = std::move(here);
    else
      for (auto it = shared_.begin(); it != shared_.end();)
        it = here.count(*it) ? std::next(it) : shared_.erase(it);
    first = false;
  }
}

// Runs `s` in every specialisation; forks where a branch asks for a
// decision. False (with the reason in `f`) when `s` cannot be captured.
bool Planner::try_stmt(std::vector<State> &states, const Stmt *s, Failure &f) {
  std::vector<State> next;
  std::deque<State> work(states.begin(), states.end());
  while (!work.empty()) {
    State cur = std::move(work.front());
    work.pop_front();
    if (cur.returned || cur.abandoned) { // nothing more to capture here
      next.push_back(std::move(cur));
      continue;
    }
    cap_.st = cur;
    if (cap_.run(s)) {
      next.push_back(std::move(cap_.st));
      continue;
    }
    const Expr *cond = cap_.failure.need_decision;
    if (!cond && !cur.decisions.empty() && !cap_.failure.silent) {
      // Only some specialisations reach this: they run eagerly.
      cur.abandoned = true;
      cur.abandon = cap_.failure;
      next.push_back(std::move(cur));
      continue;
    }
    if (!cond) {
      f = cap_.failure;
      return false;
    }
    if (next.size() + work.size() + 2 > kMaxSpecs) {
      f = Failure();
      f.loc = cond->getExprLoc();
      f.reason = "branching here would make more than " +
                 std::to_string(kMaxSpecs) +
                 " specialisations of the region";
      return false;
    }
    State no = cur;
    no.decisions.push_back({cond, false});
    cur.decisions.push_back({cond, true});
    work.push_front(std::move(no));
    work.push_front(std::move(cur));
  }
  if (llvm::all_of(next, [](const State &s) { return s.abandoned; })) {
    f = next.front().abandon;
    return false;
  }
  states = std::move(next);
  return true;
}

void Planner::list(llvm::ArrayRef<const Stmt *> stmts, bool top) {
  shared_.clear(); // a body may run again: nothing is known at its start
  size_t i = 0;
  const size_t n = stmts.size();
  // Why the previous region ended (at statement i), as the capture said
  // it; a split where the next region compiles that statement.
  std::optional<Failure> prev_end;
  while (i < n) {
    std::vector<std::vector<State>> history; // after each statement
    std::vector<State> states(1);
    cap_.reset();
    states[0] = cap_.st;
    Failure first_fail, end_fail;
    size_t j = i;
    while (j < n) {
      Failure f;
      if (!try_stmt(states, stmts[j], f)) {
        if (j == i)
          first_fail = f;
        end_fail = f;
        break;
      }
      history.push_back(states);
      ++j;
      if (llvm::all_of(states, [](const State &s) {
            return s.returned || s.abandoned;
          }))
        break;
    }
    Region region;
    const Failure stop = end_fail; // why the statements after j cannot join
    while (j > i) {
      const std::vector<State> &at = history[j - i - 1];
      bool returned = llvm::all_of(
          at, [](const State &s) { return s.returned && !s.abandoned; });
      bool whole = top && i == 0 && (j == n || returned);
      Failure f;
      if (finalize(at, stmts.slice(i, j - i), stmts.slice(j), whole, region, f))
        break;
      // A local the region cannot hand on: say also why the region ends
      // where it does, which is usually what the user can change.
      if (!stop.reason.empty() && !stop.silent && stop.loc.isValid()) {
        const SourceManager &sm = ctx_.getSourceManager();
        f.reason += " (the region ends at line " +
                    std::to_string(sm.getPresumedLineNumber(
                        sm.getExpansionLoc(stop.loc))) +
                    ": " + stop.reason + ")";
      }
      if (j == i + 1)
        first_fail = f;
      end_fail = f;
      --j;
    }
    if (j > i) {
      const std::vector<State> &at = history[j - i - 1];
      if (prev_end && region.num_ops > 0 && !plan_.regions.empty()) {
        // The next region does take the branch: it is not kept eagerly.
        llvm::StringRef why = prev_end->reason;
        why.consume_back(kEagerIf);
        plan_.splits.push_back(Break{prev_end->loc.isValid()
                                         ? prev_end->loc
                                         : stmts[i]->getBeginLoc(),
                                     why.str()});
      }
      prev_end.reset();
      if (j < n && !end_fail.silent && !end_fail.reason.empty())
        prev_end = end_fail;
      if (region.num_ops > 0)
        plan_.regions.push_back(std::move(region));
      note_aliases(at);
      for (const State &s : at)
        if (s.abandoned)
          plan_.breaks.push_back(
              {s.abandon.loc, s.abandon.reason +
                                  " (the specialisations that reach it run "
                                  "the region's original code)"});
      bool returned = llvm::all_of(
          at, [](const State &s) { return s.returned && !s.abandoned; });
      if (returned)
        return; // what follows is unreachable
      i = j;
      continue;
    }
    // The statement cannot start a region: a graph break. Where it also
    // ended the region before it, that reason is the one to give: there it
    // saw the region's locals (a vector the region built, say), here they
    // come from outside.
    const Stmt *s = stmts[i];
    if (prev_end && !first_fail.silent && inside(prev_end->loc, s))
      first_fail = *prev_end;
    prev_end.reset();
    keep_unwritten(s);
    if (first_fail.silent) {
      plan_.silent = true;
      ++i;
      continue;
    }
    SourceLocation at = first_fail.loc.isValid() ? first_fail.loc : s->getBeginLoc();
    llvm::SmallVector<const Stmt *, 4> subs = bodies(s);
    bool in_body = llvm::any_of(subs, [&](const Stmt *b) { return inside(at, b); });
    if (!in_body)
      plan_.breaks.push_back({at, first_fail.reason});
    for (const Stmt *b : subs)
      list(as_list(b), /*top=*/false);
    if (!subs.empty())
      shared_.clear();
    ++i;
  }
}

// Drops the facts about variables statement `s` (run eagerly) may rebind:
// all of them, unless every mention of the variable is an argument bound to
// a const reference or taken by value (a const Tensor& cannot be made to
// name another storage).
void Planner::keep_unwritten(const Stmt *s) {
  if (shared_.empty())
    return;
  RefCounts all, passed;
  count_refs(s, all);
  std::function<void(const Stmt *)> walk = [&](const Stmt *x) {
    if (!x)
      return;
    if (const auto *call = dyn_cast<CallExpr>(x)) {
      const FunctionDecl *f = call->getDirectCallee();
      unsigned skip = isa<CXXOperatorCallExpr>(call) && isa_and_nonnull<CXXMethodDecl>(f) ? 1 : 0;
      for (unsigned a = 0; f && a < call->getNumArgs(); ++a) {
        if (a < skip || a - skip >= f->getNumParams())
          continue;
        QualType t = f->getParamDecl(a - skip)->getType();
        bool by_const = !t->isReferenceType() ? !t->isPointerType()
                                              : t->getPointeeType().isConstQualified();
        const auto *dre = dyn_cast<DeclRefExpr>(call->getArg(a)->IgnoreParenImpCasts());
        if (by_const && dre)
          ++passed[dre->getDecl()];
      }
    }
    for (const Stmt *c : x->children())
      walk(c);
  };
  walk(s);
  for (auto it = shared_.begin(); it != shared_.end();) {
    auto written = [&](const VarDecl *v) { return all.lookup(v) != passed.lookup(v); };
    it = written(it->first) || written(it->second) ? shared_.erase(it) : std::next(it);
  }
}

bool Planner::finalize(const std::vector<State> &states,
                       llvm::ArrayRef<const Stmt *> region,
                       llvm::ArrayRef<const Stmt *> rest, bool whole,
                       Region &out, Failure &f) {
  out = Region();
  out.stmts.assign(region.begin(), region.end());
  RefCounts after, in_region;
  for (const Stmt *s : rest)
    count_refs(s, after);
  for (const Stmt *s : region)
    count_refs(s, in_region);
  auto used_outside = [&](const Decl *d) {
    return refs_.lookup(d) - in_region.lookup(d) > 0;
  };
  const State &st0 = states.front();
  auto fail = [&](const VarDecl *vd, std::string why) {
    f = Failure();
    f.loc = vd->getLocation();
    f.reason = std::move(why);
    return false;
  };

  // Locals the region declares at its top level and later code uses.
  std::vector<const VarDecl *> top;
  for (const Stmt *s : region)
    if (const auto *ds = dyn_cast<DeclStmt>(s))
      for (const Decl *d : ds->decls())
        if (const auto *vd = dyn_cast<VarDecl>(d))
          top.push_back(vd);
  llvm::DenseSet<const VarDecl *> hoisted;
  std::function<void(const VarDecl *)> mark = [&](const VarDecl *vd) {
    if (!hoisted.insert(vd).second)
      return;
    // A reference hoisted needs what it names declared before it.
    if (auto it = st0.aliases.find(vd); it != st0.aliases.end()) {
      const VarDecl *target = cap_.slot(it->second).slot.var;
      if (target && llvm::is_contained(top, target))
        mark(target);
    }
  };
  for (const VarDecl *vd : top) {
    bool live = after.lookup(vd) > 0;
    if (const auto *dd = dyn_cast<DecompositionDecl>(vd))
      for (const BindingDecl *b : dd->bindings())
        live |= after.lookup(b) > 0;
    if (live)
      mark(vd);
  }
  for (const VarDecl *vd : top) {
    if (!hoisted.count(vd))
      continue;
    QualType t = vd->getType();
    std::string name = "'" + vd->getNameAsString() + "'";
    Hoist h{vd, Hoist::Value};
    if (isa<DecompositionDecl>(vd))
      return fail(vd, "structured bindings used after the compiled region "
                      "are not supported yet");
    if (st0.aliases.count(vd)) {
      h.kind = Hoist::Whole;
    } else if (t->isReferenceType()) {
      if (!is_kiln_tensor(t))
        return fail(vd, "reference " + name + " to a temporary, used after "
                        "the compiled region, is not supported yet");
      h.kind = Hoist::TempRef;
    } else if (is_kiln_tensor(t)) {
      h.kind = Hoist::Value;
    } else if (scalar_kind(t)) {
      if (t.isConstQualified()) {
        Expr::EvalResult r;
        if (!vd->getInit() || !vd->getInit()->EvaluateAsRValue(r, ctx_))
          return fail(vd, "const " + name + ", computed at run time and used "
                          "after the compiled region, is not supported yet");
        h.kind = Hoist::Whole;
      }
    } else if (is_tensor_vector(t)) {
      // A vector the region builds: declared before it, empty, and filled
      // with the region's tensors (RegionOutput::ListElem). What split()
      // or chunk() returns has a run-time length: not handed on.
      for (const State &s : states) {
        auto it = s.names.find(vd);
        if (!s.abandoned && (it == s.names.end() || it->second.kind != Value::List))
          return fail(vd, name + " of type '" +
                              t.getAsString(ctx_.getPrintingPolicy()) +
                              "' (what split() or chunk() returns), used "
                              "after the compiled region, is not supported "
                              "yet");
      }
      h.kind = Hoist::Value;
    } else if (const auto *rd = t->getAsCXXRecordDecl(); rd && rd->isLambda()) {
      const auto *le = dyn_cast_or_null<LambdaExpr>(
          vd->getInit() ? vd->getInit()->IgnoreImplicit() : nullptr);
      bool movable = le != nullptr;
      if (le)
        for (const LambdaCapture &c : le->captures())
          if (!c.capturesThis() &&
              (c.getCaptureKind() != LCK_ByRef || !c.capturesVariable() ||
               (isa<VarDecl>(c.getCapturedVar()) &&
                st0.declared.count(cast<VarDecl>(c.getCapturedVar())))))
            movable = false;
      if (!movable)
        return fail(vd, "lambda " + name + ", used after the compiled "
                        "region, captures by copy (not supported yet)");
      h.kind = Hoist::Whole;
    } else {
      return fail(vd, name + " of type '" +
                          t.getAsString(ctx_.getPrintingPolicy()) +
                          "', used after the compiled region, is not "
                          "supported yet");
    }
    out.hoists.push_back(h);
  }

  // Is a slot the region wrote seen after it?
  auto keep = [&](const State &st, SlotId id) {
    const SlotInfo &info = cap_.slot(id);
    if (!info.of_function)
      return false;
    const VarDecl *root = info.slot.var;
    // A mutable lambda's copy is the closure's: the next call reads what
    // this one wrote (before, an update of it was dropped).
    if (cap_.closure_state(root))
      return true;
    if (root && st.declared.count(root))
      return info.slot.fields.empty() && hoisted.count(root) > 0;
    if (!root || info.may_alias || root->hasGlobalStorage())
      return true;
    return used_outside(root);
  };

  for (const State &st : states) {
    RegionSpec spec;
    spec.decisions = st.decisions;
    if (st.abandoned) {
      spec.eager = true;
      out.specs.push_back(std::move(spec));
      continue;
    }
    spec.ret = st.returned ? st.ret : ReturnKind::None;
    spec.graph = const_cast<ir::GraphBuilder &>(st.b).graph();
    for (const State::Input &in : st.inputs) {
      if (in.expr) {
        spec.inputs.push_back({{}, in.expr, *scalar_kind(in.expr->getType())});
        continue;
      }
      const SlotInfo &info = cap_.slot(in.slot);
      spec.inputs.push_back(
          {info.slot, nullptr,
           info.tensor ? codegen::ArgKind::Tensor : *scalar_kind(info.type)});
    }
    // Outputs: slots written and seen later, then the returned tensors.
    llvm::DenseMap<ir::NodeId, int> output_storage;
    auto add_output = [&](RegionOutput o, const Value &v, SlotId self) {
      const Storage &s = st.storages[v.storage];
      // After an in-place update the value lives in that slot's storage:
      // hand out the slot itself, as eager code would.
      if (o.kind != RegionOutput::CopyInto && s.kind == Storage::Input &&
          s.slot != self && st.copy_back.count(s.slot) &&
          st.values.lookup(s.slot).node == v.node) {
        o.from = cap_.slot(s.slot).slot;
        o.use_from = true;
      } else if (o.kind != RegionOutput::CopyInto && s.kind == Storage::Fresh) {
        // A clone() shares its node, not its storage, with its source.
        auto it = output_storage.find(v.node);
        if (spec.graph.nodes[v.node].op == ir::Op::Input ||
            (it != output_storage.end() && it->second != v.storage))
          o.clone = true;
        // The value of a to() of an argument, not the to()'s own result (a
        // clone() of it): the fast path may hand out the argument itself
        // (an identity cast in this variant), eager a new tensor.
        ir::NodeId root = v.node;
        while (spec.graph.nodes[root].op == ir::Op::Cast ||
               spec.graph.nodes[root].op == ir::Op::CastLike)
          root = spec.graph.nodes[root].operands[0];
        if (root != v.node && spec.graph.nodes[root].op == ir::Op::Input &&
            !s.cast_result)
          o.clone = true;
      }
      o.contiguous = v.contiguous;
      output_storage.try_emplace(v.node, v.storage);
      spec.outputs.push_back(o);
      spec.graph.outputs.push_back(v.node);
    };
    for (SlotId id : st.written) {
      const SlotInfo &info = cap_.slot(id);
      // Storage updated in place is seen by whoever shares it: always.
      if (!info.tensor || (!keep(st, id) && !st.copy_back.count(id)))
        continue;
      const Value &v = st.values.find(id)->second;
      if (v.kind == Value::Undefined) {
        // A local the region declares is declared before it,
        // default-constructed: undefined already. Anything else would
        // need the fast path to reset it.
        const Slot &sl = cap_.slot(id).slot;
        if (sl.var && sl.fields.empty() && hoisted.count(sl.var))
          continue;
        f = Failure();
        f.loc = region.front()->getBeginLoc();
        f.reason = "'" + sl.name() + "' is left undefined (assigned Tensor()) "
                   "and used after the compiled region (not supported yet)";
        return false;
      }
      if (auto rb = st.rebound.find(id); rb != st.rebound.end()) {
        // Updated in place, then assigned: the update goes into the
        // tensor first, then the slot names its new value.
        RegionOutput o;
        o.kind = RegionOutput::CopyInto;
        o.slot = info.slot;
        add_output(o, rb->second, id);
        if (!keep(st, id))
          continue;
      }
      if (v.kind != Value::Tensor)
        continue;
      const Storage &s = st.storages[v.storage];
      bool in_place = st.copy_back.count(id) > 0 && !st.rebound.count(id);
      // Written back to what it held at the start: nothing to do.
      if (!in_place && s.kind == Storage::Input && s.slot == id &&
          spec.graph.nodes[v.node].op == ir::Op::Input && !v.contiguous)
        continue;
      RegionOutput o;
      o.kind = in_place ? RegionOutput::CopyInto : RegionOutput::Assign;
      o.slot = info.slot;
      add_output(o, v, id);
    }
    // Arguments written by copy_: their last stores, for the effect
    // (before the returned tensors: a single one is the last output).
    for (const auto &[id, s] : st.stored) {
      RegionOutput o;
      o.kind = RegionOutput::Effect;
      o.slot = cap_.slot(id).slot;
      spec.outputs.push_back(o);
      spec.graph.outputs.push_back(s);
    }
    // Vectors the region built, handed on element by element.
    for (const Hoist &h : out.hoists) {
      if (!is_tensor_vector(h.var->getType()))
        continue;
      const Value &l = st.names.find(h.var)->second;
      for (const Value &e : l.elems) {
        if (e.kind != Value::Tensor) {
          f = Failure();
          f.loc = h.var->getLocation();
          f.reason = "an element of '" + h.var->getNameAsString() +
                     "' without a tensor value, used after the compiled "
                     "region, is not supported yet";
          return false;
        }
        RegionOutput o;
        o.kind = RegionOutput::ListElem;
        o.slot = Slot{h.var, {}};
        add_output(o, e, -1);
      }
    }
    if (spec.ret == ReturnKind::Value)
      for (const Value &v : st.ret_values) {
        RegionOutput o;
        o.kind = RegionOutput::Return;
        add_output(o, v, -1);
      }
    // Scalars the region leaves behind are computed again in C++.
    for (const auto &[id, r] : st.replays) {
      if (r.var ? hoisted.count(r.var) > 0 : keep(st, id))
        spec.replays.push_back(r);
    }
    for (SlotId id : st.unreplayable)
      if (keep(st, id)) {
        f = Failure();
        f.loc = region.front()->getBeginLoc();
        f.reason = "scalar '" + cap_.slot(id).slot.name() +
                   "' is updated in an unrolled loop or an inlined call and "
                   "used after the compiled region (not supported yet)";
        return false;
      }
    // Aliasing: a slot the caller may also pass under another name must
    // not be read after another such slot was written.
    auto add_pair = [](std::vector<std::pair<Slot, Slot>> &v, const Slot &a,
                       const Slot &b) {
      for (auto &[x, y] : v)
        if ((x == a && y == b) || (x == b && y == a))
          return;
      v.push_back({a, b});
    };
    for (SlotId s : st.written) {
      const SlotInfo &si = cap_.slot(s);
      if (!si.tensor || !si.may_alias || !keep(st, s))
        continue;
      int w = st.first_write.lookup(s);
      auto consider = [&](SlotId t) {
        const SlotInfo &ti = cap_.slot(t);
        if (t == s || !ti.tensor || !ti.may_alias || !ti.of_function)
          return;
        if (st.first_write.count(t) || st.last_read.lookup(t) > w)
          add_pair(spec.distinct_objects, si.slot, ti.slot);
      };
      for (const State::Input &in : st.inputs)
        if (in.slot >= 0)
          consider(in.slot);
      for (SlotId t : st.written)
        if (keep(st, t))
          consider(t);
    }
    llvm::SmallVector<SlotId, 4> updated(st.copy_back.begin(), st.copy_back.end());
    for (const auto &[id, s] : st.stored)
      updated.push_back(id);
    for (SlotId s : updated)
      for (const State::Input &in : st.inputs) {
        if (in.slot < 0 || in.slot == s || !cap_.slot(in.slot).tensor)
          continue;
        const Slot &a = cap_.slot(s).slot, &b = cap_.slot(in.slot).slot;
        if (a.var && b.var && a.fields.empty() && b.fields.empty() &&
            shared_.count({std::min(a.var, b.var), std::max(a.var, b.var)})) {
          f = Failure();
          f.loc = region.front()->getBeginLoc();
          f.reason = "in-place update of '" + a.name() + "', which shares its "
                     "storage with '" + b.name() + "' (assigned from it "
                     "before), is not supported yet";
          return false;
        }
        add_pair(spec.distinct_storage, a, b);
      }
    spec.num_ops = st.num_ops;
    if (std::string err = ir::verify(spec.graph); !err.empty()) {
      f = Failure();
      f.loc = region.front()->getBeginLoc();
      f.reason = "internal error: captured graph is malformed: " + err;
      return false;
    }
    spec.fingerprint = fingerprint(spec.graph);
    if (!spec.graph.outputs.empty())
      out.num_ops = std::max(out.num_ops, spec.num_ops);
    out.specs.push_back(std::move(spec));
  }
  const RegionSpec &s0 = out.specs.front();
  out.whole_body =
      whole && out.specs.size() == 1 && out.hoists.empty() &&
      s0.ret == ReturnKind::Value && s0.replays.empty() &&
      s0.distinct_objects.empty() && s0.distinct_storage.empty() &&
      llvm::all_of(s0.outputs, [](const RegionOutput &o) {
        return o.kind == RegionOutput::Return && !o.use_from && !o.clone &&
               !o.contiguous;
      });
  return true;
}

} // namespace
} // namespace capture

FunctionPlan plan_function(ASTContext &ctx, const FunctionDecl *fd,
                           const Stmt *body, const PlanEnv &env) {
  capture::Planner p(ctx, fd, env);
  return p.run(body);
}

} // namespace kiln::plugin
