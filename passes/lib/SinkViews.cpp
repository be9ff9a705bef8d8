// sink-views: a layout op of pointwise work on one tensor moves onto that
// tensor, so the work is index arithmetic of the kernel that reads the view
// instead of a kernel of its own whose result the view reads (Inductor
// inlines pointwise nodes through views the same way).
//
//   v = view(f(x, s))   ->   v = f(view(x), s)
//
// f: pointwise ops whose only tensor operand (through each other) is x;
// s: scalars (host scalars, weak constants). Pointwise work on one tensor
// has that tensor's shape, so the layout op maps the elements of f's result
// exactly as it maps x's: the same value at every index. A strict `view`
// becomes `reshape` on x (x may be an argument laid out so that no view
// gives the shape: reshape copies it then, where f's fresh result never
// needs one; both raise on a shape of another element count).
//
// Moved: view, reshape, transpose, permute, unsqueeze, squeeze, slice.
// Not moved: a view the function returns (eager returns a view sharing
// the pointwise result's storage, with its strides), a view a product
// (GEMM, attention) reads (it reads from memory: the view of the written
// result is free, a transposed operand a GEMM flag), expand (f would be
// computed once per copy of each element), contiguous (f's result is
// contiguous already), part (sink-cat's), and a view of pointwise work on
// two or more tensors (each would need broadcasting to f's shape first: a
// layout op Kiln does not have yet).
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
         op == Op::Slice;
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
  // pointwise tensor ops (scalars aside).
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

  // The pointwise work at `id` redone on `viewed` in place of its tensor.
  llvm::Expected<NodeId> redo(NodeId id, NodeId viewed,
                              std::map<NodeId, NodeId> &done) {
    if (auto it = done.find(id); it != done.end())
      return it->second;
    Node c = out.node(id);
    c.name.clear();
    for (NodeId &o : c.operands) {
      if (out.node(o).type.scalar)
        continue;
      if (!pointwise_tensor(o)) { // the tensor
        o = viewed;
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

  // Layout op `n` of pointwise work on one tensor: the work on the layout
  // op of that tensor; -1 when `n` does not move.
  llvm::Expected<NodeId> sink(NodeId id, const Node &n) {
    if (!moves(n.op) || llvm::is_contained(g.outputs, id) || !fused_uses(id))
      return -1;
    NodeId base = map[n.operands[0]];
    if (!pointwise_tensor(base))
      return -1;
    std::set<NodeId> tensors, seen;
    tensors_of(base, tensors, seen);
    if (tensors.size() != 1)
      return -1;
    const NodeId leaf = *tensors.begin();
    Node v = n;
    v.name.clear();
    v.op = n.op == Op::View ? Op::Reshape : n.op;
    for (NodeId &o : v.operands)
      o = map[o];
    v.operands[0] = leaf;
    llvm::Expected<NodeId> viewed = emit(std::move(v));
    if (!viewed)
      return viewed.takeError();
    std::map<NodeId, NodeId> done;
    llvm::Expected<NodeId> r = redo(base, *viewed, done);
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
