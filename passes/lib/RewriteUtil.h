// Helpers shared by the passes that rebuild a graph node by node.
#pragma once

#include <kiln/passes/ir.h>
#include <kiln/passes/passes.h>

#include "NumericUtil.h"

namespace kiln::ir {

// Number of ops: Cat is the last of enum Op.
inline constexpr int kNumOps = static_cast<int>(Op::SumSqDev) + 1;

// A builder for the rewritten form of `g`: same name, assumptions and
// checks (which name only arguments and each other).
inline GraphBuilder builder_like(const Graph &g) {
  GraphBuilder b(g.name);
  b.graph().assumptions = g.assumptions;
  b.graph().checks = g.checks;
  return b;
}

// Appends `n` with its operands mapped through `map` (old id -> new id).
inline NodeId copy_node(GraphBuilder &b, const Node &n,
                        llvm::ArrayRef<NodeId> map) {
  Node c = n;
  for (NodeId &o : c.operands)
    o = map[o];
  return b.add(std::move(c));
}

inline Graph finish(GraphBuilder &b, const Graph &old,
                    llvm::ArrayRef<NodeId> map) {
  for (NodeId o : old.outputs)
    b.output(map[o]);
  return b.take();
}

// Appends `n` to `out`, typed from its operands (which must be typed):
// its id, or the error that they do not type.
inline llvm::Expected<NodeId> append_typed(Graph &out, Node n) {
  out.nodes.push_back(std::move(n));
  NodeId id = NodeId(out.nodes.size() - 1);
  llvm::Expected<Type> t = passes::infer_node_type(out, id);
  if (!t)
    return t.takeError();
  out.nodes[id].type = *t;
  return id;
}

// Appends `n` to `out` with its operands mapped through `map` (old id ->
// new id), its type as it was: its new id.
inline NodeId copy_node(Graph &out, const Node &n, llvm::ArrayRef<NodeId> map) {
  Node c = n;
  for (NodeId &o : c.operands)
    o = map[o];
  out.nodes.push_back(std::move(c));
  return NodeId(out.nodes.size() - 1);
}

inline bool is_constant(const Graph &g, NodeId id) {
  return g.node(id).op == Op::Constant;
}

} // namespace kiln::ir
