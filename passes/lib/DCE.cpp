// dce: drops nodes that no output depends on. Arguments always stay: they
// are the graph's signature. A dropped value whose eager op can raise keeps
// its shape computation in Graph::checks, so that the compiled code refuses
// the inputs eager would raise on instead of returning where eager throws
// (as torch.compile's tracing raises on dead code for the shapes it traces).
#include <kiln/passes/passes.h>

#include "RewriteUtil.h"
#include "ShapeChecks.h"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// True when shapes `a` and `b`, known at compile time, broadcast for every
// value of their symbols: each pair of dims equal or one of them 1.
bool surely_broadcast(const Shape &a, const Shape &b) {
  if (!a.ranked || !b.ranked)
    return false;
  size_t n = std::min(a.dims.size(), b.dims.size());
  for (size_t i = 1; i <= n; ++i) {
    const SymDim &x = a.dims[a.dims.size() - i], &y = b.dims[b.dims.size() - i];
    bool one = (!x.is_symbolic() && x.value == 1) || (!y.is_symbolic() && y.value == 1);
    if (!(x == y) && !one)
      return false;
  }
  return true;
}

// Eager raises for some shapes: operands that may not broadcast, reduced
// dims that may be out of range, an extreme of a possibly empty extent.
bool can_raise(const Graph &g, const Node &n) {
  if (is_pointwise(n.op)) {
    for (NodeId a : n.operands)
      for (NodeId b : n.operands)
        if (a < b && !g.node(a).type.scalar && !g.node(b).type.scalar &&
            !surely_broadcast(g.node(a).type.shape, g.node(b).type.shape))
          return true;
    return false;
  }
  if (!is_reduction(n.op))
    return false;
  bool extreme = empty_reduction_raises(n.op);
  const Shape &s = g.node(n.operands[0]).type.shape;
  if (!s.ranked)
    return !n.dims.empty() || extreme;
  int rank = int(s.dims.size()), r = std::max(rank, 1);
  bool maybe_empty = false;
  for (int64_t d : n.dims) {
    if (d < -r || d >= r)
      return true;
    if (rank > 0) {
      const SymDim &e = s.dims[d < 0 ? d + r : d];
      maybe_empty |= e.is_symbolic() || e.value == 0;
    }
  }
  if (n.dims.empty())
    for (const SymDim &e : s.dims)
      maybe_empty |= e.is_symbolic() || e.value == 0;
  return extreme && maybe_empty;
}

} // namespace

Graph dce(const Graph &g, const PassOptions &) {
  std::vector<bool> live(g.nodes.size(), false);
  for (NodeId o : g.outputs)
    live[o] = true;
  // Operands come before their users: one backward sweep finds them all.
  for (NodeId id = (NodeId)g.nodes.size() - 1; id >= 0; --id) {
    if (op_info(g.nodes[id].op).kind == OpKind::Argument)
      live[id] = true;
    if (live[id])
      for (NodeId o : g.nodes[id].operands)
        live[o] = true;
  }
  GraphBuilder b = builder_like(g);
  std::vector<NodeId> map(g.nodes.size(), -1);
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id)
    if (live[id])
      map[id] = copy_node(b, g.nodes[id], map);

  ShapeCheckBuilder checks(g, b.graph().checks);
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id)
    if (!live[id] && can_raise(g, g.node(id)))
      checks.value(id, /*raises=*/true);
  return finish(b, g, map);
}

} // namespace kiln::passes
