// sink-views: a layout op of pointwise work moves onto the tensors the
// work reads, so the work is index arithmetic of the kernel that reads the
// view instead of a kernel of its own whose result the view reads (Inductor
// inlines pointwise nodes through views the same way).
//
//   v = view(f(x, s))      ->   v = f(view(x), s)
//   v = view(f(x, y, s))   ->   v = f(view(broadcast(x, y)), view(broadcast(y, x)), s)
//
// f: pointwise ops (through each other) whose tensor operands are x, y, ...
// (arguments, views, what reductions and products compute); s: scalars
// (host scalars, weak constants). f's result has the shape its tensors
// broadcast to, so a tensor of another shape is first expanded to that
// shape (`broadcast`, a layout op of the compiler's, kiln/ops.def) and the
// layout op then maps its elements exactly as it maps f's result's: the
// same value at every index. A strict `view` becomes `reshape` on the
// tensors (an argument, or an expanded tensor, may be laid out so that no
// view gives the shape: reshape copies it then, where f's fresh result
// never needs one; both raise on a shape of another element count).
//
// Moved: view, reshape, transpose, permute, unsqueeze, squeeze, slice,
// piece (an element of split's or chunk's result).
// Not moved: a view the function returns (eager returns a view sharing
// the pointwise result's storage, with its strides), a view a product
// (GEMM, attention) reads (it reads from memory: the view of the written
// result is free, a transposed operand a GEMM flag), expand (f would be
// computed once per copy of each element), contiguous (f's result is
// contiguous already) and part (sink-cat's).
#include <kiln/passes/passes.h>

#include "RewriteUtil.h"

#include <map>
#include <set>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

bool moves(Op op) {
  return op == Op::View || op == Op::Reshape || op == Op::Transpose ||
         op == Op::Permute || op == Op::Unsqueeze || op == Op::Squeeze ||
         op == Op::Slice || op == Op::Piece;
}

struct Sinker {
  const Graph &g;
  Graph out;
  std::vector<NodeId> map;

  explicit Sinker(const Graph &g) : g(g), map(g.nodes.size(), -1) {
    out.name = g.name;
    out.assumptions = g.assumptions;
    out.checks = g.checks;
  }

  // Whether every use of old node `id` is work a kernel fuses (pointwise,
  // reductions, row ops, a cat's pieces) or another layout op: a product
  // (GEMM, attention) reads its operands from memory, where a view of the
  // written result costs nothing (a transposed operand is a GEMM flag)
  // and work redone through the view would be a copy in its layout.
  bool fused_uses(NodeId id) const {
    for (const Node &u : g.nodes)
      if (llvm::is_contained(u.operands, id) && !is_pointwise(u.op) &&
          !is_reduction(u.op) && !is_composite(u.op) && !is_view(u.op) &&
          u.op != Op::Cat)
        return false;
    return true;
  }

  bool pointwise_tensor(NodeId id) const {
    const Node &n = out.node(id);
    return is_pointwise(n.op) && !n.type.scalar;
  }

  // The tensors the pointwise work at `id` (in `out`) reads, through
  // pointwise tensor ops (scalars aside), by id.
  void tensors_of(NodeId id, std::set<NodeId> &tensors,
                  std::set<NodeId> &seen) const {
    if (!seen.insert(id).second)
      return;
    for (NodeId o : out.node(id).operands) {
      if (out.node(o).type.scalar)
        continue;
      if (pointwise_tensor(o))
        tensors_of(o, tensors, seen);
      else
        tensors.insert(o);
    }
  }

  llvm::Expected<NodeId> emit(Node n) { return append_typed(out, std::move(n)); }

  // The pointwise work at `id` redone on the views of its tensors.
  llvm::Expected<NodeId> redo(NodeId id, const std::map<NodeId, NodeId> &viewed,
                              std::map<NodeId, NodeId> &done) {
    if (auto it = done.find(id); it != done.end())
      return it->second;
    Node c = out.node(id);
    c.name.clear();
    for (NodeId &o : c.operands) {
      if (out.node(o).type.scalar)
        continue;
      if (!pointwise_tensor(o)) { // a tensor it reads
        o = viewed.at(o);
        continue;
      }
      llvm::Expected<NodeId> r = redo(o, viewed, done);
      if (!r)
        return r.takeError();
      o = *r;
    }
    llvm::Expected<NodeId> r = emit(std::move(c));
    if (!r)
      return r.takeError();
    done[id] = *r;
    return *r;
  }

  // Tensor `x` of the work at `base`, expanded to the work's shape: itself
  // when it has that shape already (the same dims, symbols included).
  llvm::Expected<NodeId> broadcast_to_work(NodeId x, NodeId base,
                                           const std::set<NodeId> &tensors,
                                           const Loc &loc) {
    const Shape &s = out.node(x).type.shape;
    if (tensors.size() == 1 || (s.ranked && s == out.node(base).type.shape))
      return x;
    Node b;
    b.op = Op::Broadcast;
    b.operands = {x};
    for (NodeId o : tensors)
      if (o != x)
        b.operands.push_back(o);
    b.loc = loc;
    return emit(std::move(b));
  }

  // Layout op `n` of pointwise work: the work on the layout op of each
  // tensor it reads; -1 when `n` does not move.
  llvm::Expected<NodeId> sink(NodeId id, const Node &n) {
    if (!moves(n.op) || llvm::is_contained(g.outputs, id) || !fused_uses(id))
      return -1;
    NodeId base = map[n.operands[0]];
    if (!pointwise_tensor(base))
      return -1;
    std::set<NodeId> tensors, seen;
    tensors_of(base, tensors, seen);
    if (tensors.empty())
      return -1;
    std::map<NodeId, NodeId> viewed;
    for (NodeId t : tensors) {
      llvm::Expected<NodeId> x = broadcast_to_work(t, base, tensors, n.loc);
      if (!x)
        return x.takeError();
      Node v = n;
      v.name.clear();
      v.op = n.op == Op::View ? Op::Reshape : n.op;
      for (NodeId &o : v.operands)
        o = map[o];
      v.operands[0] = *x;
      llvm::Expected<NodeId> e = emit(std::move(v));
      if (!e)
        return e.takeError();
      viewed[t] = *e;
    }
    std::map<NodeId, NodeId> done;
    llvm::Expected<NodeId> r = redo(base, viewed, done);
    if (!r)
      return r.takeError();
    out.nodes[*r].name = n.name;
    return *r;
  }

  llvm::Expected<Graph> run() {
    for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id) {
      const Node &n = g.node(id);
      llvm::Expected<NodeId> s = sink(id, n);
      if (!s)
        return s.takeError();
      if (*s >= 0) {
        map[id] = *s;
        continue;
      }
      map[id] = copy_node(out, n, map);
    }
    for (NodeId o : g.outputs)
      out.outputs.push_back(map[o]);
    return std::move(out);
  }
};

} // namespace

llvm::Expected<Graph> sink_views(const Graph &g, const PassOptions &) {
  return Sinker(g).run();
}

} // namespace kiln::passes
