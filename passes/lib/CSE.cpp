// cse: merges nodes that compute the same thing (the same value fields of
// ir::Node: op, operands, type, constant bits, reduced dims, keepdim).
// Arguments never merge: each is its own runtime value.
#include <kiln/passes/passes.h>

#include "ReduceDims.h"
#include "RewriteUtil.h"

#include <unordered_map>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// A node as cse compares it: its value fields (ir::Node::value_fields) in
// a canonical form, and for reduce_size the extents it counts.
struct Key {
  Node node;
  llvm::SmallVector<std::pair<int64_t, int>, 4> counted = {};
  bool operator==(const Key &o) const {
    return same_value(node, o.node) && counted == o.counted;
  }
};
struct KeyHash {
  size_t operator()(const Key &k) const {
    return llvm::hash_combine(
        hash_value(k.node),
        llvm::hash_combine_range(k.counted.begin(), k.counted.end()));
  }
};

Key key_of(const Graph &g, const Node &n) {
  Key k;
  k.node.op = n.op;
  k.node.operands = n.operands;
  k.node.type = n.type;
  if (n.op == Op::Constant)
    k.node.constant = n.constant;
  k.node.cast_to = n.cast_to;
  if (has_dims_attribute(n.op)) {
    k.node.keepdim = n.keepdim;
    // Over a ranked operand, [-1] and [1] (rank 2), [0, 1] and [1, 0], or
    // [] and all dims name the same dims.
    const Shape &x = g.node(n.operands[0]).type.shape;
    ResolvedDims r;
    if (x.ranked)
      r = resolve_dims(n.dims, x.dims.size());
    if (x.ranked && r.error.empty())
      k.node.dims.assign(r.dims.begin(), r.dims.end());
    else
      k.node.dims = n.dims;
    // reduce_size only reads extents: over [s0, s1] it is s1 whichever
    // value has that shape, so its key is the extents it multiplies.
    if (n.op == Op::ReduceSize && x.ranked && r.error.empty()) {
      k.node.operands.clear();
      k.node.dims.clear();
      for (int64_t d : r.dims)
        k.counted.push_back({x.dims[d].value, x.dims[d].symbol});
      llvm::sort(k.counted);
    }
  }
  // Operand order does not change a COMMUTATIVE op's result, bit for bit.
  if (is_commutative(n.op) && k.node.operands[1] < k.node.operands[0])
    std::swap(k.node.operands[0], k.node.operands[1]);
  return k;
}

} // namespace

Graph cse(const Graph &g, const PassOptions &) {
  GraphBuilder b = builder_like(g);
  std::vector<NodeId> map(g.nodes.size(), -1);
  std::unordered_map<Key, NodeId, KeyHash> seen;
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
