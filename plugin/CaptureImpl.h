// plugin/CaptureImpl.h - the symbolic executor behind capture: the state
// of one region being captured and the walker over statements (Capture.cpp),
// tensor expressions (CaptureTensor.cpp), scalars (CaptureScalar.cpp) and
// calls of visible functions and lambdas (CaptureCall.cpp). Regions.cpp
// drives it over a function's statement lists.
#pragma once

#include "Capture.h"

#include <clang/AST/APValue.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/MapVector.h>

#include <map>
#include <optional>

namespace kiln::plugin::capture {

using namespace clang;

using SlotId = int;

// The argument kind of a scalar type (floating: Double, integers: Int64,
// bool: Bool), or nullopt.
std::optional<codegen::ArgKind> scalar_kind(QualType t);
// The weak-scalar dtype of a C++ arithmetic type, as kiln::Operand sees it.
DType scalar_dtype(QualType t);
// A C++ `float` (after references and qualifiers). The graph keeps it as a
// weak f64 scalar of a float value: each operation on floats is rounded to
// float by a `to f32`.
bool is_float_type(QualType t);
bool in_kiln_namespace(const Decl *d);
// Ends the reason of a branch that cannot be a guard (so it is kept).
inline constexpr llvm::StringLiteral kEagerIf =
    ", so the 'if' runs eagerly and its arms are compiled on their own";

// Sees through parentheses and no-op implicit casts (also lvalue-to-rvalue
// ones with `rvalue`, and derived-to-base ones with `derived`).
inline const Expr *strip_noop(const Expr *e, bool rvalue = false,
                              bool derived = false) {
  while (true) {
    e = e->IgnoreParens();
    const auto *ic = dyn_cast<ImplicitCastExpr>(e);
    if (!ic)
      return e;
    CastKind k = ic->getCastKind();
    if (k == CK_NoOp || (rvalue && k == CK_LValueToRValue) ||
        (derived && k == CK_UncheckedDerivedToBase))
      e = ic->getSubExpr();
    else
      return e;
  }
}
bool is_kiln_class(QualType t, llvm::StringRef name);
bool is_kiln_dtype(QualType t); // kiln::DType

// A `Tensor()` / `kiln::Tensor{}` (an undefined tensor), seen through
// temporaries, casts and default arguments.
bool undefined_tensor_expr(const Expr *e);

// Loops (and range-based for over a vector) unroll up to these bounds;
// past them the loop runs eagerly.
constexpr int kMaxIterations = 64;
constexpr int kMaxOps = 4096;

// What an expression evaluates to.
struct Value {
  // Undefined: a default-constructed kiln::Tensor (`Tensor out;`). Only
  // assigning it, defined() and passing it as an optional argument (a
  // norm's weight, linear's bias) are captured; any other use is where
  // the region ends, and runs eagerly.
  enum Kind : uint8_t { None, Tensor, Scalar, Tuple, Closure, Undefined, Pieces, List };
  Kind kind = None;
  ir::NodeId node = -1; // Tensor; Scalar when known only at run time
  int storage = -1;     // Tensor: which storage it shares (State::storages)
  // Tensor: a contiguous() of a tensor from outside the region, which is
  // that tensor itself when it is contiguous and a copy otherwise: it is
  // handed out as `tensor.contiguous()` (RegionOutput::contiguous).
  bool contiguous = false;
  const Expr *contiguous_of = nullptr; // the tensor contiguous() was called on
  std::optional<APValue> known; // Scalar known at compile time
  QualType type;                // Scalar: its C++ type
  // Tuple: its members. List: a std::vector<kiln::Tensor> the region
  // builds (declared in it, filled by push_back/emplace_back or braces):
  // its tensors, in order; its length is known at compile time.
  std::vector<Value> elems;
  int closure = -1;             // Closure: State::closures
  // Pieces: what `node.split(size, d)` or `node.chunk(chunks, d)` returned
  // (a std::vector of views, `storage` theirs): the piece op's operands
  // after the tensor, d's, chunks' and size's (one of them 0); `parts[i]`
  // is a piece node (kiln/ops.def).
  ir::NodeId piece_dim = -1, piece_chunks = -1, piece_size = -1;
  static Value tensor(ir::NodeId n, int storage) {
    Value v;
    v.kind = Tensor;
    v.node = n;
    v.storage = storage;
    return v;
  }
};

// Who else may see a tensor's storage, for in-place updates.
struct Storage {
  enum Kind : uint8_t {
    Fresh,  // made in the region: only the region's names see it
    Input   // came from outside through `slot`
  };
  Kind kind = Fresh;
  SlotId slot = -1;
  // A to() read it or made it: Tensor::to returns its object when the
  // dtypes agree, which may depend on the variant, so the cast and its
  // source may be one tensor. An in-place update of either stays eager.
  bool cast_shared = false;
  // A to()'s own result: where the cast is the identity, eager hands out
  // its source itself (a clone() of it gets a storage without this).
  bool cast_result = false;
  // A layout op (view, transpose, ...) read it: the view shares its
  // elements, not its layout, so an in-place update of either stays eager.
  bool viewed = false;
};

// A lambda as a value: its by-copy captures are copied when it is made.
struct Closure {
  const LambdaExpr *lambda = nullptr;
  llvm::DenseMap<const ValueDecl *, Value> copies;
  Slot this_slot;
  bool has_this = false;
};

// The static dtype class of a node, for the type rules of in-place ops
// (the variant's dtype is always floating). Fixed: a cast's target, the
// same in every variant.
enum class DClass : uint8_t { Variant, Bool, Int, Fixed, Scalar };

struct Failure {
  SourceLocation loc;
  std::string reason;
  bool silent = false; // clang reported an error there already
  // Not a failure: the region forks on this condition (a specialisation
  // per value).
  const Expr *need_decision = nullptr;
  bool any() const { return silent || !reason.empty() || need_decision; }
};

// Everything capturing a region changes. Copied to try a statement (and
// restored when it fails) and to fork specialisations.
struct State {
  ir::GraphBuilder b{""};
  std::vector<DClass> dclass; // per node
  llvm::DenseMap<SlotId, Value> values;
  // Reference variables (and structured bindings) naming a slot.
  llvm::DenseMap<const ValueDecl *, SlotId> aliases;
  // Names bound to values that no slot holds: structured bindings,
  // closures, tuples.
  llvm::DenseMap<const ValueDecl *, Value> names;
  std::vector<Storage> storages;
  struct Input {
    SlotId slot = -1;
    const Expr *expr = nullptr; // or an expression (RegionInput::expr)
    ir::NodeId node = -1;
  };
  std::vector<Input> inputs; // in argument order
  llvm::DenseMap<SlotId, int> first_write, last_read;
  std::vector<SlotId> written; // in order of first write
  llvm::DenseSet<SlotId> copy_back;
  // Slots of copy_back assigned a new value after the update: the value
  // their tensor holds then (written into it before the new one is
  // assigned).
  llvm::DenseMap<SlotId, Value> rebound;
  // Tensor arguments written through Tensor::copy_ (of the argument or a
  // view of it): the last store node of each (ir::Op::Store), which names
  // the argument from then on. A graph output, so the stores stay.
  llvm::MapVector<SlotId, ir::NodeId> stored;
  llvm::DenseSet<const VarDecl *> declared;
  llvm::DenseSet<SlotId> unreplayable; // scalars written in loops or calls
  std::vector<std::pair<SlotId, Replay>> replays;
  std::vector<Decision> decisions;
  std::vector<Closure> closures;
  // Integer scalars known never to be negative (wrapped to an unsigned
  // type); see Capturer::nonnegative.
  llvm::DenseSet<ir::NodeId> nonnegative;
  int event = 0;
  bool returned = false;
  // A specialisation that reached code it cannot capture: it runs the
  // region's original statements (its guard picks the fallback).
  bool abandoned = false;
  Failure abandon;
  ReturnKind ret = ReturnKind::None;
  std::vector<Value> ret_values; // the returned tensors
  int num_ops = 0;

  // Every value a name of the region holds: f(slot, value) for the slots'
  // values, f(-1, value) for bound names and closures' copies (handles of
  // one storage share its elements wherever they are held). Stops at the
  // first f that returns true, and says whether one did.
  // (A List's tensors are visited one by one: each shares its storage.)
  template <class F> bool any_held(F &&f) {
    auto visit = [&](SlotId sid, Value &v) {
      if (v.kind != Value::List)
        return f(sid, v);
      for (Value &e : v.elems)
        if (f(SlotId(-1), e))
          return true;
      return false;
    };
    for (auto &[sid, v] : values)
      if (visit(sid, v))
        return true;
    for (auto &[d, v] : names)
      if (visit(SlotId(-1), v))
        return true;
    for (Closure &c : closures)
      for (auto &[d, v] : c.copies)
        if (visit(SlotId(-1), v))
          return true;
    return false;
  }
};

struct SlotInfo {
  Slot slot;
  bool tensor = false;
  QualType type;          // the held type (no reference)
  bool of_function = false; // rooted in the compiled function (not a callee)
  bool may_alias = false; // the caller may name it twice (reference params, members)
};


enum class Flow { Normal, Return, Break, Continue };

class Capturer {
public:
  Capturer(ASTContext &ctx, const FunctionDecl *fd, const PlanEnv &env);

  State st;
  Failure failure;

  // Runs one statement of the compiled function (at any nesting) in `st`.
  // False on failure (see `failure`); `st` is then unspecified.
  bool run(const Stmt *s);
  // A fresh state for a region starting at a statement.
  void reset() {
    st = State();
    st.b = ir::GraphBuilder(fd_->getNameAsString());
    failure = Failure();
    frames_.clear();
  }
  const SlotInfo &slot(SlotId id) const { return slots_[id]; }
  // Vars of the compiled function an expression or statement refers to.
  ASTContext &ctx() { return ctx_; }
  const FunctionDecl *function() const { return fd_; }
  bool nameable_at_entry(SlotId id) const;
  // Whether v is state of the compiled lambda's closure that outlives the
  // call: a by-copy capture (init-captures too) of a mutable lambda.
  bool closure_state(const VarDecl *v) const;
  // The kiln::Tensor type, once a tensor was seen.
  QualType tensor_type() const { return tensor_type_; }

private:
  struct Frame {
    const FunctionDecl *fn = nullptr;
    Slot this_slot; // the object `this` names
    bool has_this = false;
    int closure = -1;       // a lambda's call: resolves its captures
    bool returned = false;
    std::vector<Value> ret; // the returned value (a tuple: its elements)
    SourceLocation call;    // where the compiled function calls into it
    int loop_depth = 0;     // unrolled loops open in this frame
    int branch_depth = 0;   // decided branches open in this frame
  };

  // --- Failure.
  bool fail(SourceLocation loc, std::string reason);
  std::nullopt_t fail_value(SourceLocation loc, std::string reason) {
    fail(loc, std::move(reason));
    return std::nullopt;
  }
  std::nullopt_t silent_fail();
  bool failed() const { return failure.any(); }
  ir::Loc loc(SourceLocation l) const { return to_ir_loc(ctx_, l); }
  std::string quoted(const NamedDecl *d) const;

  // --- Statements (Capture.cpp).
  bool exec(const Stmt *s, Flow &flow);
  bool exec_if(const IfStmt *s, Flow &flow);
  bool exec_loop(const Stmt *s, const Stmt *init, const Expr *cond,
                 const Expr *inc, const Stmt *body, bool do_while,
                 Flow &flow);
  bool exec_return(const ReturnStmt *s, Flow &flow);
  bool decl(const Decl *d);
  bool var_decl(const VarDecl *vd);
  bool expr_stmt(const Expr *e);
  // std::vector<kiln::Tensor> locals the region builds (Value::List).
  std::optional<Value> list_init(const VarDecl *vd, const Expr *init);
  std::optional<Value> list_of(const InitListExpr *il);
  Value *list_ref(const Expr *e);
  bool list_method(const CXXMemberCallExpr *mc);
  bool list_assign(const Expr *vec, const Expr *index, const Expr *rhs);
  bool list_set(const Expr *lhs, const Expr *rhs);
  bool exec_range_for(const CXXForRangeStmt *f, Flow &flow);
  // The tensors of a vector argument (a List, or chunk()'s pieces with a
  // constant count), for cat and stack.
  std::optional<std::vector<ir::NodeId>> vector_tensors(const Expr *e);
  bool scalar_update(const Expr *e); // i++, i += 2, n = n * 2
  std::optional<bool> condition(const Expr *cond, SourceLocation at);
  bool guardable(const Expr *cond, std::string &why);
  std::optional<bool> decided(const Expr *cond);

  // --- Slots.
  SlotId intern(const Slot &s, QualType held);
  std::optional<SlotId> var_slot(const ValueDecl *d, SourceLocation at);
  std::optional<SlotId> lvalue_slot(const Expr *e, bool quiet = false);
  std::optional<Slot> object_slot(const Expr *e); // a class-typed object
  std::optional<Value> read(SlotId id, SourceLocation at);
  std::optional<Value> name_value(const DeclRefExpr *dre);
  void write(SlotId id, Value v, bool replayable);

  // --- Tensors (CaptureTensor.cpp).
  std::optional<Value> eval(const Expr *e); // any value
  std::optional<Value> tensor(const Expr *e);
  std::optional<Value> kiln_call(const CallExpr *c, const FunctionDecl *callee);
  std::optional<Value> reduction(const CallExpr *c, ir::Op op);
  std::optional<Value> tensor_method(const CXXMemberCallExpr *c);
  // double, or a signed integer of 32 bits or more: a host scalar type
  // whose arithmetic the graph computes as C++ does (float rounds
  // differently, unsigned wraps).
  bool exact_host_type(QualType t) const;
  bool exact_conversion(QualType from, QualType to) const;
  std::optional<ir::NodeId> scalar_node(const Expr *e);
  std::optional<Value> narrowed(const CastExpr *ce, DType want);
  std::optional<Value> wrapped(const CastExpr *ce, DType want);
  bool nonnegative(ir::NodeId id) const;
  std::optional<Value> converted(const CastExpr *ce, DType cast_to, DType want);
  std::optional<DType> narrowing_dtype(QualType to, SourceLocation at);
  std::optional<Value> computed_size(const clang::CXXMemberCallExpr *mc);
  std::optional<ir::Op> host_math_op(const FunctionDecl *callee);
  // The graph's scalar input for expression `e`, evaluated where the
  // region starts and passed in (RegionInput::expr): made once per `e`.
  ir::NodeId entry_input(const Expr *e, DType dt, llvm::StringRef fallback);
  std::optional<Value> libm_at_entry(const CallExpr *c,
                                     const FunctionDecl *callee);
  std::optional<Value> host_minmax(const CallExpr *c,
                                   const FunctionDecl *callee, bool is_max);
  std::optional<Value> host_math(const CallExpr *c, const FunctionDecl *callee,
                                 ir::Op op);
  std::optional<Value> to_dtype(const CXXMemberCallExpr *c, const Expr *obj);
  std::optional<Value> view_method(const CXXMemberCallExpr *c, ir::Op op,
                                   std::optional<Value> x = std::nullopt);
  Expr *method_call(const Expr *obj, llvm::StringRef name, SourceLocation at);
  std::optional<bool> optional_tensor(const Expr *arg);
  std::string undefined_use(const Expr *e) const;
  std::optional<Value> product(const CallExpr *c, ir::Op op);
  std::optional<Value> attention(const CallExpr *c);
  std::optional<Value> join(const CallExpr *c, bool stack);
  std::optional<int64_t> constant_int(const Expr *e, const char *what);
  ir::NodeId int_constant(int64_t v, const Expr *at);
  std::optional<int64_t> dim_of(const Expr *e, const Expr *of,
                                const char *what = "dim");
  std::optional<ir::NodeId> operand(const Expr *e);
  bool inplace(const CXXOperatorCallExpr *oc);
  bool store_copy(const CXXMemberCallExpr *mc);
  bool assign_tensor(const Expr *lhs, const Expr *rhs, SourceLocation at);
  std::optional<Value> tuple(const Expr *e, unsigned arity);
  std::optional<Value> pieces(const Expr *e);
  std::optional<Value> piece(const Expr *vec, const Expr *index,
                             SourceLocation at);
  ir::NodeId add_op(ir::Op op, llvm::ArrayRef<ir::NodeId> operands,
                    SourceLocation at);
  ir::NodeId add_cast(ir::NodeId x, DType to, SourceLocation at);
  int fresh_storage(Storage s = {});
  static const Expr *skip(const Expr *e);

  // --- Scalars (CaptureScalar.cpp).
  std::optional<Value> scalar(const Expr *e);
  std::optional<APValue> fold(const Expr *e);
  std::optional<APValue> fold_effects(const Expr *e);
  std::optional<APValue> fold_update(const Expr *e);
  std::optional<Value> scalar_arith(const Expr *e, DType want);
  std::optional<Value> runtime_scalar(const Expr *e, DType want);
  std::optional<ir::NodeId> materialize(const Value &v, SourceLocation at);
  std::optional<APValue> convert(const APValue &v, QualType from, QualType to);
  std::optional<APValue> fold_binary(BinaryOperatorKind op, const APValue &a,
                                     const APValue &b, QualType operands,
                                     QualType result);
  std::optional<Value> scalar_assign(const Expr *e);

  // --- Calls (CaptureCall.cpp).
  std::optional<Value> call(const CallExpr *c);
  std::optional<Value> inline_call(const CallExpr *c, const FunctionDecl *fn,
                                   std::optional<Slot> this_slot,
                                   int closure);
  std::optional<Value> make_closure(const LambdaExpr *le);
  const Stmt *body_of(const FunctionDecl *fn) const;

  ASTContext &ctx_;
  const FunctionDecl *fd_;
  const PlanEnv &env_;
  // fold() may carry out increments and assignments of known scalars (in
  // conditions: `while (i++ < 3)`).
  bool effects_ = false;
  std::vector<SlotInfo> slots_;
  std::map<std::vector<const void *>, SlotId> slot_ids_;
  std::vector<Frame> frames_;
  QualType tensor_type_;
  ReturnKind fn_ret_ = ReturnKind::None;
  unsigned fn_ret_arity_ = 0; // tensors in the function's returned value
  // `t.defined()` conditions made for optional tensors, per slot.
  llvm::DenseMap<SlotId, Expr *> defined_calls_;
  // `d == -1 || d == x.dim() - 1` conditions made for runtime dims, per
  // dim (its variable, or its expression) and tensor slot.
  std::map<std::pair<const void *, SlotId>, Expr *> last_dim_conds_;
  Expr *last_dim_condition(const Expr *e, const Expr *of);
  // `x.is_contiguous()` conditions, per slot of x (resolve_contiguous).
  llvm::DenseMap<SlotId, Expr *> contiguous_calls_;
  bool resolve_contiguous(SlotId id, Value &cur);
};

// Tensors in a returned value of type `t`: 1 for kiln::Tensor, N for a
// std::pair/std::tuple of tensors or an aggregate of N tensor fields, 0
// otherwise.
unsigned tensor_tuple_arity(QualType t);

// A std::vector<kiln::Tensor> (what Tensor::split and chunk return).
bool is_tensor_vector(QualType t);

// `parts[i]` or `parts.at(i)` of a std::vector<kiln::Tensor>: the vector
// and the index; false for anything else.
bool tensor_vector_element(const Expr *e, const Expr *&vec, const Expr *&index);

} // namespace kiln::plugin::capture
