// plugin/Capture.h - from the body of a [[kiln::compile]] function to
// compiled regions (the TorchDynamo part).
//
// The body is executed symbolically. Every maximal run of statements that
// can be captured (after unrolling loops with compile-time trip counts,
// folding compile-time conditions and inlining visible helpers) becomes a
// region: a dataflow graph whose inputs are the tensors and scalars the
// run reads and whose outputs are what it leaves behind for later code.
// A branch on a host scalar known when the region starts specialises the
// region, one graph per branch taken. Statements that cannot be captured
// stay as written between regions (graph breaks), and compound statements
// that cannot be captured whole (a loop with a runtime trip count, say)
// keep their shape with their bodies planned the same way.
#pragma once

#include <kiln/passes/codegen.h>
#include <kiln/passes/ir.h>

#include <clang/AST/Type.h>
#include <clang/Basic/SourceLocation.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <functional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class Expr;
class FieldDecl;
class FunctionDecl;
class LambdaCapture;
class Stmt;
class VarDecl;
} // namespace clang

namespace kiln::plugin {

// Where a tensor or scalar lives, as code at a region's boundary names it:
// a variable of the compiled function, or a member path from it or from
// `this` (var == nullptr).
struct Slot {
  const clang::VarDecl *var = nullptr;
  llvm::SmallVector<const clang::FieldDecl *, 2> fields;
  bool operator==(const Slot &o) const {
    return var == o.var && fields == o.fields;
  }
  std::string name() const; // "x", "this->w", "p.w"
  // The dtypes [[kiln::dtype]] gives it: a parameter's (not a member of
  // one); empty: none.
  std::vector<DType> pinned_dtypes() const;
};

struct RegionInput {
  Slot slot;
  // Or a pure expression evaluated where the region starts: the size or
  // rank of a tensor (x.size(-1)).
  const clang::Expr *expr = nullptr;
  codegen::ArgKind kind;
};

// What the rewritten code does with one output of the fast path.
struct RegionOutput {
  enum Kind {
    Assign,   // slot = out (the slot was rebound)
    CopyInto, // slot.copy_(out) (the slot's storage was updated in place)
    Return,   // an element of the returned value
    // The next element of a std::vector<Tensor> local the region built
    // (a hoisted List): `slot.clear()` before the first, then
    // `slot.push_back(out)` in order.
    ListElem,
    // The last store into a tensor argument (Tensor::copy_ of it or of a
    // view of it): kept for its effect, the argument written in place;
    // nothing to hand out.
    Effect,
  };
  Kind kind = Assign;
  Slot slot;
  // Hand out `from` (a slot updated in place) instead of the fast path's
  // tensor, so that storage is shared as in eager code; or a clone of the
  // fast path's tensor (a clone() whose node another output shares).
  Slot from;
  bool use_from = false;
  bool clone = false;
  // Hand out that tensor's .contiguous(): the value is a contiguous() of a
  // tensor from outside, itself or a copy as its layout decides.
  bool contiguous = false;
};

// A scalar the region's statements leave behind, set again in C++ on the
// fast path: `var = value`, or the expression statement `stmt` run again.
// Both are pure (they only read scalars).
struct Replay {
  const clang::VarDecl *var = nullptr;
  const clang::Expr *value = nullptr;
  const clang::Expr *stmt = nullptr;
};

// A branch taken by one specialisation: `cond` (an expression the region's
// start can evaluate) was `value`.
struct Decision {
  const clang::Expr *cond = nullptr;
  bool value = false;
};

enum class ReturnKind { None, Value, Void };

// One specialisation of a region: one graph, one fast path.
struct RegionSpec {
  std::vector<Decision> decisions;
  ir::Graph graph;
  std::vector<RegionInput> inputs;   // per graph argument
  std::vector<RegionOutput> outputs; // per graph output
  ReturnKind ret = ReturnKind::None;
  std::vector<Replay> replays;
  // Guards: these objects are distinct (&a != &b), these tensors do not
  // share storage (in-place updates).
  std::vector<std::pair<Slot, Slot>> distinct_objects;
  std::vector<std::pair<Slot, Slot>> distinct_storage;
  int num_ops = 0;
  std::string fingerprint; // the graph without source locations
  // This specialisation met code it cannot capture: its guard leads to the
  // region's original statements.
  bool eager = false;
};

// A local declared in a region and used after it: declared before the
// region instead.
struct Hoist {
  enum Kind {
    Value,  // default-constructed (scalars: left uninitialised); its
            // initialiser becomes an assignment in the region
    Whole,  // the declaration moves as it is (references to slots,
            // constants, lambdas)
    TempRef // a reference bound to a temporary: it binds to a hidden
            // tensor instead, which the region assigns
  };
  const clang::VarDecl *var = nullptr;
  Kind kind = Value;
};

struct Region {
  std::vector<const clang::Stmt *> stmts; // consecutive, in one list
  std::vector<RegionSpec> specs;
  std::vector<Hoist> hoists;
  bool whole_body = false; // all of the function's body
  int index = 0;           // 1-based, in source order
  int num_ops = 0;         // most ops of any specialisation
};

struct Break {
  clang::SourceLocation loc;
  std::string reason;
};

struct FunctionPlan {
  std::vector<Region> regions;
  std::vector<Break> breaks;
  // Where one region ends and the next starts with no eager statement in
  // between, and why.
  std::vector<Break> splits;
  bool silent = false; // clang reported an error in the body
  // Set when nothing of the function can be compiled (goto, say).
  std::string fatal;
  clang::SourceLocation fatal_loc;
};

// What planning needs from outside the function: the original bodies of
// functions Kiln rewrote already (to inline them) and the original
// initialisers of locals the rewrite hoisted.
struct PlanEnv {
  const llvm::DenseMap<const clang::FunctionDecl *, const clang::Stmt *>
      *original_bodies = nullptr;
  const llvm::DenseMap<const clang::VarDecl *, const clang::Expr *>
      *original_inits = nullptr;
  // Instantiates the body of a function template specialisation that clang
  // would instantiate only at the end of the TU (a helper to inline).
  std::function<void(const clang::FunctionDecl *)> instantiate;
};

FunctionPlan plan_function(clang::ASTContext &ctx,
                           const clang::FunctionDecl *fd,
                           const clang::Stmt *body, const PlanEnv &env);

// The source location of `loc` as the graph records it.
ir::Loc to_ir_loc(const clang::ASTContext &ctx, clang::SourceLocation loc);

// Is `t` (after references and sugar) the class kiln::Tensor?
bool is_kiln_tensor(clang::QualType t);
namespace capture {
// A std::vector<kiln::Tensor>.
bool is_tensor_vector(clang::QualType t);
} // namespace capture

// How the lambda whose call operator `fd` is captures `v` (init-captures
// too); null when fd is no lambda's call operator or v is not captured.
const clang::LambdaCapture *lambda_capture(const clang::FunctionDecl *fd,
                                           const clang::VarDecl *v);

} // namespace kiln::plugin
