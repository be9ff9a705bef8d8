// cse: merges nodes that compute the same thing (same op, operands,
// constant bits, reduced dims, keepdim and type). Arguments never merge:
// each is its own runtime value.
#include <kiln/passes/passes.h>

#include "ReduceDims.h"
#include "RewriteUtil.h"

#include <map>
#include <tuple>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

struct Key {
  Op op;
  llvm::SmallVector<NodeId, 3> operands;
  uint64_t constant_bits;
  DType dtype;
  bool scalar;
  bool ranked;
  llvm::SmallVector<std::pair<int64_t, int>, 4> dims;
  // Reductions, composites, reduce_size: the dims attribute and keepdim;
  // reduce_size: the extents it counts.
  llvm::SmallVector<int64_t, 4> reduced = {};
  bool keepdim = false;
  llvm::SmallVector<std::pair<int64_t, int>, 4> counted = {};

  bool operator<(const Key &o) const {
    return std::tie(op, operands, constant_bits, dtype, scalar, ranked, dims,
                    reduced, keepdim, counted) <
           std::tie(o.op, o.operands, o.constant_bits, o.dtype, o.scalar,
                    o.ranked, o.dims, o.reduced, o.keepdim, o.counted);
  }
};

Key key_of(const Graph &g, const Node &n) {
  Key k{n.op,          n.operands,          0, n.type.dtype,
        n.type.scalar, n.type.shape.ranked, {}};
  if (has_dims_attribute(n.op)) {
    k.keepdim = n.keepdim;
    // Over a ranked operand, [-1] and [1] (rank 2), [0, 1] and [1, 0], or
    // [] and all dims name the same dims.
    const Shape &x = g.node(n.operands[0]).type.shape;
    ResolvedDims r;
    if (x.ranked)
      r = resolve_dims(n.dims, x.dims.size());
    if (x.ranked && r.error.empty())
      k.reduced = r.dims;
    else
      k.reduced.assign(n.dims.begin(), n.dims.end());
    // reduce_size only reads extents: over [s0, s1] it is s1 whichever
    // value has that shape, so its key is the extents it multiplies.
    if (n.op == Op::ReduceSize && x.ranked && r.error.empty()) {
      k.operands.clear();
      k.reduced.clear();
      for (int64_t d : r.dims)
        k.counted.push_back({x.dims[d].value, x.dims[d].symbol});
      llvm::sort(k.counted);
    }
  }
  if (n.op == Op::Constant)
    k.constant_bits = double_bits(n.constant);
  // Operand order does not change a COMMUTATIVE op's result, bit for bit.
  if (is_commutative(n.op) && k.operands[1] < k.operands[0])
    std::swap(k.operands[0], k.operands[1]);
  for (const SymDim &d : n.type.shape.dims)
    k.dims.push_back({d.value, d.symbol});
  return k;
}

} // namespace

Graph cse(const Graph &g, const PassOptions &) {
  GraphBuilder b = builder_like(g);
  std::vector<NodeId> map(g.nodes.size(), -1);
  std::map<Key, NodeId> seen;
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    if (op_info(n.op).kind == OpKind::Argument) {
      map[id] = copy_node(b, n, map);
      continue;
    }
    Node mapped = n;
    for (NodeId &o : mapped.operands)
      o = map[o];
    auto [it, inserted] = seen.try_emplace(key_of(b.graph(), mapped), -1);
    if (inserted)
      it->second = b.add(std::move(mapped));
    map[id] = it->second;
  }
  return finish(b, g, map);
}

} // namespace kiln::passes
