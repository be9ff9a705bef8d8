// Shared pieces of the CUDA, CPU and host emitters (private to codegen).
#pragma once

#include <kiln/passes/codegen.h>
#include <kiln/passes/ir.h>
#include <kiln/passes/schedule.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <set>
#include <string>

namespace kiln::codegen {

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

// How a kernel reaches its inputs and outputs: the emitters differ only in
// this. `load(i)` is an expression for input i (index into Kernel::inputs)
// in its storage type; `store(j, value)` is a statement writing output j.
struct ElementAccess {
  std::function<std::string(int input)> load;
  std::function<std::string(int output, const std::string &value)> store;
  std::function<std::string(int scalar)> scalar; // a ScalarInput parameter
};

// `v<id>`: the variable holding node id's value in generated code.
std::string var(ir::NodeId id);
// `c = add(a, b)  at app.cpp:7:10`, for comments.
std::string describe_node(const ir::Graph &g, const ir::Node &n);
// Node o's value as `want` (a C++ type), from `expr` (its value in
// value_type) or inlined when it is a constant.
std::string operand_expr(const ir::Graph &g, ir::NodeId o, const char *want,
                         const llvm::DenseMap<ir::NodeId, std::string> &expr);
// Node o is an f16/bf16 intermediate, which eager stores rounded and the
// kernels keep in f32.
bool rounds_in_eager(const ir::Graph &g, ir::NodeId o);
// `expr` with o's value rounded to its dtype and back, for the reads whose
// result a rounding can flip (comparisons, argmax).
llvm::DenseMap<ir::NodeId, std::string>
rounded(const ir::Graph &g, ir::NodeId o,
        const llvm::DenseMap<ir::NodeId, std::string> &expr);
// `const T v<id> = kiln::scalar::op_<name>(...); // comment` for a
// pointwise node, operands from `expr`.
void emit_pointwise_node(llvm::raw_ostream &os, const ir::Graph &g,
                         ir::NodeId id,
                         const llvm::DenseMap<ir::NodeId, std::string> &expr,
                         const std::string &indent);

// The per-element code of kernel `k`: one line per node, each commented
// with the user's name for the value and its source line.
std::string element_body(const ir::Graph &g, const sched::Kernel &k,
                         const ElementAccess &access, const std::string &indent);

// The guard of a shape check (ir::ShapeCheck::raises): what
// it checks and the message logged when it fails.
std::string shape_check_text(const ir::ShapeCheck &c);
std::string shape_check_message(const ir::ShapeCheck &c);

// Elements per 16-byte vector access for kernel k: 16 / the widest element.
int vector_width(const ir::Graph &g, const sched::Kernel &k);

// Names shared between the CUDA and host emitters.
std::string kernel_name(const std::string &symbol, int kernel, DType variant,
                        const char *path);

// `,\n    const float *__restrict__ in0, ...`: a CUDA kernel's pointer and
// scalar parameters for kernel k (inputs, outputs, scalars).
std::string cuda_params(const ir::Graph &g, const sched::Kernel &k);

// Reduction kernels (Reduce.cpp): CUDA rows/loop/split kernels, CPU
// rows/split loops, and the host code that picks one and launches it.
void emit_cuda_reduction(const ir::Graph &g, const sched::Kernel &k, int ki,
                         const std::string &symbol, DType variant,
                         llvm::raw_ostream &os, std::vector<std::string> &names);
void emit_cpu_reduction(const ir::Graph &g, const sched::Kernel &k, int ki,
                        const std::string &symbol, DType variant,
                        llvm::raw_ostream &os);
// Slots of 16 bytes per thread the rows kernel keeps in registers.
int register_slots(const ir::Graph &g, const sched::Kernel &k);
// Number of launches a split-mode reduction needs (passes, plus one when a
// reduced output is only ready after the last pass).
int split_launches(const ir::Graph &g, const sched::Kernel &k);

// Kernel sources for one specialised graph (appended to `out`), and the
// names defined.
void emit_cuda_kernels(const ir::Graph &g, const sched::KernelPlan &plan,
                       const std::string &symbol, DType variant,
                       std::string &out, std::vector<std::string> &names);

// CPU loop functions (static) for one specialised graph.
void emit_cpu_loops(const ir::Graph &g, const sched::KernelPlan &plan,
                    const std::string &symbol, DType variant, std::string &out);

// One dtype specialisation of a function: its optimised graph and plan.
struct Variant {
  DType dtype;
  ir::Graph graph;
  sched::KernelPlan plan;
};

// The user's name of argument `arg`, quoted ('x'), else "argument N": how
// guard messages (host code and explain.json alike) name arguments.
std::string arg_name(const ir::Graph &g, int arg);
// Kernel k's tensor inputs, as arg_name names them, comma-separated.
std::string input_names(const ir::Graph &g, const sched::Kernel &k);
// The argument whose dtype picks the variant: the first tensor argument
// that has the variant's dtype (a `where` condition is b8 in every variant).
ir::NodeId dispatch_arg(const Variant &v);
// The tensor arguments and reduced values a full value of reduction kernel
// k is computed from (through full pointwise nodes).
void full_leaves(const sched::Kernel &k, const ir::Graph &g, ir::NodeId id,
                 std::set<ir::NodeId> &inputs, bool &reduced);

// The fast-path function (and its per-variant helpers) for `spec`.
std::string emit_host_function(const FunctionSpec &spec,
                               const std::vector<Variant> &variants,
                               const Options &opts);

} // namespace kiln::codegen
