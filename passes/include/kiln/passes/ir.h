// kiln/passes/ir.h - the graph IR: a typed SSA dataflow graph of tensor ops.
//
// A Graph is a list of nodes in topological order; a node's id is its index
// and its operands are ids of earlier nodes. Each node produces one value.
// Graph arguments are Input (tensor) and ScalarInput (host scalar) nodes.
// Passes build new graphs rather than patching nodes in place; see
// GraphBuilder. The text form (KIR) is in kiln/passes/text.h.
//
// This library knows nothing of Clang: the plugin builds graphs through
// this API, kiln-opt builds them from text.
#pragma once

#include <kiln/dtype.h>
#include <kiln/op_traits.h>
#include <kiln/view_kind.h>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/Hashing.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::ir {

enum class Op : uint16_t {
  Input,       // tensor argument number `arg_index`
  ScalarInput, // host scalar argument (double, int64_t or bool), a runtime value
  Constant,    // compile-time scalar constant `constant`
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition) Name,
#define KILN_REDUCTION(Name, name, rule, identity, combine) Name,
#define KILN_COMPOSITE(Name, name, arity, form, operands, decomposition) Name,
#define KILN_VIEW(Name, name, arity, args) Name,
#include <kiln/ops.def>
  // Operand 0 converted to the node's `cast_to` dtype (Tensor::to(DType)):
  // a pointwise op whose value is kiln::scalar::op_to's.
  Cast,
  // Operand 0 converted to operand 1's dtype (`x.to(y.dtype())`); operand 1
  // is not read. decompose replaces it by a cast (or by operand 0 when the
  // dtypes agree) once types are known.
  CastLike,
  // The result of an in-place op (operand 0) stored into the tensor it
  // updates (operand 1, not read), as eager's `x op= y` does: converted to
  // operand 1's dtype, which decompose checks it may be (kiln::can_cast;
  // where eager raises, the variant is not compiled).
  CastInto,
  // An i64 weak scalar known at run time: the number of elements of
  // operand 0 over `dims` (all dims when empty). Mean and var divide by it.
  ReduceSize,
  // An i64 host scalar: operand 0's extent along dims[0] (negative counts
  // from the end), read by the host from the shapes it computes before the
  // first launch. sink-cat makes it, of arguments and views only (the
  // values whose shapes the host knows without running a kernel).
  Size,
  // Matrix products, run by the runtime's GEMM (kiln/matmul.h, kiln/gemm.h)
  // with PyTorch's shape rules: matmul(a, b) (torch.matmul), linear(x, w,
  // b) (x @ w^T + b; b a constant when there is none), and bmm(a, b)
  // (torch.bmm: 3-D operands of one batch, no broadcasting).
  Matmul,
  Linear,
  Bmm,
  // Scaled dot-product attention, run by the runtime's fused kernel
  // (kiln/attention.h): attention(q, k, v, mask, is_causal[, scale]). mask
  // is a tensor or a scalar constant for none; is_causal an i64/b8 host
  // scalar; scale an f64 host scalar, 1/sqrt(E) when absent.
  Attention,
  // Concatenation (kiln::cat, kiln/join.h): cat(t0, ..., tn-1, dim), n >= 1
  // tensors then the dim, an i64 constant; the result has the tensors'
  // promoted dtype. Run by the runtime's op (a copy per tensor) after the
  // host checked the shapes (kiln::gen::cat_shape).
  Cat,
  // An in-place copy into an argument (Tensor::copy_ on a tensor argument
  // or a view of one): store(base, dst, src) writes src, broadcast to dst's
  // shape and converted to its dtype, into dst's elements, where dst is a
  // view of base (or base itself), base the argument as it is at this
  // point (an Input, or an earlier store into it). Its value is base after
  // the write: what the code after the copy_ reads of the argument is this
  // node and views of it, so a kernel that reads them runs after the
  // store. Run by the runtime's copy after the host checked that src
  // broadcasts to dst (kiln::gen::store_fits). Nothing before it in the
  // graph reads base's elements (the plugin captures no such region), so
  // no earlier kernel can see the write.
  Store,
  // A reduction the compiler makes (kiln::passes::welford), not an eager
  // op: the sum over `dims` of (x - mean(x))^2, operand 0's squared
  // deviations from its own mean over those dims, in one pass by Welford's
  // update (kiln::scalar::MomentAcc). var's decomposition computes it in
  // two passes: the mean, then the squares.
  SumSqDev,
};

// Reduction: reduces operand 0 over `dims`. Composite: defined only by its
// decomposition (decompose replaces it). Shape: a value computed from a
// shape at run time (ReduceSize, Size). Product: a library kernel, not
// generated code: a matrix product (a GEMM), attention (the runtime's fused
// kernel) or a concatenation. View: a layout op (kiln/ops.def's KILN_VIEW)
// of operand 0, its integer arguments i64 scalar operands after it; the
// host makes it, kernels read it through its strides.
enum class OpKind : uint8_t {
  Argument,
  Constant,
  Pointwise,
  Reduction,
  Composite,
  Shape,
  Product,
  View
};
enum class TypeRule : uint8_t {
  None,
  SAME,
  FLOAT,
  COMPARE,
  WHERE,
  SUM,      // reduction: integers and bools accumulate to i64
  INDEX,    // reduction: i64 index (argmax)
  CAST,     // to: the node's cast_to; to_like: operand 1's dtype
  PRODUCT,  // matmul, linear, bmm, attention: the operands' one floating dtype
  VIEW,     // a layout op: operand 0's dtype
  COMPOSITE // typed by its decomposition
};

// The traits (bits of op_traits: EXPENSIVE, COMMUTATIVE, NO_B8) and form
// columns of kiln/ops.def.
using CompositeForm = op_traits::Form;

struct OpInfo {
  const char *name;      // KIR mnemonic ("add", "sin", "input", ...)
  const char *enum_name; // kiln::ir::Op's (and kiln::OpId's) spelling: "Add"
  int arity; // operand count (0 for arguments and constants); -1: one or more
  OpKind kind;
  TypeRule rule;
  uint8_t traits;                 // op_traits bits
  std::optional<double> identity; // e: op(x, e) == x bit for bit
  const char *cxx;                // the eager API's C++ operator ("+"), or ""
  CompositeForm form;
  const char *operands;      // composites: operand names ("x, weight, eps")
  const char *decomposition; // KIR snippet from kiln/ops.def, or ""
};
const OpInfo &op_info(Op op);
std::optional<Op> op_from_name(llvm::StringRef name);
// The dtype `name` names ("f32", "bf16", "i64"), as dtype_name spells it.
std::optional<DType> dtype_from_name(llvm::StringRef name);
// The op the eager API's C++ operator `spelling` ("+", "==") stands for
// when given `arity` operands ("-": sub with two, neg with one).
std::optional<Op> op_from_operator(llvm::StringRef spelling, int arity);
inline bool is_pointwise(Op op) { return op_info(op).kind == OpKind::Pointwise; }
inline bool is_reduction(Op op) { return op_info(op).kind == OpKind::Reduction; }
inline bool is_composite(Op op) { return op_info(op).kind == OpKind::Composite; }
inline bool is_product(Op op) { return op_info(op).kind == OpKind::Product; }
// A GEMM (matmul, linear, bmm): a product with an epilogue.
inline bool is_gemm(Op op) {
  return op == Op::Matmul || op == Op::Linear || op == Op::Bmm;
}
inline bool is_view(Op op) { return op_info(op).kind == OpKind::View; }
// Whether a node of `op` may have `n` operands.
inline bool takes_operands(Op op, size_t n) {
  if (op == Op::Attention)
    return n >= 5 && n <= 7;
  if (op == Op::Cat)
    return n >= 2;
  int a = op_info(op).arity;
  return a < 0 ? n >= 1 : n == size_t(a);
}
// How many operands op takes, for messages: "2", "5 to 7", "1 or more".
inline std::string arity_text(Op op) {
  if (op == Op::Attention)
    return "5 to 7";
  if (op == Op::Cat)
    return "2 or more";
  int a = op_info(op).arity;
  return a < 0 ? "1 or more" : std::to_string(a);
}
// The runtime's ViewKind of a layout op (the same kiln/ops.def entry).
ViewKind view_kind(Op op);
// The activations a GEMM's epilogue applies (cuBLASLt's relu and GELU;
// kiln/gemm.h): decompose leaves them whole after a product, the scheduler
// fuses them into it.
inline bool is_epilogue_activation(Op op) {
  return op == Op::Relu || op == Op::Gelu || op == Op::GeluTanh;
}
inline bool is_commutative(Op op) {
  return op_info(op).traits & op_traits::COMMUTATIVE;
}
inline bool is_expensive(Op op) {
  return op_info(op).traits & op_traits::EXPENSIVE;
}
inline bool rejects_b8(Op op) { return op_info(op).traits & op_traits::NO_B8; }
// A result that jumps at thresholds of its operands: a comparison, or an op
// with the DISCRETE trait (trunc_div).
inline bool discrete_result(Op op) {
  return op_info(op).rule == TypeRule::COMPARE ||
         (op_info(op).traits & op_traits::DISCRETE);
}
// e with op(x, e) == x for every x, bit for bit (and op(e, x) == x when
// the op is commutative), or none.
inline std::optional<double> identity_element(Op op) {
  return op_info(op).identity;
}
// A reduction whose accumulator is a (value, index) pair and whose result
// is the i64 index (argmax: rule INDEX).
inline bool reduces_to_index(Op op) {
  return is_reduction(op) && op_info(op).rule == TypeRule::INDEX;
}
// A reduction whose accumulator is a kiln::scalar::MomentAcc (shift, mean,
// m2, count) and whose result is the m2 (sum_sq_dev).
inline bool reduces_moments(Op op) { return op == Op::SumSqDev; }
// A reduction whose op-table identity is only a start value (amax, amin,
// argmax: rule SAME or INDEX, kiln/ops.def): over an empty dimension eager
// raises. Sum's identity (rule SUM) is its result there.
inline bool empty_reduction_raises(Op op) {
  return is_reduction(op) && op_info(op).rule != TypeRule::SUM;
}
// A composite's operand names, x first (its operands column).
llvm::SmallVector<llvm::StringRef, 4> operand_names(Op op);

// One dimension of a symbolic shape: a known extent (>= 0) or a symbol s<N>.
struct SymDim {
  int64_t value = 0; // extent, when !symbolic
  int symbol = -1;   // symbol number, when symbolic
  static SymDim constant(int64_t v) { return {v, -1}; }
  static SymDim sym(int s) { return {0, s}; }
  bool is_symbolic() const { return symbol >= 0; }
  bool operator==(const SymDim &o) const {
    return value == o.value && symbol == o.symbol;
  }
};

// A tensor shape whose rank may be unknown (`[*]`) and whose dims may be
// symbolic (`[s0, 4]`). Rank 0 is `[]`.
struct Shape {
  bool ranked = false;
  llvm::SmallVector<SymDim, 4> dims;
  static Shape unranked() { return {}; }
  static Shape ranked_dims(llvm::ArrayRef<SymDim> d) {
    Shape s;
    s.ranked = true;
    s.dims.assign(d.begin(), d.end());
    return s;
  }
  bool operator==(const Shape &o) const {
    return ranked == o.ranked && dims == o.dims;
  }
};

// The type of a value: a tensor of `dtype` and `shape`, or (scalar) a weak
// host scalar of `dtype` (f64, i64 or b8) that promotes like a Python
// number (kiln::promote_with_scalar).
struct Type {
  DType dtype = DType::f32;
  bool scalar = false;
  Shape shape;
  static Type tensor(DType dt, Shape s = Shape::unranked()) {
    return {dt, false, std::move(s)};
  }
  static Type weak_scalar(DType dt) { return {dt, true, {}}; }
  bool operator==(const Type &o) const {
    return dtype == o.dtype && scalar == o.scalar && shape == o.shape;
  }
};

// Where a node came from in the user's source (file may be empty).
struct Loc {
  std::string file;
  unsigned line = 0, col = 0;
  bool valid() const { return line != 0; }
  bool operator==(const Loc &o) const = default;
};

using NodeId = int;

struct Node {
  Op op = Op::Constant;
  llvm::SmallVector<NodeId, 3> operands;
  Type type;
  double constant = 0; // Constant: its value (integers exact below 2^53)
  int arg_index = -1;  // Input / ScalarInput: position in the argument list
  // Reductions, composites and ReduceSize: the dims reduced (negative count
  // from the end; empty = all dims) and whether they stay as size 1.
  llvm::SmallVector<int64_t, 2> dims;
  bool keepdim = false;
  DType cast_to = DType::f32; // Cast: the dtype it converts to
  std::string name;    // the user's name for the value, "" if none
  Loc loc;

  // Every field, once, in two groups. What the node computes: same_value,
  // hash_value, the pipeline's fixed point (same_graph) and cse's key are
  // made of these. Where it came from: the user's name and source location.
  // A new field goes into one of them (a static_assert below counts), and
  // into KIR's printer and parser (kiln/passes/text.h), which are the one
  // serialisation (kiln-opt, the plugin's PCH payload and fingerprints):
  // test/passes/api.cpp fails while a field does not survive print -> parse.
  auto value_fields() const {
    return std::tie(op, operands, type, constant, arg_index, dims, keepdim,
                    cast_to);
  }
  auto origin_fields() const { return std::tie(name, loc); }
};

namespace detail {
// Converts to anything: how many initialisers an aggregate takes is how
// many fields it has.
struct AnyField {
  template <class T> operator T() const;
};
template <class T, class... Fields> constexpr size_t field_count() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; })
    return field_count<T, Fields..., AnyField>();
  else
    return sizeof...(Fields);
}
} // namespace detail
static_assert(
    detail::field_count<Node>() ==
        std::tuple_size_v<decltype(Node().value_fields())> +
            std::tuple_size_v<decltype(Node().origin_fields())>,
    "a field of ir::Node is in neither value_fields() nor origin_fields(): "
    "add it to one, to KIR's printer and parser (KirPrinter.cpp, "
    "KirParser.cpp) and to the round-trip graph of test/passes/api.cpp");

// Field by field, a constant by its bits (-0.0 is not 0.0, a NaN is itself).
bool same_value(const Node &a, const Node &b); // value_fields
bool operator==(const Node &a, const Node &b); // every field
llvm::hash_code hash_value(const Node &n);     // value_fields
llvm::hash_code hash_value(const Type &t);

// The shape computation of a value that dce dropped but whose eager op can
// raise (shapes that do not broadcast, a dim out of range, amax of an empty
// dim): the compiled code checks these shapes, and eager runs, and raises,
// where they fail. Operands index earlier checks of the same graph; scalars
// (which have no shape) are left out. Input entries name argument
// `arg_index`.
struct ShapeCheck {
  Op op = Op::Input; // Input, a pointwise op or a reduction
  llvm::SmallVector<int, 3> operands;
  int arg_index = -1;
  llvm::SmallVector<int64_t, 2> dims; // as Node::dims
  bool keepdim = false;
  bool raises = false; // this op itself can raise (else a step towards one)
  std::string name;    // the user's name for the dropped value
  Loc loc;
};

struct Graph {
  std::string name;        // e.g. the user's function name
  std::vector<Node> nodes; // topological order; id == index
  std::vector<NodeId> outputs;
  // Dropped values whose errors eager would raise (dce); printed in KIR as
  // `# check: ...`.
  std::vector<ShapeCheck> checks;
  // Relations between symbolic dims that the graph's types rely on, e.g.
  // "s0 == s1" when [s0] and [s1] were broadcast together (infer_types);
  // the compiled code must guard them. Printed in KIR as `# assume: ...`.
  std::vector<std::string> assumptions;

  const Node &node(NodeId id) const { return nodes[id]; }
  int num_args() const; // Input + ScalarInput nodes
  // Argument nodes ordered by arg_index.
  std::vector<NodeId> args() const;
  // Number of uses of each node (outputs count as uses).
  std::vector<int> use_counts() const;
};

// A cat node's dim: its last operand, an i64 constant (infer_types checks).
inline int64_t cat_dim(const Graph &g, const Node &cat) {
  return int64_t(g.node(cat.operands.back()).constant);
}
// An attention node's optional seventh operand, an i64 constant: what it
// was written as (fuse-attention). Two matmuls: their batch dims must
// broadcast as matmul's (key and value heads equal to the query's, or 1)
// where scaled_dot_product_attention also takes fewer key heads dividing
// the query's; two bmms: q, k and v 3-D, of one batch size.
enum class AttentionProducts : int { None = 0, Matmul = 1, Bmm = 2 };
inline AttentionProducts attention_products(const Graph &g, const Node &n) {
  return n.operands.size() == 7
             ? AttentionProducts(int(g.node(n.operands[6]).constant))
             : AttentionProducts::None;
}
inline bool attention_of_products(const Graph &g, const Node &n) {
  return attention_products(g, n) != AttentionProducts::None;
}

// Appends nodes with checked operands. Type fields are filled by
// infer_types (kiln/passes/passes.h) unless the caller sets them.
class GraphBuilder {
public:
  explicit GraphBuilder(std::string name) { g_.name = std::move(name); }
  NodeId input(int arg_index, Type t, std::string name = "", Loc loc = {});
  NodeId scalar_input(int arg_index, DType dt, std::string name = "",
                      Loc loc = {});
  NodeId constant(double v, DType dt = DType::f64, Loc loc = {});
  NodeId op(Op op, llvm::ArrayRef<NodeId> operands, Loc loc = {},
            std::string name = "");
  NodeId add(Node n); // operands must refer to earlier nodes
  void output(NodeId id) { g_.outputs.push_back(id); }
  Graph &graph() { return g_; }
  Graph take() { return std::move(g_); }

private:
  Graph g_;
};

// The op table's type rules, applied to a node's operand types (one place
// for type inference, constant folding and codegen):
//   common_dtype: the dtype the operands are promoted to (for WHERE: the
//     value operands 1 and 2), by kiln::promote_types between tensors and
//     kiln::promote_with_scalar for weak scalars;
//   compute_dtype: the dtype the formula is evaluated in before opmath
//     widening (FLOAT: to_floating(common); others: common);
//   result_dtype: the node's result dtype (COMPARE: b8; else compute_dtype);
//   result_is_scalar: all operands are weak scalars (Python number rules).
// Reductions and composites: common and compute dtype are operand 0's (SUM
// computes integers and bools in i64), the result is compute_dtype (INDEX:
// i64); reduce_size is i64.
DType common_dtype(Op op, llvm::ArrayRef<Type> operands);
DType compute_dtype(Op op, llvm::ArrayRef<Type> operands);
DType result_dtype(Op op, llvm::ArrayRef<Type> operands);
bool result_is_scalar(llvm::ArrayRef<Type> operands);
// The weak scalar kind a `to` of a weak scalar gives: f64, i64 and b8 for
// themselves; f32 and i32 round or wrap the value (as static_cast<float>
// and static_cast<int32_t>) and keep the kind, f64 or i64 (a C++ float or
// int32_t is a double or an int64 in the graph); nullopt for the others.
std::optional<DType> weak_cast_kind(DType cast_to);

// Checks structural invariants (operand ids earlier than the node, arity,
// argument numbering, outputs in range). Returns "" or a description.
std::string verify(const Graph &g);

} // namespace kiln::ir
