// sum((x - mean(x))^2) as var and layer norm decompose it, matched in one
// place for the two that fold it: the welford pass (a whole tensor's,
// into sum_sq_dev) and the loop kernel's codegen (a row's, into one read).
#pragma once

#include <kiln/passes/ir.h>

#include "ReduceDims.h"

#include <llvm/ADT/ArrayRef.h>

#include <optional>

namespace kiln::ir {

struct CentredSquares {
  NodeId x, sum, mean, dev, count; // dev = sub(x, mean), mean = div(sum, count)
};

// Whether the mean's divisor is the constant the sum's count folded to (x
// of a static shape).
inline bool folded_count(const Graph &g, const CentredSquares &c) {
  const Node &n = g.node(c.count);
  return n.op == Op::Constant && reduced_count(g, g.node(c.sum)) == n.constant;
}

// s = sum(mul(d, d)) with d = sub(x, div(sum(x, keepdim), n)), the mean's
// sum over s's dims, each step a tensor of s's floating dtype; q is s's
// operand (in a rewrite, of the graph being built). What n must be (a
// reduce_size of x, or the constant it folded to) the caller checks.
inline std::optional<CentredSquares> centred_squares(const Graph &g,
                                                     const Node &s, NodeId q) {
  if (s.op != Op::Sum || !is_floating(s.type.dtype))
    return std::nullopt;
  const DType dt = s.type.dtype;
  auto is = [&](NodeId id, Op op) {
    const Node &n = g.node(id);
    return n.op == op && !n.type.scalar && n.type.dtype == dt;
  };
  if (!is(q, Op::Mul) || g.node(q).operands[0] != g.node(q).operands[1])
    return std::nullopt;
  const NodeId d = g.node(q).operands[0];
  if (!is(d, Op::Sub))
    return std::nullopt;
  const NodeId x = g.node(d).operands[0], m = g.node(d).operands[1];
  if (g.node(x).type.scalar || g.node(x).type.dtype != dt || !is(m, Op::Div))
    return std::nullopt;
  const NodeId sum = g.node(m).operands[0];
  const Node &S = g.node(sum);
  if (!is(sum, Op::Sum) || !S.keepdim || S.operands[0] != x || S.dims != s.dims)
    return std::nullopt;
  return CentredSquares{x, sum, m, d, g.node(m).operands[1]};
}

} // namespace kiln::ir
