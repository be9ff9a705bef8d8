// kiln/passes/lowered.h - the lowered program: what the generated code of a
// compiled function does, as data, between the kernel plan and the text.
//
// The kernel plan (schedule.h) says which graph nodes run in which kernel.
// Lowering (codegen/Lower*.cpp) decides everything else once: the guards of
// the fast path (what each checks, in words, and what a failure logs), the
// shapes and allocations, which kernel flavour runs when, the launch shapes,
// the scratch layout of split reductions, and each kernel's loops, loads,
// stores, accumulations and row reductions. Printers walk the result:
//   the C++ printer   host code (guards, launches) and the CPU loops;
//   the CUDA printer  the kernels (it only changes spellings: launch bounds,
//                     16-byte vector accesses, row reductions);
//   the text printer  `kiln-opt --emit=lowered`, what lit tests FileCheck;
//   explain           the guard and kernel lists of explain.json and the
//                     remarks, read off the same statements the host runs.
// Peepholes are passes over it (pair_sincos), so every flavour gets them.
//
// Expressions and statements are C-like: host code and kernels are both C++
// (CUDA C++ for the GPU), and one expression syntax serves both.
#pragma once

#include <kiln/passes/codegen.h>
#include <kiln/passes/ir.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::low {

// ---- expressions ----

struct ExprNode;

// An immutable expression tree (a shared handle; copies are cheap).
class Expr {
public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : n_(std::move(n)) {}
  const ExprNode *operator->() const { return n_.get(); }
  const ExprNode &operator*() const { return *n_; }
  explicit operator bool() const { return bool(n_); }

  Expr operator[](const Expr &i) const;
  Expr operator[](int64_t i) const;
  Expr field(const std::string &name) const;   // e.field
  Expr arrow(const std::string &name) const;   // e->field

private:
  std::shared_ptr<const ExprNode> n_;
};

struct ExprNode {
  enum Kind : uint8_t {
    Var,    // text: a name (also a qualified one: kiln::DType::f32)
    Lit,    // text: a literal as printed ("4", "1.5", "true", "\"x\"")
    Unary,  // text: the prefix operator ("!", "-", "&", "*")
    Binary, // text: the operator; args: lhs, rhs
    Call,   // text: the callee, template arguments included; args
            // (text starting with '.': a member call on args[0])
    Index,  // args: base, index
    Member, // text: "." or "->" then the field name ("." "v"); args: base
    Cast,   // text: the type; args: the value (printed `type(value)`)
    Select, // args: cond, then, else
    Braces, // args: elements; text: a type or "" (`T{a, b}`, `{a, b}`)
  } kind;
  std::string text;
  std::vector<Expr> args;
};

Expr var(std::string name);
Expr lit(std::string text);
Expr lit(int64_t v);
Expr str_lit(const std::string &s); // a C string literal, escaped
Expr call(std::string callee, std::vector<Expr> args);
Expr cast(std::string type, Expr e);
Expr select(Expr c, Expr a, Expr b);
Expr braces(std::vector<Expr> elems);
Expr addr(Expr e);                 // &e
Expr lnot(Expr e);                 // !e
Expr deref(Expr e);                // *e
Expr pre_inc(Expr e);              // ++e
Expr unary(const char *op, Expr e); // op e (prefix)
Expr typed_braces(std::string type, std::vector<Expr> elems); // T{a, b}
Expr binary(const char *op, Expr a, Expr b); // also "+=" and "="
// obj.name(args...): a member function call (name may carry template
// arguments: "data<const float>").
Expr method(Expr obj, std::string name, std::vector<Expr> args = {});

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
inline Expr operator+(Expr a, int64_t b) { return a + lit(b); }
inline Expr operator-(Expr a, int64_t b) { return a - lit(b); }
inline Expr operator*(Expr a, int64_t b) { return a * lit(b); }
inline Expr operator/(Expr a, int64_t b) { return a / lit(b); }
inline Expr operator%(Expr a, int64_t b) { return a % lit(b); }
inline Expr operator<(Expr a, int64_t b) { return a < lit(b); }

// Structural equality (the same text when printed).
bool same(const Expr &a, const Expr &b);

// ---- statements ----

struct Stmt;
using Stmts = std::vector<Stmt>;

// A guard of the fast path: a condition under which the compiled code
// would compute something else than the eager body. `check` says in words
// what must hold (explain.json, the remarks); `message` is what a failure
// logs (KILN_LOGS=guards).
struct Guard {
  std::string check;
  std::string message;
};

// How a loop's iterations may be run.
enum class LoopHint : uint8_t {
  None,
  Unroll, // fully unrolled (register arrays indexed by the loop variable)
  Simd,   // a CPU loop the vectoriser may turn into SIMD code
};

// A kernel launch on the GPU: the kernel (a Function's name), its grid and
// block, and the argument array (a `void *args[]` declared before).
struct LaunchInfo {
  Expr kernel; // kernel_ref(function), or an expression choosing one
  Expr device;
  Expr grid, block;
  Expr args; // a `void *[]` of the kernel's arguments, declared before
};

struct Stmt {
  enum Kind : uint8_t {
    Comment,    // text (one line)
    Decl,       // [qual] type name[array] [= init]; [// text]
    Assign,     // lhs = rhs;  (text: the operator, "=" by default)
    Eval,       // expr;
    Block,      // { body }
    For,        // for (init; cond; step) body   (hint)
    If,         // if (cond) body [else orelse]
    Switch,     // switch (cond) { case labels: ... }   (cases)
    Return,     // return [value];
    Break,      // break;
    // Kernel statements: the element computations of the plan's nodes.
    Load,       // const T name = kiln::scalar::load(value); // text
                // (an element in storage type read as compute type T)
    Store,      // lhs = kiln::scalar::store<T>(value);
                // (a compute-type value written as storage type T)
    Compute,    // const T name = kiln::scalar::op_<op>(args); // text
    SinCos,     // T names[0], names[1]; kiln::scalar::sincos(args[0], ...);
    Accumulate, // lhs = kiln::scalar::combine_<op>(args[0], args[1]);
                // (args[0] holds the earlier elements; usually lhs itself)
    RowReduce,  // lhs = lhs combined over the row's args[0] threads, through
                // the shared memory args[1] (CUDA; type: the accumulator);
                // with args[2], column mode's rows of args[2] columns
    // Host statements.
    GuardCheck, // if (cond) return kiln::rt::guard_failed(kFn, message);
                // (the function declares kFn, its user-facing name)
    Launch,     // a GPU launch
  } kind;

  // Decl: qualifier ("const", "constexpr", "static", "" ), the type, the
  // name, the array brackets ("[4]", "[]", or none), the initialiser.
  // Compute/SinCos: type is the value's type, name the variable (SinCos:
  // sin's and cos' in names). If: an init statement in `init` (C++17).
  std::string qual, type, name, array, text;
  std::vector<std::string> names;
  Expr lhs, value, cond;
  Stmts body, orelse;
  // For: init is body-less Decl/Assign in `init` (at most one).
  std::vector<Stmt> init;
  Expr step; // For: the step expression statement (`t += step`)
  LoopHint hint = LoopHint::None;
  // Switch: case labels (several per case) and bodies.
  std::vector<std::pair<std::vector<Expr>, Stmts>> cases;
  // Compute/Accumulate/RowReduce: the op (KIR mnemonic) and graph node.
  std::string op;
  ir::NodeId node = -1;
  std::vector<Expr> args;
  // GuardCheck.
  Guard guard;
  Expr message_expr; // when the message is a run-time value, not a literal
  // Evaluated (for its effect) when the check fails, before returning: a
  // dtype guard's kiln::rt::note_dtypes call.
  Expr on_failure;
  // Launch.
  LaunchInfo launch;
};

// Builders.
Stmt comment(std::string text);
Stmt decl(std::string qual, std::string type, std::string name,
          Expr init = {}, std::string trailing_comment = "");
Stmt decl_array(std::string type, std::string name, std::string extent,
                std::string trailing_comment = "");
Stmt assign(Expr lhs, Expr rhs, std::string op = "=");
Stmt eval(Expr e);
Stmt block(Stmts body);
Stmt for_loop(Stmt init, Expr cond, Expr step, Stmts body,
              LoopHint hint = LoopHint::None);
Stmt for_loop(Expr cond, Expr step, Stmts body); // for (; cond; step)
Stmt if_then(Expr cond, Stmts body, Stmts orelse = {});
Stmt ret(Expr value = {});
Stmt guard_check(Expr fail, Guard g); // no `fail`: fails unconditionally
Stmt load(std::string type, std::string name, Expr from, std::string text);
Stmt store(Expr to, std::string storage, Expr value);
Stmt compute(std::string type, std::string name, std::string op,
             std::vector<Expr> args, ir::NodeId node, std::string text);
Stmt accumulate(std::string op, Expr lhs, Expr earlier, Expr value,
                std::string text = "");
Stmt row_reduce(std::string op, std::string acc_type, Expr acc, Expr threads,
                Expr smem, Expr columns = Expr());
Stmt brk();
Stmt switch_on(Expr subject,
               std::vector<std::pair<std::vector<Expr>, Stmts>> cases);
Stmt launch(LaunchInfo l);

// The host's handle on a CUDA function (a static kiln::rt::KernelRef).
Expr kernel_ref(const std::string &function);

// ---- kernels ----

enum class Target : uint8_t { Cuda, Cpu };

struct Param {
  std::string type; // "const float *__restrict__", "const int64_t"...
  std::string name;
  bool own_line = false; // printed on a line of its own (the pointers)
};

// One entry of a split reduction's scratch buffer: rows * splits
// accumulators of one reduction, 16-byte aligned. The host allocates the
// sum of the entries; each kernel finds its entry at the same offset.
struct ScratchEntry {
  ir::NodeId reduction = -1;
  std::string acc_type; // C++ type of one accumulator
};

// One generated function: a CUDA kernel or a CPU loop.
struct Function {
  std::string flavour; // "vec", "s32", "rows", "split0", "contig", ...
  std::string name;    // <symbol>_k<i>_<dtype>_<flavour>
  std::string header;  // the comment line above it: what it is for
  std::vector<Param> params;
  Stmts body;
  // CUDA: __launch_bounds__ text ("256", "256, 2").
  std::string launch_bounds;
  // CUDA rows kernels: a template over `tparam` (register slots), called
  // from one __global__ instance per value, each with its launch bounds.
  std::string tparam;
  // When `tflag` is set, a second template parameter, a bool: each
  // instance <name><v> passes false, and a twin <name><v>full passes true
  // (rows that fill every slot: the guards fold away); an instance may
  // leave out either (another template provides it).
  struct Instance {
    int value;
    std::string bounds;
    bool plain = true, full = true;
    int value2 = 0; // tparam2's value (0: none fixed; see tparam2)
  };
  std::vector<Instance> instances;
  std::string tflag;
  // When `tparam2` is set, a third template parameter, an int after the
  // others: an instance of value2 v > 0 is named <name><value>t<v>, one of
  // 0 plain <name><value> (rowsany: TPR, the threads a row fixed at
  // compile time; 0: sp.tpr at run time).
  std::string tparam2;
  // The instances' names before their value (empty: `name`): a second
  // template of other code may provide more instances of one kernel.
  std::string global_name;
  // CPU: the function takes (begin, end, void *ctx).

  // The __global__ functions of a templated CUDA function, one per
  // instance (and FULL twin): name, template arguments, launch bounds.
  struct Global {
    std::string name, targs, bounds;
  };
  std::vector<Global> globals() const;
};

// One fused kernel of the plan, lowered for one target.
struct Kernel {
  int index = 0;          // in the plan
  Target target = Target::Cuda;
  bool reduction = false;
  std::string prefix;     // <symbol>_k<i>_<dtype>
  std::string header;     // CPU: the comment line above the context struct
  std::vector<Param> ctx; // CPU: the context struct (<prefix>_ctx)
  std::vector<ScratchEntry> scratch;
  std::vector<Function> functions;
  // The names of the CUDA functions the host launches (instances of
  // templated ones included), in the order the kernel list gives them.
  std::vector<std::string> entry_points() const;
};

// One dtype specialisation of the fast path.
struct Variant {
  DType dtype = DType::f32; // the dispatch argument's
  std::string name;     // "f32", "bf16_f32" (codegen's Variant::name)
  std::string function; // <symbol>_<name>
  Stmts body;           // guards, shapes, allocations, launches, outputs
  std::vector<Kernel> kernels; // CUDA kernels first, then CPU loops
};

struct Program {
  std::string symbol, user_name;
  ir::Loc loc;
  std::vector<codegen::ArgKind> args;
  size_t outputs = 0;
  bool cuda = true; // CUDA kernels were generated
  Stmts entry;      // defined/device guards and the dtype dispatch
  // mode=reduce-overhead: `entry` is <symbol>_plain, and <symbol> runs it
  // through kiln::rt::graph_call (replayed as a CUDA graph).
  bool cuda_graphs = false;
  // mode=max-autotune: the entry holds a kiln::gen::AutotuneScope (a
  // variant launches a GEMM on CUDA).
  bool autotune = false;
  std::vector<Variant> variants;
  // The body of codegen::caller_checks_symbol(symbol), over its bool
  // parameters held0... (one per caller check); empty when there are none.
  Stmts caller_checks;
  size_t num_caller_checks = 0;
};

// ---- walking ----

// Calls f on every statement of `body`, nested ones included, in order.
void walk(const Stmts &body, const std::function<void(const Stmt &)> &f);
// The guards a body checks, in the order it checks them.
std::vector<Guard> guards_of(const Stmts &body);

// ---- printers ----

// C++ for the host: the fast-path functions (variant functions with their
// CPU loops, then the entry function). CUDA: every kernel of every variant.
std::string print_host(const Program &p);
// Program::caller_checks of `spec`: one GuardCheck per caller check.
void lower_caller_checks(const codegen::FunctionSpec &spec, Program &p);
// The caller-checks function alone (print_host includes it); for host code
// that is not otherwise lowered (backend=eager).
std::string print_caller_checks(const Program &p);
std::string print_cuda(const Program &p);
// The lowered program as text (kiln-opt --emit=lowered).
std::string print_text(const Program &p);
// An expression as C++.
std::string print(const Expr &e);

// ---- passes ----

// sin(a) and cos(a) of the same value in one block become one sincos.
void pair_sincos(Program &p);

} // namespace kiln::low
