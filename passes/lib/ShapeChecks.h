// Builds ir::ShapeCheck entries (see ir.h): the shape computation of a
// value, over the graph's arguments, for the compiled code to evaluate where
// the graph no longer holds the op that eager would raise in.
#pragma once

#include <kiln/passes/ir.h>

#include <vector>

namespace kiln::ir {

class ShapeCheckBuilder {
public:
  ShapeCheckBuilder(const Graph &g, std::vector<ShapeCheck> &out)
      : g_(g), out_(out), memo_(g.nodes.size(), kUnseen) {}

  // The check computing node `id`'s shape (its operands' first); -1 for a
  // scalar, which has none. `raises`: the op itself can raise.
  int value(NodeId id, bool raises = false) {
    if (memo_[id] != kUnseen) {
      if (raises && memo_[id] >= 0)
        out_[memo_[id]].raises = true;
      return memo_[id];
    }
    const Node &n = g_.node(id);
    if (n.type.scalar || n.op == Op::Constant || n.op == Op::ScalarInput)
      return memo_[id] = -1;
    ShapeCheck c;
    c.op = n.op;
    if (n.op == Op::Input)
      c.arg_index = n.arg_index;
    else
      fill(c, n, raises);
    out_.push_back(std::move(c));
    return memo_[id] = int(out_.size()) - 1;
  }

  // A check of node `n`'s own arguments (a composite's, before its
  // decomposition replaces it): always one that can raise.
  void constraint(const Node &n) {
    ShapeCheck c;
    c.op = n.op;
    fill(c, n, true);
    out_.push_back(std::move(c));
  }

private:
  static constexpr int kUnseen = -2;

  void fill(ShapeCheck &c, const Node &n, bool raises) {
    for (NodeId o : n.operands)
      if (int k = value(o); k >= 0)
        c.operands.push_back(k);
    c.dims = n.dims;
    c.keepdim = n.keepdim;
    c.raises = raises;
    c.name = n.name;
    c.loc = n.loc;
  }

  const Graph &g_;
  std::vector<ShapeCheck> &out_;
  std::vector<int> memo_;
};

} // namespace kiln::ir
