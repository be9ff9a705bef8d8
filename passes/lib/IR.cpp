// The graph IR: the op table built from kiln/ops.def, GraphBuilder, verify.
#include <kiln/passes/ir.h>

#include "NumericUtil.h"
#include "ReduceDims.h"
#include "RewriteUtil.h"

#include <llvm/ADT/Twine.h>
#include <llvm/Support/ErrorHandling.h>

#include <string>
#include <utility>

namespace kiln::ir {

namespace {
using namespace op_traits; // the traits column's names

// Indexed by Op: the three argument/constant ops, ops.def in order (as the
// enum lists it), then to, to_like, to_into, reduce_size, size, matmul,
// linear, bmm, attention, cat and sum_sq_dev.
#define NONE std::nullopt // the identity column's "no identity"
const OpInfo kOpInfo[] = {
    {"input", "Input", 0, OpKind::Argument, TypeRule::None, 0, NONE, "",
     CompositeForm::None, "", ""},
    {"scalar_input", "ScalarInput", 0, OpKind::Argument, TypeRule::None, 0,
     NONE, "", CompositeForm::None, "", ""},
    {"const", "Constant", 0, OpKind::Constant, TypeRule::None, 0, NONE, "",
     CompositeForm::None, "", ""},
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,         \
                       formula, decomposition)                                 \
  {#name,  #Name,    arity, OpKind::Pointwise, TypeRule::rule,                 \
   traits, identity, cxx,   CompositeForm::None, "", decomposition},
#define KILN_REDUCTION(Name, name, rule, identity, combine)                    \
  {#name, #Name, 1, OpKind::Reduction, TypeRule::rule, 0, NONE, "",            \
   CompositeForm::None, "", ""},
#define KILN_COMPOSITE(Name, name, arity, form, operands, decomposition)       \
  {#name, #Name, arity, OpKind::Composite, TypeRule::COMPOSITE, 0, NONE, "",  \
   CompositeForm::form, operands, decomposition},
#define KILN_VIEW(Name, name, arity, args)                                     \
  {#name, #Name, arity, OpKind::View, TypeRule::VIEW, 0, NONE, "",             \
   CompositeForm::None, "", ""},
#include <kiln/ops.def>
    {"to", "Cast", 1, OpKind::Pointwise, TypeRule::CAST, CHEAP, NONE, "",
     CompositeForm::None, "", ""},
    {"to_like", "CastLike", 2, OpKind::Pointwise, TypeRule::CAST, CHEAP, NONE,
     "", CompositeForm::None, "", ""},
    {"to_into", "CastInto", 2, OpKind::Pointwise, TypeRule::CAST, CHEAP, NONE,
     "", CompositeForm::None, "", ""},
    {"reduce_size", "ReduceSize", 1, OpKind::Shape, TypeRule::None, 0, NONE,
     "", CompositeForm::None, "", ""},
    {"size", "Size", 1, OpKind::Shape, TypeRule::None, 0, NONE, "",
     CompositeForm::None, "", ""},
    {"matmul", "Matmul", 2, OpKind::Product, TypeRule::PRODUCT, 0, NONE, "",
     CompositeForm::None, "a, b", ""},
    {"linear", "Linear", 3, OpKind::Product, TypeRule::PRODUCT, 0, NONE, "",
     CompositeForm::None, "x, w, b", ""},
    {"bmm", "Bmm", 2, OpKind::Product, TypeRule::PRODUCT, 0, NONE, "",
     CompositeForm::None, "a, b", ""},
    {"attention", "Attention", -1, OpKind::Product, TypeRule::PRODUCT, 0, NONE,
     "", CompositeForm::None, "q, k, v, mask, is_causal, scale", ""},
    {"cat", "Cat", -1, OpKind::Product, TypeRule::SAME, 0, NONE, "",
     CompositeForm::None, "", ""},
    {"store", "Store", 3, OpKind::Product, TypeRule::SAME, 0, NONE, "",
     CompositeForm::None, "base, dst, src", ""},
    // SUM: a float result in the operand's dtype, 0 over an empty dim.
    {"sum_sq_dev", "SumSqDev", 1, OpKind::Reduction, TypeRule::SUM, 0, NONE,
     "", CompositeForm::None, "", ""},
};
#undef NONE
static_assert(sizeof(kOpInfo) / sizeof(kOpInfo[0]) == kNumOps,
              "the op table and enum Op disagree");

[[noreturn]] void misuse(const std::string &what) {
  llvm::report_fatal_error(llvm::Twine("kiln::ir::GraphBuilder: ") + what);
}
} // namespace

const OpInfo &op_info(Op op) { return kOpInfo[static_cast<int>(op)]; }

ViewKind view_kind(Op op) {
  switch (op) {
#define KILN_POINTWISE(...)
#define KILN_VIEW(Name, name, arity, args)                                     \
  case Op::Name:                                                               \
    return ViewKind::Name;
#include <kiln/ops.def>
  default:
    misuse(std::string("'") + op_info(op).name + "' is not a layout op");
  }
}

std::optional<Op> op_from_name(llvm::StringRef name) {
  for (int i = 0; i < kNumOps; ++i)
    if (name == kOpInfo[i].name)
      return static_cast<Op>(i);
  return std::nullopt;
}

std::optional<DType> dtype_from_name(llvm::StringRef name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(static_cast<DType>(i)))
      return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<Op> op_from_operator(llvm::StringRef spelling, int arity) {
  if (spelling.empty())
    return std::nullopt;
  for (int i = 0; i < kNumOps; ++i)
    if (spelling == kOpInfo[i].cxx && arity == kOpInfo[i].arity)
      return static_cast<Op>(i);
  return std::nullopt;
}

llvm::SmallVector<llvm::StringRef, 4> operand_names(Op op) {
  llvm::SmallVector<llvm::StringRef, 4> names;
  llvm::StringRef rest = op_info(op).operands;
  while (!rest.empty()) {
    auto [name, tail] = rest.split(',');
    names.push_back(name.trim());
    rest = tail;
  }
  return names;
}

namespace {
// One field of a node: doubles by their bits, the rest by ==.
template <class T> bool same_field(const T &a, const T &b) { return a == b; }
bool same_field(double a, double b) {
  return double_bits(a) == double_bits(b);
}
template <class Tuple> bool same_fields(const Tuple &a, const Tuple &b) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return (same_field(std::get<I>(a), std::get<I>(b)) && ...);
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>());
}

template <class T> llvm::hash_code hash_field(const T &v) {
  using llvm::hash_value;
  return hash_value(v);
}
llvm::hash_code hash_field(double v) {
  return llvm::hash_value(double_bits(v));
}
template <class T, unsigned N>
llvm::hash_code hash_field(const llvm::SmallVector<T, N> &v) {
  return llvm::hash_combine_range(v.begin(), v.end());
}
template <class Tuple> llvm::hash_code hash_fields(const Tuple &t) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return llvm::hash_combine(hash_field(std::get<I>(t))...);
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>());
}
} // namespace

bool same_value(const Node &a, const Node &b) {
  return same_fields(a.value_fields(), b.value_fields());
}

bool operator==(const Node &a, const Node &b) {
  return same_value(a, b) && a.origin_fields() == b.origin_fields();
}

llvm::hash_code hash_value(const Node &n) {
  return hash_fields(n.value_fields());
}

llvm::hash_code hash_value(const Type &t) {
  llvm::hash_code h = llvm::hash_combine(t.dtype, t.scalar, t.shape.ranked);
  for (const SymDim &d : t.shape.dims)
    h = llvm::hash_combine(h, d.value, d.symbol);
  return h;
}

int Graph::num_args() const {
  int n = 0;
  for (const Node &node : nodes)
    n += op_info(node.op).kind == OpKind::Argument;
  return n;
}

std::vector<NodeId> Graph::args() const {
  std::vector<NodeId> result(num_args(), -1);
  for (NodeId id = 0; id < (NodeId)nodes.size(); ++id) {
    const Node &n = nodes[id];
    if (op_info(n.op).kind == OpKind::Argument && n.arg_index >= 0 &&
        n.arg_index < (int)result.size())
      result[n.arg_index] = id;
  }
  return result;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(nodes.size(), 0);
  for (const Node &n : nodes)
    for (NodeId o : n.operands)
      ++uses[o];
  for (NodeId o : outputs)
    ++uses[o];
  return uses;
}

NodeId GraphBuilder::input(int arg_index, Type t, std::string name, Loc loc) {
  Node n;
  n.op = Op::Input;
  n.type = std::move(t);
  n.type.scalar = false;
  n.arg_index = arg_index;
  n.name = std::move(name);
  n.loc = std::move(loc);
  return add(std::move(n));
}

NodeId GraphBuilder::scalar_input(int arg_index, DType dt, std::string name,
                                  Loc loc) {
  Node n;
  n.op = Op::ScalarInput;
  n.type = Type::weak_scalar(dt);
  n.arg_index = arg_index;
  n.name = std::move(name);
  n.loc = std::move(loc);
  return add(std::move(n));
}

NodeId GraphBuilder::constant(double v, DType dt, Loc loc) {
  Node n;
  n.op = Op::Constant;
  n.type = Type::weak_scalar(dt);
  // A constant holds a value of its own type, as the C++ it came from.
  n.constant = round_to_dtype(v, dt);
  n.loc = std::move(loc);
  return add(std::move(n));
}

NodeId GraphBuilder::op(Op op, llvm::ArrayRef<NodeId> operands, Loc loc,
                        std::string name) {
  Node n;
  n.op = op;
  n.operands.assign(operands.begin(), operands.end());
  n.loc = std::move(loc);
  n.name = std::move(name);
  return add(std::move(n));
}

NodeId GraphBuilder::add(Node n) {
  const OpInfo &info = op_info(n.op);
  if (!takes_operands(n.op, n.operands.size()))
    misuse(std::string("'") + info.name + "' takes " + arity_text(n.op) +
           " operands, got " +
           std::to_string(n.operands.size()));
  NodeId id = (NodeId)g_.nodes.size();
  for (NodeId o : n.operands)
    if (o < 0 || o >= id)
      misuse("operand %" + std::to_string(o) + " of node %" +
             std::to_string(id) + " is not an earlier node");
  g_.nodes.push_back(std::move(n));
  return id;
}

std::string verify(const Graph &g) {
  auto where = [](NodeId id) { return "node %" + std::to_string(id) + ": "; };
  std::vector<int> arg_seen;
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    if (static_cast<int>(n.op) >= kNumOps)
      return where(id) + "invalid op";
    const OpInfo &info = op_info(n.op);
    if (!takes_operands(n.op, n.operands.size()))
      return where(id) + "'" + info.name + "' takes " + arity_text(n.op) +
             " operands, has " +
             std::to_string(n.operands.size());
    for (NodeId o : n.operands)
      if (o < 0 || o >= id)
        return where(id) + "operand %" + std::to_string(o) +
               " is not an earlier node";
    switch (info.kind) {
    case OpKind::Argument:
      if (n.arg_index < 0)
        return where(id) + "argument without an arg_index";
      if ((int)arg_seen.size() <= n.arg_index)
        arg_seen.resize(n.arg_index + 1, 0);
      if (arg_seen[n.arg_index]++)
        return where(id) + "argument number " + std::to_string(n.arg_index) +
               " appears twice";
      if (n.type.scalar != (n.op == Op::ScalarInput))
        return where(id) + (n.op == Op::Input
                                ? "a tensor argument has a scalar type"
                                : "a scalar argument has a tensor type");
      break;
    case OpKind::Constant:
      if (!n.type.scalar)
        return where(id) + "a constant has a tensor type";
      break;
    case OpKind::Pointwise:
    case OpKind::Reduction:
    case OpKind::Composite:
    case OpKind::Shape:
    case OpKind::View:
    case OpKind::Product:
      break;
    }
    // The text form carries attributes only where they mean something.
    if (!has_dims_attribute(n.op) && (!n.dims.empty() || n.keepdim))
      return where(id) + "'" + info.name + "' has no dims/keepdim attributes";
    if (n.op != Op::Cast && n.cast_to != Node().cast_to)
      return where(id) + "'" + info.name + "' has no dtype attribute";
    if (n.type.scalar && n.type.shape.ranked)
      return where(id) + "a scalar type has a shape";
  }
  for (size_t i = 0; i < arg_seen.size(); ++i)
    if (!arg_seen[i])
      return "argument number " + std::to_string(i) + " is missing";
  for (NodeId o : g.outputs)
    if (o < 0 || o >= (NodeId)g.nodes.size())
      return "output %" + std::to_string(o) + " is not a node";
  return "";
}

} // namespace kiln::ir
