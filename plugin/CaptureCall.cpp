// Capture of calls: kiln ops go to the graph; a function, method or lambda
// whose body is visible is inlined (its parameters bound to the argument
// values, or to the caller's variables for reference parameters; its
// `return` gives the call's value). Recursion, virtual calls and calls
// without a visible body are graph breaks.
#include "CaptureImpl.h"
#include "Options.h"
#include "Rewrite.h"

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

namespace kiln::plugin::capture {

constexpr size_t kMaxInlineDepth = 16;

static bool is_std_function(const FunctionDecl *f, llvm::StringRef name) {
  return f && f->isInStdNamespace() && f->getIdentifier() &&
         f->getName() == name;
}

const Stmt *Capturer::body_of(const FunctionDecl *fn) const {
  if (env_.original_bodies) {
    auto it = env_.original_bodies->find(fn);
    if (it != env_.original_bodies->end())
      return it->second;
  }
  if (is_rewritten(fn))
    return nullptr; // rewritten elsewhere (a PCH): the original is gone
  return fn->getBody();
}

// <cmath>'s functions that are ops of the table with the same result on
// doubles (kiln::scalar's formulas call them): std::sqrt(x), ::exp(x), ...
// std::round is trunc and a step (host_math).
// A function of <cmath>: std::name, or C's ::name.
static bool is_math_function(const FunctionDecl *callee) {
  if (!callee->getIdentifier())
    return false;
  const DeclContext *dc = callee->getDeclContext()->getRedeclContext();
  return callee->isInStdNamespace() ||
         (dc->isTranslationUnit() && callee->isExternC());
}

// std::round and C's round, roundf: halves away from zero.
static bool is_round_away(const FunctionDecl *callee) {
  return is_math_function(callee) &&
         (callee->getName() == "round" || callee->getName() == "roundf");
}

std::optional<ir::Op> Capturer::host_math_op(const FunctionDecl *callee) {
  if (!is_math_function(callee))
    return std::nullopt;
  if (is_round_away(callee))
    return ir::Op::Trunc; // and a step away from zero (host_math)
  static const std::pair<llvm::StringLiteral, ir::Op> kMath[] = {
      {"sqrt", ir::Op::Sqrt}, {"exp", ir::Op::Exp},   {"log", ir::Op::Log},
      {"sin", ir::Op::Sin},   {"cos", ir::Op::Cos},   {"tan", ir::Op::Tan},
      {"tanh", ir::Op::Tanh}, {"erf", ir::Op::Erf},   {"pow", ir::Op::Pow},
      {"fabs", ir::Op::Abs},  {"abs", ir::Op::Abs},   {"floor", ir::Op::Floor},
      {"ceil", ir::Op::Ceil}, {"trunc", ir::Op::Trunc},
      {"fmod", ir::Op::Fmod}, {"atan2", ir::Op::Atan2},
      {"log1p", ir::Op::Log1p}, {"expm1", ir::Op::Expm1},
      {"log2", ir::Op::Log2}, {"log10", ir::Op::Log10},
      // Halves to even in the default rounding mode, as kiln::round; not
      // std::round, which rounds them away from zero.
      {"rint", ir::Op::Round}, {"nearbyint", ir::Op::Round}};
  auto find = [&](llvm::StringRef name) -> std::optional<ir::Op> {
    for (const auto &[math, op] : kMath)
      if (name == math)
        return op;
    return std::nullopt;
  };
  // The name, or C's float function of it (expf, sqrtf, erff, fabsf).
  const llvm::StringRef name = callee->getName();
  if (std::optional<ir::Op> op = find(name))
    return op;
  if (name.ends_with("f"))
    return find(name.drop_back());
  return std::nullopt;
}

// A <cmath> function outside the op table, without side effects (but
// errno) and of plain values: cbrt, hypot, asin, ... (C's float versions
// too: cbrtf).
static bool is_pure_libm(const FunctionDecl *callee) {
  if (!is_math_function(callee))
    return false;
  static const llvm::StringLiteral kPure[] = {
      "cbrt",  "hypot", "asin",     "acos",     "atan",   "sinh",  "cosh",
      "asinh", "acosh", "atanh",    "erfc",     "tgamma", "lgamma", "exp2",
      "logb",  "fmin",  "fmax",     "fdim",     "fma",    "copysign",
      "nextafter", "remainder", "ldexp", "scalbn"};
  llvm::StringRef name = callee->getName();
  for (llvm::StringRef p : kPure)
    if (name == p || (name.ends_with("f") && name.drop_back() == p))
      return true;
  return false;
}

// A call of is_pure_libm of doubles or floats whose arguments the region's
// start can evaluate (constants, parameters and sizes the region has not
// changed): it is evaluated there, by the same call, and passed in as a
// scalar input (as a shape query is). Of values the region computes it is
// a graph break: the graph has no op for it.
std::optional<Value> Capturer::libm_at_entry(const CallExpr *c,
                                             const FunctionDecl *callee) {
  QualType rt = c->getType().getCanonicalType().getUnqualifiedType();
  if (!rt->isSpecificBuiltinType(BuiltinType::Double) &&
      !rt->isSpecificBuiltinType(BuiltinType::Float))
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(callee) + " of '" +
                          rt.getAsString(ctx_.getPrintingPolicy()) +
                          "' is not supported yet (of doubles and floats it is)");
  for (const Expr *a : c->arguments()) {
    std::string why;
    if (!guardable(a, why))
      return fail_value(
          c->getExprLoc(),
          "call to " + quoted(callee) + " of a value the region computes is "
          "not supported yet (outside Kiln's op table, a <cmath> function is "
          "called where the region starts, so its arguments must be "
          "constants, parameters or sizes the region has not changed)");
  }
  Value v;
  v.kind = Value::Scalar;
  v.node = entry_input(c, DType::f64, callee->getName());
  v.type = rt;
  return v;
}

// A <cmath> function of runtime scalars: the op on weak scalars, computed
// in double (integer arguments converted, as C++ does); std::abs of an
// integer stays an integer. Of floats (std::exp(float), expf, ...) the
// graph computes in double too, its host scalars' type, and rounds to
// float: sqrt and abs are then the float functions' results exactly (sqrt
// is correctly rounded, and double's 53 bits make the second rounding
// innocuous; abs is exact); exp, log, sin, pow, ... are the correctly
// rounded value, bar a double rounding at a near-tie, where glibc's float
// functions are within about one ulp of it (their documented bounds): the
// compiled and the eager value may differ in a float's last bit. Of known
// values it folds.
std::optional<Value> Capturer::host_math(const CallExpr *c,
                                         const FunctionDecl *callee,
                                         ir::Op op) {
  QualType rt = c->getType().getCanonicalType().getUnqualifiedType();
  bool is_double = rt->isSpecificBuiltinType(BuiltinType::Double);
  bool is_float = is_float_type(rt);
  bool is_int = op == ir::Op::Abs && rt->isSignedIntegerType();
  if (!is_double && !is_float && !is_int)
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(callee) + " returning '" +
                          rt.getAsString(ctx_.getPrintingPolicy()) +
                          "' is not supported yet (of doubles and floats it "
                          "is: the graph computes host scalars in double)");
  if (int(c->getNumArgs()) != ir::op_info(op).arity)
    return fail_value(c->getExprLoc(),
                      "this form of " + quoted(callee) + " is not supported yet");
  llvm::SmallVector<ir::NodeId, 2> ids;
  for (const Expr *a : c->arguments()) {
    if (!a->getType()->isArithmeticType())
      return fail_value(a->getExprLoc(), "argument of " + quoted(callee) +
                                             " is not a number");
    std::optional<ir::NodeId> n = scalar_node(a);
    if (!n)
      return std::nullopt;
    // std::sqrt(int) and friends compute on the double of the argument.
    if ((is_double || is_float) && scalar_dtype(a->getType()) != DType::f64)
      n = add_cast(*n, DType::f64, a->getExprLoc());
    ids.push_back(*n);
  }
  Value r;
  r.kind = Value::Scalar;
  r.node = add_op(op, ids, c->getExprLoc());
  if (is_round_away(callee)) {
    // t = trunc(x); x - t is exact, so t + 1 where it is at least 0.5,
    // t - 1 where it is at most -0.5 (NaN and infinities stay t).
    const SourceLocation at = c->getExprLoc();
    auto k = [&](double v) {
      ir::NodeId n = st.b.constant(v, DType::f64, loc(at));
      st.dclass.resize(st.b.graph().nodes.size(), DClass::Scalar);
      return n;
    };
    const ir::NodeId t = r.node;
    const ir::NodeId d = add_op(ir::Op::Sub, {ids[0], t}, at);
    const ir::NodeId up = add_op(ir::Op::Ge, {d, k(0.5)}, at);
    const ir::NodeId down = add_op(ir::Op::Le, {d, k(-0.5)}, at);
    const ir::NodeId below =
        add_op(ir::Op::Where, {down, add_op(ir::Op::Sub, {t, k(1.0)}, at), t},
               at);
    r.node = add_op(ir::Op::Where,
                    {up, add_op(ir::Op::Add, {t, k(1.0)}, at), below}, at);
  }
  if (is_float)
    r.node = add_cast(r.node, DType::f32, c->getExprLoc());
  r.type = rt;
  return r;
}

// std::max(a, b) and std::min(a, b) of runtime scalars: `(a < b) ? b : a`
// and `(b < a) ? b : a`, as the standard defines them (the first argument
// wins ties and NaN comparisons), as a where of a comparison on weak
// scalars. Doubles, floats (the comparison and the choice are exact) and
// signed integers; of known values it folds.
std::optional<Value> Capturer::host_minmax(const CallExpr *c,
                                           const FunctionDecl *callee,
                                           bool is_max) {
  QualType rt = c->getType().getNonReferenceType().getCanonicalType()
                    .getUnqualifiedType();
  if (!exact_host_type(rt) && !is_float_type(rt))
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(callee) + " of '" +
                          rt.getAsString(ctx_.getPrintingPolicy()) +
                          "' is not supported yet (of doubles, floats and "
                          "signed integers it is)");
  llvm::SmallVector<ir::NodeId, 2> ids;
  for (const Expr *a : c->arguments()) {
    std::optional<Value> v = scalar(a);
    if (!v)
      return std::nullopt;
    std::optional<ir::NodeId> n = materialize(*v, a->getExprLoc());
    if (!n)
      return std::nullopt;
    ids.push_back(*n);
  }
  const ir::NodeId a = ids[0], b = ids[1];
  ir::NodeId less = is_max ? add_op(ir::Op::Lt, {a, b}, c->getExprLoc())
                           : add_op(ir::Op::Lt, {b, a}, c->getExprLoc());
  Value r;
  r.kind = Value::Scalar;
  r.node = add_op(ir::Op::Where, {less, b, a}, c->getExprLoc());
  r.type = rt;
  return r;
}

std::optional<Value> Capturer::call(const CallExpr *c) {
  if (c->containsErrors())
    return silent_fail();
  const FunctionDecl *callee = c->getDirectCallee();
  if (!callee)
    return fail_value(c->getExprLoc(), "indirect call is not supported yet");
  if ((is_std_function(callee, "move") || is_std_function(callee, "forward")) &&
      c->getNumArgs() == 1)
    return eval(c->getArg(0));
  if (is_std_function(callee, "get") && c->getNumArgs() == 1) {
    const TemplateArgumentList *targs = callee->getTemplateSpecializationArgs();
    if (targs && targs->size() >= 1 &&
        targs->get(0).getKind() == TemplateArgument::Integral) {
      std::optional<Value> t = eval(c->getArg(0));
      if (!t)
        return std::nullopt;
      uint64_t i = targs->get(0).getAsIntegral().getZExtValue();
      if (t->kind != Value::Tuple || i >= t->elems.size())
        return fail_value(c->getExprLoc(), "std::get of this value is not "
                                           "supported yet");
      return t->elems[i];
    }
  }
  if ((is_std_function(callee, "make_pair") ||
       is_std_function(callee, "make_tuple")) &&
      tensor_tuple_arity(c->getType()))
    return tuple(c, tensor_tuple_arity(c->getType()));

  if (std::optional<ir::Op> op = host_math_op(callee))
    return host_math(c, callee, *op);
  if ((is_std_function(callee, "max") || is_std_function(callee, "min")) &&
      c->getNumArgs() == 2)
    return host_minmax(c, callee, callee->getName() == "max");
  if (is_pure_libm(callee))
    return libm_at_entry(c, callee);
  // The standard library is opaque (its bodies are visible, but not made
  // of kiln ops): a call into it is a graph break.
  if (callee->isInStdNamespace() ||
      (isa<CXXMethodDecl>(callee) &&
       cast<CXXMethodDecl>(callee)->getParent()->isInStdNamespace()))
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(callee) + " is not supported yet");
  const auto *md = dyn_cast<CXXMethodDecl>(callee);
  if (!md || md->isStatic()) {
    if (in_kiln_namespace(callee))
      return kiln_call(c, callee);
    return inline_call(c, callee, std::nullopt, -1);
  }
  const Expr *object = nullptr;
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(c))
    object = mc->getImplicitObjectArgument();
  else if (isa<CXXOperatorCallExpr>(c) && c->getNumArgs() >= 1)
    object = c->getArg(0);
  if (!object)
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(callee) + " is not supported yet");
  const CXXRecordDecl *cls = md->getParent();
  if (is_kiln_class(QualType(cls->getTypeForDecl(), 0), "Tensor")) {
    if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(c))
      return fail_value(oc->getOperatorLoc(),
                        std::string("operator '") +
                            getOperatorSpelling(oc->getOperator()) +
                            "' on a tensor inside an expression is not "
                            "supported yet (as a statement it is)");
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(c))
      return tensor_method(mc);
  }
  if (cls->isLambda()) {
    std::optional<Value> cl = eval(object);
    if (!cl)
      return std::nullopt;
    if (cl->kind != Value::Closure)
      return fail_value(object->getExprLoc(), "call of this lambda is not "
                                              "supported yet");
    const Closure &closure = st.closures[cl->closure];
    std::optional<Slot> self;
    if (closure.has_this)
      self = closure.this_slot;
    return inline_call(c, md, self, cl->closure);
  }
  if (md->isVirtual()) {
    bool direct = md->hasAttr<FinalAttr>() || cls->hasAttr<FinalAttr>();
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(c))
      if (const auto *me = dyn_cast<MemberExpr>(mc->getCallee()->IgnoreParens()))
        direct |= me->hasQualifier();
    if (!direct)
      return fail_value(c->getExprLoc(), "virtual call to " + quoted(md) +
                                             " is not supported yet");
  }
  std::optional<Slot> self = object_slot(object);
  if (!self)
    return fail_value(object->getExprLoc(),
                      "call to " + quoted(md) +
                          " on this object is not supported yet (on 'this' "
                          "or a variable it is)");
  return inline_call(c, md, self, -1);
}

std::optional<Value> Capturer::inline_call(const CallExpr *c,
                                           const FunctionDecl *fn,
                                           std::optional<Slot> self,
                                           int closure) {
  const FunctionDecl *def = nullptr;
  if (!fn->hasBody(def) && fn->isImplicitlyInstantiable() && env_.instantiate)
    env_.instantiate(fn);
  if (!fn->hasBody(def) || !def)
    return fail_value(c->getExprLoc(), "call to " + quoted(fn) +
                                           " is not supported yet (no body "
                                           "to inline)");
  const Stmt *body = body_of(def);
  if (!body)
    return fail_value(c->getExprLoc(), "call to " + quoted(fn) +
                                           ", compiled elsewhere, is not "
                                           "supported yet");
  if (std::optional<CompileOptions> o = compile_options_of(def, nullptr);
      o && o->disable)
    return fail_value(c->getExprLoc(),
                      "call to " + quoted(fn) +
                          ", marked [[kiln::compile(\"disable\")]], is not "
                          "inlined");
  for (const Frame &fr : frames_)
    if (fr.fn->getCanonicalDecl() == def->getCanonicalDecl())
      return fail_value(c->getExprLoc(), "recursive call to " + quoted(fn) +
                                             " is not inlined");
  if (frames_.size() > kMaxInlineDepth)
    return fail_value(c->getExprLoc(), "calls nested deeper than " +
                                           std::to_string(kMaxInlineDepth) +
                                           " are not inlined");
  if (def->isVariadic())
    return fail_value(c->getExprLoc(), "call to the variadic function " +
                                           quoted(fn) + " is not supported yet");
  if (isa<CoroutineBodyStmt>(body))
    return fail_value(c->getExprLoc(), "call to the coroutine " + quoted(fn) +
                                           " is not supported yet");
  if (isa<CXXTryStmt>(body))
    return fail_value(c->getExprLoc(), "call to " + quoted(fn) +
                                           ", which has a function-try-block, "
                                           "is not supported yet");
  if (def->hasCXXExplicitFunctionObjectParameter())
    return fail_value(c->getExprLoc(), "call to " + quoted(fn) +
                                           ", which has an explicit object "
                                           "parameter, is not supported yet");
  unsigned first = 0;
  if (isa<CXXOperatorCallExpr>(c) && isa<CXXMethodDecl>(def) &&
      cast<CXXMethodDecl>(def)->isInstance())
    first = 1;
  if (c->getNumArgs() - first != def->getNumParams())
    return fail_value(c->getExprLoc(), "call to " + quoted(fn) +
                                           " with this many arguments is not "
                                           "supported yet");

  // Arguments are evaluated in the caller, then bound in the callee.
  struct Binding {
    const ParmVarDecl *param;
    std::optional<SlotId> alias;
    Value value;
  };
  std::vector<Binding> bindings;
  for (unsigned i = 0; i < def->getNumParams(); ++i) {
    const ParmVarDecl *p = def->getParamDecl(i);
    const Expr *arg = c->getArg(first + i);
    QualType pt = p->getType();
    Binding b{p, std::nullopt, {}};
    if (pt->isReferenceType() && (is_kiln_tensor(pt) || scalar_kind(pt))) {
      const Expr *x = strip_noop(arg);
      if (x->isGLValue() && !isa<MaterializeTemporaryExpr>(x))
        if (std::optional<SlotId> id = lvalue_slot(x, /*quiet=*/true)) {
          b.alias = id;
          bindings.push_back(b);
          continue;
        }
      if (failed())
        return std::nullopt;
    }
    std::optional<Value> v = eval(arg);
    if (!v)
      return std::nullopt;
    b.value = *v;
    bindings.push_back(b);
  }

  Frame fr;
  fr.fn = def;
  fr.closure = closure;
  fr.call = c->getExprLoc();
  if (self) {
    fr.has_this = true;
    fr.this_slot = *self;
  }
  frames_.push_back(fr);
  for (Binding &b : bindings) {
    st.aliases.erase(b.param);
    st.names.erase(b.param);
    if (b.alias) {
      st.aliases[b.param] = *b.alias;
    } else if (b.value.kind == Value::Tensor || b.value.kind == Value::Scalar) {
      SlotId id = intern({b.param, {}}, b.param->getType());
      write(id, b.value, false);
    } else {
      st.names[b.param] = b.value;
    }
  }
  Flow flow = Flow::Normal;
  bool ok = exec(body, flow);
  Frame done = frames_.back();
  frames_.pop_back();
  if (!ok)
    return std::nullopt;
  if (flow == Flow::Break || flow == Flow::Continue)
    return fail_value(c->getExprLoc(), "internal error: 'break' left " +
                                           quoted(fn));
  if (def->getReturnType()->isVoidType())
    return Value();
  if (!done.returned || done.ret.empty())
    return fail_value(c->getExprLoc(), quoted(fn) + " does not return a value "
                                                    "on the path taken");
  return done.ret.front();
}

std::optional<Value> Capturer::make_closure(const LambdaExpr *le) {
  Closure cl;
  cl.lambda = le;
  // Copies: evaluating captures may inline calls, which grows frames_.
  const int outer_closure = frames_.back().closure;
  cl.has_this = frames_.back().has_this;
  cl.this_slot = frames_.back().this_slot;
  for (const LambdaCapture &cap : le->captures()) {
    if (cap.capturesThis() || cap.capturesVLAType()) {
      if (cap.capturesVLAType())
        return fail_value(cap.getLocation(), "capture of a variable-length "
                                             "array is not supported yet");
      continue;
    }
    ValueDecl *v = cap.getCapturedVar();
    const auto *vd = dyn_cast<VarDecl>(v);
    if (vd && vd->isInitCapture()) {
      if (vd->getType()->isReferenceType() || !vd->getInit())
        return fail_value(cap.getLocation(), "a lambda init-capture by "
                                             "reference is not supported yet");
      std::optional<Value> val = eval(vd->getInit());
      if (!val)
        return std::nullopt;
      cl.copies[v] = *val;
      continue;
    }
    if (cap.getCaptureKind() != LCK_ByCopy)
      continue; // by reference: the body names the variable itself
    std::optional<Value> val;
    if (auto it = st.names.find(v); it != st.names.end()) {
      val = it->second;
    } else if (outer_closure >= 0 &&
               st.closures[outer_closure].copies.count(v)) {
      val = st.closures[outer_closure].copies[v];
    } else if (std::optional<SlotId> id = var_slot(v, cap.getLocation())) {
      val = read(*id, cap.getLocation());
    } else {
      return fail_value(cap.getLocation(), "capture of " + quoted(v) +
                                               " is not supported yet");
    }
    if (!val)
      return std::nullopt;
    cl.copies[v] = *val;
  }
  st.closures.push_back(std::move(cl));
  Value r;
  r.kind = Value::Closure;
  r.closure = int(st.closures.size()) - 1;
  return r;
}

} // namespace kiln::plugin::capture
