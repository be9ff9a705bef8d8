// welford: sum((x - mean(x))^2) over all of x's dims, as var(x) decomposes
// (mean = sum(x, keepdim) / reduce_size(x) over the same dims), becomes
// sum_sq_dev(x): one reduction of x by Welford's update, in the same pass
// as the mean's sum, where the decomposition's second sum needs the mean
// first. A whole-tensor reduction runs split over blocks, a launch per
// pass: var of 2^26 f32 reads x once instead of twice.
//
// Only over all dims (a reduction whose rows are one): a row kernel holds
// its row in registers, where the second pass reads nothing from memory
// and Welford's update (a division an element, four values a shuffle)
// only costs instructions. On an H100, with it in every row kernel: layer
// norm over 262144x128 f32 0.099 -> 0.141 ms, 4096x8192 0.095 -> 0.100;
// over 1048x32000 (rows re-read from L2) 0.159 -> 0.161; over 256x32000
// (split) 0.081 -> 0.061 (bench/results/2026-11-28-h100-welford-rows.md).
//
// Only the exact shape of the decomposition: x floating, every step in
// x's dtype (no cast between), the mean's sum keepdim and all three over
// the same dims as written. dce drops the squares (a reduce_size of them
// counts x's elements instead).
#include <kiln/passes/passes.h>

#include "CentredSquares.h"
#include "ReduceDims.h"
#include "Rewrite.h"
#include "RewriteUtil.h"

#include <llvm/ADT/DenseMap.h>

#include <cassert>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// Whether `s` reduces every dim of its operand: no dims given, or dims
// naming each dim of a ranked operand.
bool over_all_dims(const Graph &g, const Node &s) {
  if (s.dims.empty())
    return true;
  const Shape &shape = g.node(s.operands[0]).type.shape;
  if (!shape.ranked)
    return false;
  ResolvedDims r = resolve_dims(s.dims, shape.dims.size());
  return r.error.empty() && r.dims.size() == shape.dims.size();
}

// The x of `sum(mul(d, d))` with d = sub(x, div(sum(x, keepdim), n)) and
// n = reduce_size(x), or the constant it folded to (x of a static shape),
// all over `s`'s dims, which are all of x's; -1 when `s` is not that.
NodeId centred_square_sum(const Graph &g, const Node &s,
                          llvm::ArrayRef<NodeId> operands) {
  if (!over_all_dims(g, s))
    return -1;
  const std::optional<CentredSquares> c = centred_squares(g, s, operands[0]);
  if (!c)
    return -1;
  const Node &n = g.node(c->count);
  const bool counts = n.op == Op::ReduceSize
                          ? n.operands[0] == c->x && n.dims == s.dims
                          : folded_count(g, *c);
  return counts ? c->x : -1;
}

} // namespace

llvm::Expected<Graph> welford(const Graph &g, const PassOptions &) {
  // The squares replaced, by the x they square the deviations of (ids of
  // the new graph): a later reduce_size of the squares (var's decomposition
  // divides by one) counts x's elements instead, which is the same count
  // (the squares have x's shape), so that nothing keeps the squares.
  llvm::DenseMap<NodeId, NodeId> squares;
  auto rewrite = [&](Rewriter &rw, const Site &s) -> RewriteResult {
    if (s.node.op == Op::ReduceSize) {
      auto it = squares.find(s.x[0]);
      if (it == squares.end())
        return std::nullopt;
      return rw.emit(Op::ReduceSize, {it->second}, &s.node);
    }
    const NodeId x = centred_square_sum(rw.g(), s.node, s.x);
    if (x < 0)
      return std::nullopt;
    squares[s.x[0]] = x;
    llvm::Expected<NodeId> r = rw.emit(Op::SumSqDev, {x}, &s.node);
    if (!r)
      return r.takeError();
    // sum_sq_dev's type rule is sum's: the same type as the sum it replaces.
    assert(rw.node(*r).type == s.node.type);
    return *r;
  };
  return rewrite_graph(g, rewrite);
}

} // namespace kiln::passes
