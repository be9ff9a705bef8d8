// Lowering a scheduled graph to the lowered program (private to codegen).
//
//   Lower.cpp          compile_function's back half: every variant lowered,
//                      the sincos pass, the printers, explain
//   LowerElement.cpp   the per-element statements of a kernel's nodes
//   LowerPointwise.cpp pointwise kernels: CUDA vec/s32/s64, CPU contig/strided
//   LowerReduce.cpp    reduction kernels: CUDA rows/loop/split/combine, CPU
//                      rows/split, and their scratch layout
//   LowerHost.cpp      the fast-path functions: guards, shapes, launches
#pragma once

#include <kiln/passes/codegen.h>
#include <kiln/passes/ir.h>
#include <kiln/passes/lowered.h>
#include <kiln/passes/schedule.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallSet.h>

#include <functional>
#include <set>
#include <string>

namespace kiln::codegen {

// One dtype specialisation of a function: its optimised graph and plan.
struct Variant {
  DType dtype; // the dispatch argument's (dispatch_arg)
  // Tensor arguments of a fixed dtype (FunctionSpec::arg_dtypes), by
  // arg_index: the entry checks them to pick the variant.
  std::vector<std::pair<int, DType>> pinned;
  // The dtype of the unpinned tensor arguments, then each pinned one's:
  // "bf16", "bf16_f32". Function and kernel names end with it.
  std::string name;
  std::string label; // for people: "bf16 (w: f32)"
  // Added by the dtype profile (FunctionSpec::observed_dtypes): every
  // tensor argument pinned; a pass or the scheduler failing on it drops it
  // with a remark, as any other variant's pass failure.
  bool observed = false;
  ir::Graph graph;
  sched::KernelPlan plan;
};

// ---- spellings shared by every part ----

// C++ spelling of a dtype's storage type ("float", "kiln::half", ...).
const char *storage_type(DType t);
// C++ spelling of the type a value of dtype t is computed in (opmath:
// f16/bf16 compute in float).
const char *compute_type(DType t);
// C++ type a node's value has inside a kernel (weak scalars: double,
// int64_t, bool; tensors: their compute type).
const char *value_type(const ir::Node &n);
// A literal of `v` for a weak scalar of dtype t, exact.
std::string literal(double v, DType t);
// `c = add(a, b)  at app.cpp:7:10`, for comments.
std::string describe_node(const ir::Graph &g, const ir::Node &n);
// Elements per 16-byte vector access for kernel k: 16 / the widest element.
int vector_width(const ir::Graph &g, const sched::Kernel &k);
// <symbol>_k<kernel>_<dtype>_<flavour> (no flavour: the kernel's prefix).
std::string kernel_name(const std::string &symbol, int kernel,
                        const std::string &variant,
                        const std::string &flavour = "");

// ---- element statements ----

using ValueMap = llvm::DenseMap<ir::NodeId, low::Expr>;

// `v<id>`: the variable holding node id's value in a kernel.
low::Expr value_var(ir::NodeId id);
// Node o's value as `want` (a C++ type), from `values` (its value in
// value_type), or a literal when it is a constant.
low::Expr operand(const ir::Graph &g, ir::NodeId o, const char *want,
                  const ValueMap &values);
// Node o is an f16/bf16 intermediate, which eager stores rounded and the
// kernels keep in f32.
bool rounds_in_eager(const ir::Graph &g, ir::NodeId o);
// `values` with o's value rounded to its dtype and back, for the reads
// whose result a rounding can flip (comparisons, argmax).
ValueMap rounded(const ir::Graph &g, ir::NodeId o, const ValueMap &values);
// The statement computing pointwise node `id` from `values`.
low::Stmt compute_node(const ir::Graph &g, ir::NodeId id,
                       const ValueMap &values);
// `<to> = kiln::scalar::store<T>(<o's value>)`: o's value written to `to`
// as its storage type T.
low::Stmt store_node(const ir::Graph &g, ir::NodeId o, const ValueMap &values,
                     low::Expr to);
// `const T v<in> = kiln::scalar::load(<from>); // name`.
low::Stmt load_input(const ir::Graph &g, ir::NodeId in, low::Expr from);

// How a pointwise kernel reaches element i of its inputs and outputs: the
// flavours differ only in this.
struct ElementAccess {
  std::function<low::Expr(int input)> load;   // input i's element
  std::function<low::Expr(int output)> store; // output j's element
  std::function<low::Expr(int scalar)> scalar; // a ScalarInput parameter
  // Where set: the loads of inputs of one element (uniform_input) and the
  // work on them and on scalars alone go here instead, once per thread
  // before its loop (uniform_load(i): input i's element).
  low::Stmts *hoist = nullptr;
  std::function<low::Expr(int input)> uniform_load;
};
// Whether kernel input `in` has one element whatever the shapes (every dim
// of its type a constant 1): it is the same for every element of the
// kernel (a 0-d gradient, a scale unsqueezed to broadcast).
bool uniform_input(const ir::Graph &g, ir::NodeId in);
// The per-element statements of pointwise kernel k.
low::Stmts element_stmts(const ir::Graph &g, const sched::Kernel &k,
                         const ElementAccess &access);

// ---- kernels ----

// The pointer and scalar parameters of kernel k (inputs, outputs,
// scalars): in<i>, out<j>, s<i>. `restrict_kw`: "__restrict__" (CUDA),
// "" (a CPU context struct).
std::vector<low::Param> kernel_params(const ir::Graph &g,
                                      const sched::Kernel &k,
                                      const std::string &restrict_kw);

low::Kernel lower_pointwise_cuda(const ir::Graph &g, const sched::Kernel &k,
                                 int ki, const std::string &symbol,
                                 const std::string &variant);
low::Kernel lower_pointwise_cpu(const ir::Graph &g, const sched::Kernel &k,
                                int ki, const std::string &symbol,
                                const std::string &variant);
low::Kernel lower_reduction_cuda(const ir::Graph &g, const sched::Kernel &k,
                                 int ki, const std::string &symbol,
                                 const std::string &variant);
low::Kernel lower_reduction_cpu(const ir::Graph &g, const sched::Kernel &k,
                                int ki, const std::string &symbol,
                                const std::string &variant);

// Slots of 16 bytes per thread the rows kernel keeps in registers.
int register_slots(const ir::Graph &g, const sched::Kernel &k);
// The slots of the 16-byte rows kernel (its largest instance): more than
// register_slots for f32, recomputing instead of keeping.
int rows_slots_vector(const ir::Graph &g, const sched::Kernel &k);
// Slot counts between the powers of two whose rows the 16-byte rows
// kernel has a FULL instance for (f32: 6, rows of 768 a warp).
std::vector<int> rows_full_between(const ir::Graph &g, const sched::Kernel &k);
// The slots of the 16-byte rows kernel's FULL instance for rows that fill
// exactly that many at a power of two of threads, fewer threads than the
// 4-slot launch would take (kiln::gen::plan_cuda's exact_slots); 0: none.
int rows_exact_slots(const ir::Graph &g, const sched::Kernel &k);
// The element-by-element rows kernel's (rowsany) instances of a thread
// count fixed at compile time, for rows contiguous along R: {slots,
// threads a row} pairs, the launches kiln::gen::plan_cuda makes for many
// such rows, at most register_slots slots; empty: none.
struct FixedRows {
  int slots, tpr;
};
std::vector<FixedRows> rowsany_fixed(const ir::Graph &g, const sched::Kernel &k);
// Whether the reduction kernel has the rows kernel that re-reads the row
// (`rowsre<kRereadThreads>`: f32 layer norm's shape over rows of
// kRereadThreads * kRereadSlots 16-byte slots (4096 elements), a block of
// kRereadThreads a row; LowerReduceCuda.cpp, cuda_rows_reread).
inline constexpr int kRereadThreads = 512, kRereadSlots = 2;
bool rows_reread(const ir::Graph &g, const sched::Kernel &k);
// Whether the reduced dims may be followed by others (rows that are
// neighbours in memory: the GPU's column mode): not for a reduction of
// every dim, over dims ending at -1, or ending at the last dim of a
// tensor of known rank.
bool may_reduce_columns(const ir::Graph &g, const sched::Kernel &k);
// The split reduction's launches: passes, plus one when a reduced output is
// only ready after the last pass (CPU).
int split_launches(const ir::Graph &g, const sched::Kernel &k);
// The scratch a split reduction keeps its partials in, entry by entry.
std::vector<low::ScratchEntry> scratch_layout(const ir::Graph &g,
                                              const sched::Kernel &k);
// Bytes of that scratch for `space` (a RowSpace expression).
low::Expr scratch_bytes(const std::vector<low::ScratchEntry> &layout,
                        const low::Expr &space);

// ---- host ----

// The user's name of argument `arg`, quoted ('x'), else "argument N": how
// guards name arguments.
std::string arg_name(const ir::Graph &g, int arg);
// Argument `arg`'s name as the dtype profile spells it: the parameter's
// name, unquoted, or "@<position>" (1-based) for an unnamed one.
std::string profile_name(const ir::Graph &g, int arg);
// A kernel's tensor input as guards name it: an argument as arg_name does,
// a value an earlier kernel wrote as 'name' (line N).
std::string operand_name(const ir::Graph &g, ir::NodeId id);
// Kernel k's tensor inputs, as operand_name names them, comma-separated.
std::string input_names(const ir::Graph &g, const sched::Kernel &k);
// operand_name of each, joined by ", ".
std::string operand_names(const ir::Graph &g, llvm::ArrayRef<ir::NodeId> ids);
// Whether tensor argument `arg` is used only as attention's mask (its dtype
// may be b8 or the variant's: the runtime's kernel takes either).
bool attention_mask_only(const ir::Graph &g, ir::NodeId arg);
// Tensor arguments used as a `where` condition: b8 in every variant (the
// eager op would reject anything else).
llvm::SmallSet<ir::NodeId, 4> condition_args(const ir::Graph &g);
// Whether argument `arg_index` has dtypes of its own
// (FunctionSpec::arg_dtypes).
bool is_pinned(const FunctionSpec &spec, int arg_index);
// The argument whose dtype picks the variant (its arg_index): the first
// tensor argument that is neither pinned, nor a `where` condition (b8 in
// every variant), nor only attention's mask; else the first pinned one.
int dispatch_index(const FunctionSpec &spec);
// Its node in variant v's graph.
ir::NodeId dispatch_arg(const FunctionSpec &spec, const Variant &v);
// The guard of a shape check (ir::ShapeCheck::raises).
low::Guard shape_check_guard(const ir::ShapeCheck &c);

// The variant's fast-path function (its kernels lowered before).
low::Variant lower_variant(const FunctionSpec &spec, const Variant &v,
                           const Options &opts);
// The entry: definedness and device guards, then the dtype dispatch. With
// `compiled_backward`, a call autograd must record goes to
// <symbol>_autograd (compile_backward) instead of declining.
low::Stmts lower_entry(const FunctionSpec &spec,
                       const std::vector<Variant> &variants,
                       bool compiled_backward);

// The fast-path signature's parameters as hand-written host code spells
// them (kiln/passes/codegen.h): a0, a1, ... then out0, ... (`outputs` of
// them).
std::string fast_path_params(const FunctionSpec &spec, size_t outputs);

// ---- backward (Backward.cpp) ----

// A function's compiled backward, or why there is none.
struct BackwardCode {
  std::string why; // non-empty: no compiled backward, this is why
  ir::Loc why_loc;
  std::string host; // the backward's host code, its eager fallback, and
                    // <symbol>_autograd (before the entry that calls it)
  std::string cuda;
  FunctionCode code; // the backward's remarks, kernels, plan (no text)
  FunctionCode forward; // the forward that saves, when one does (no text)
  std::vector<std::string> saved; // what it saves, for remarks
  size_t grads = 0;  // how many arguments' gradients it computes
  // Shapes the derivation assumed ("'y' has the shape of 'x'"), checked
  // before a call is recorded.
  std::vector<std::string> assumptions;
};
BackwardCode compile_backward(const FunctionSpec &spec, const Options &opts);

// The whole fast path of a function.
low::Program lower_function(const FunctionSpec &spec,
                            const std::vector<Variant> &variants,
                            const Options &opts);

// ---- explain ----

std::vector<KernelInfo> kernel_infos(const FunctionSpec &spec,
                                     const std::vector<Variant> &variants);
// The guards the program checks, in order, merged across variants.
std::vector<GuardInfo> guard_infos(const low::Program &p);
std::vector<VariantGraph> variant_graphs(const std::vector<Variant> &variants);

} // namespace kiln::codegen
