// infer-types: dtypes by the op table's rules (kiln/dtype.h promotion),
// shapes by broadcasting with symbolic dims.
#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include "RewriteUtil.h"

#include <llvm/Support/raw_ostream.h>

namespace kiln::passes {

using namespace kiln::ir;

char PassError::ID = 0;

void PassError::log(llvm::raw_ostream &os) const {
  if (loc.valid())
    os << loc.file << ":" << loc.line << ":" << loc.col << ": " << message;
  else
    os << value << ": " << message;
}

std::error_code PassError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

namespace {

std::string dim_string(const SymDim &d) {
  return d.is_symbolic() ? "s" + std::to_string(d.symbol)
                         : std::to_string(d.value);
}

void assume(std::vector<std::string> *assumptions, std::string relation) {
  if (assumptions && !llvm::is_contained(*assumptions, relation))
    assumptions->push_back(std::move(relation));
}

// Broadcasts one dim pair. A symbolic dim stands for an extent that is not
// broadcast (as Dynamo's 0/1 specialisation): against another symbol or an
// extent other than 1 the two must be equal, which is recorded.
std::optional<SymDim> broadcast_dim(const SymDim &a, const SymDim &b,
                                    std::vector<std::string> *assumptions) {
  if (a == b)
    return a;
  if (!a.is_symbolic() && a.value == 1)
    return b;
  if (!b.is_symbolic() && b.value == 1)
    return a;
  if (!a.is_symbolic() && !b.is_symbolic())
    return std::nullopt;
  if (a.is_symbolic() && b.is_symbolic()) {
    const SymDim &lo = a.symbol < b.symbol ? a : b,
                 &hi = a.symbol < b.symbol ? b : a;
    assume(assumptions, dim_string(lo) + " == " + dim_string(hi));
    return a; // keep the first
  }
  const SymDim &sym = a.is_symbolic() ? a : b, &ext = a.is_symbolic() ? b : a;
  assume(assumptions, dim_string(sym) + " == " + dim_string(ext));
  return ext;
}

std::optional<Shape> broadcast(const Shape &a, const Shape &b,
                               std::vector<std::string> *assumptions) {
  if (!a.ranked || !b.ranked)
    return Shape::unranked();
  size_t rank = std::max(a.dims.size(), b.dims.size());
  llvm::SmallVector<SymDim, 4> dims(rank);
  for (size_t i = 0; i < rank; ++i) { // right-aligned
    SymDim da =
        i < a.dims.size() ? a.dims[a.dims.size() - 1 - i] : SymDim::constant(1);
    SymDim db =
        i < b.dims.size() ? b.dims[b.dims.size() - 1 - i] : SymDim::constant(1);
    std::optional<SymDim> d = broadcast_dim(da, db, assumptions);
    if (!d)
      return std::nullopt;
    dims[rank - 1 - i] = *d;
  }
  return Shape::ranked_dims(dims);
}

} // namespace

llvm::Expected<Type> infer_node_type(const Graph &g, NodeId id,
                                     std::vector<std::string> *assumptions) {
  const Node &n = g.node(id);
  const OpInfo &info = op_info(n.op);
  auto fail = [&](const std::string &message) -> llvm::Error {
    return llvm::make_error<PassError>(id, n.loc, value_names(g)[id], message);
  };
  if (info.kind != OpKind::Pointwise)
    return n.type;

  llvm::SmallVector<Type, 3> operands;
  for (NodeId o : n.operands)
    operands.push_back(g.node(o).type);
  if (info.rule == TypeRule::WHERE && operands[0].dtype != DType::b8)
    return fail(std::string("the condition of 'where' must be b8, not ") +
                dtype_name(operands[0].dtype));
  DType dt = result_dtype(n.op, operands);
  if (result_is_scalar(operands))
    return Type::weak_scalar(dt);
  // As the runtime: booleans have no subtraction or negation.
  if ((n.op == Op::Sub || n.op == Op::Neg) &&
      common_dtype(n.op, operands) == DType::b8)
    return fail(std::string("'") + info.name + "' is not supported on b8");

  std::optional<Shape> shape;
  for (NodeId o : n.operands) {
    const Type &t = g.node(o).type;
    if (t.scalar)
      continue;
    if (!shape) {
      shape = t.shape;
      continue;
    }
    std::optional<Shape> s = broadcast(*shape, t.shape, assumptions);
    if (!s)
      return fail("shapes " + to_string(*shape) + " and " + to_string(t.shape) +
                  " do not broadcast");
    shape = std::move(s);
  }
  return Type::tensor(dt, *shape);
}

llvm::Expected<Graph> infer_types(const Graph &g, const PassOptions &) {
  Graph out = g;
  for (NodeId id = 0; id < (NodeId)out.nodes.size(); ++id) {
    llvm::Expected<Type> t = infer_node_type(out, id, &out.assumptions);
    if (!t)
      return t.takeError();
    out.nodes[id].type = std::move(*t);
  }
  return out;
}

} // namespace kiln::passes
