// simplify: algebraic identities, one table entry each.
//
// A rewrite is kept only when its result has exactly the node's type
// (dtype, shape, scalar-ness): `x * 1.0` on an integer tensor is an f32
// tensor, not x. The safe rules hold for every IEEE value, NaN, inf and
// signed zero included; what does not (x + 0 is +0 for x = -0, x * 0 and
// x - x are NaN for inf) is only done under unsafe_math.
#include <kiln/passes/passes.h>

#include "RewriteUtil.h"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// The node being rewritten; operands are ids in the new graph.
struct Site {
  Op op;
  llvm::ArrayRef<NodeId> x;
};

// Builds replacement nodes into the new graph.
class Rewriter {
public:
  Rewriter(GraphBuilder &b) : b_(b) {}
  const Graph &g() const { return b_.graph(); }
  const Node &node(NodeId id) const { return b_.graph().node(id); }
  bool is_op(NodeId id, Op op) const { return node(id).op == op; }
  bool is_const(NodeId id, double v) const { return is_constant(g(), id, v); }

  NodeId emit(Op op, llvm::ArrayRef<NodeId> operands) {
    NodeId id = b_.op(op, operands, loc);
    Graph &graph = b_.graph();
    llvm::Expected<Type> t = infer_node_type(graph, id, &graph.assumptions);
    if (t) {
      graph.nodes[id].type = std::move(*t);
    } else {
      llvm::consumeError(t.takeError());
      failed = true; // the result cannot have the right type: rolled back
    }
    return id;
  }
  NodeId constant(double v, DType dt) { return b_.constant(v, dt, loc); }

  Loc loc;
  bool failed = false;

private:
  GraphBuilder &b_;
};

using Result = std::optional<NodeId>;

// --- IEEE-safe rules ---

Result mul_by_one(Rewriter &r, const Site &s) { // x*1, 1*x -> x
  if (r.is_const(s.x[1], 1))
    return s.x[0];
  if (r.is_const(s.x[0], 1))
    return s.x[1];
  return {};
}

Result div_by_one(Rewriter &r, const Site &s) { // x/1 -> x
  return r.is_const(s.x[1], 1) ? Result(s.x[0]) : Result();
}

Result sub_pos_zero(Rewriter &r, const Site &s) { // x-(+0) -> x
  return is_pos_zero(r.g(), s.x[1]) ? Result(s.x[0]) : Result();
}

Result add_neg_zero(Rewriter &r, const Site &s) { // x+(-0.0) -> x
  if (is_neg_zero(r.g(), s.x[1]))
    return s.x[0];
  if (is_neg_zero(r.g(), s.x[0]))
    return s.x[1];
  return {};
}

// x+0 -> x is exact for integers (there is no -0 to lose).
Result add_zero_integer(Rewriter &r, const Site &s) {
  for (int i : {0, 1})
    if (r.is_const(s.x[1 - i], 0) && !is_floating(r.node(s.x[i]).type.dtype))
      return s.x[i];
  return {};
}

Result neg_neg(Rewriter &r, const Site &s) { // -(-x) -> x
  return r.is_op(s.x[0], Op::Neg) ? Result(r.node(s.x[0]).operands[0])
                                  : Result();
}

Result pow_one(Rewriter &r, const Site &s) { // pow(x, 1) -> x
  return r.is_const(s.x[1], 1) ? Result(s.x[0]) : Result();
}

Result pow_two(Rewriter &r, const Site &s) { // pow(x, 2) -> x*x
  if (!r.is_const(s.x[1], 2))
    return {};
  return r.emit(Op::Mul, {s.x[0], s.x[0]});
}

Result pow_three(Rewriter &r, const Site &s) { // pow(x, 3) -> x*x*x
  if (!r.is_const(s.x[1], 3))
    return {};
  NodeId sq = r.emit(Op::Mul, {s.x[0], s.x[0]});
  return r.emit(Op::Mul, {sq, s.x[0]});
}

Result pow_minus_one(Rewriter &r, const Site &s) { // pow(x, -1) -> 1/x
  if (!r.is_const(s.x[1], -1))
    return {};
  return r.emit(Op::Reciprocal, {s.x[0]});
}

// --- unsafe_math rules ---

Result add_zero(Rewriter &r, const Site &s) { // x+0 -> x (-0+0 is +0)
  if (r.is_const(s.x[1], 0))
    return s.x[0];
  if (r.is_const(s.x[0], 0))
    return s.x[1];
  return {};
}

// x-x -> x*0: still NaN for NaN and inf, but -0 for negative x.
Result sub_self(Rewriter &r, const Site &s) {
  if (s.x[0] != s.x[1])
    return {};
  DType dt = r.node(s.x[0]).type.dtype;
  NodeId zero = r.constant(0, is_floating(dt) ? DType::f64 : DType::i64);
  return r.emit(Op::Mul, {s.x[0], zero});
}

// pow(x, 0.5) -> sqrt(x): they differ at -0 (+0 vs -0) and -inf (inf vs NaN).
Result pow_half(Rewriter &r, const Site &s) {
  if (!r.is_const(s.x[1], 0.5))
    return {};
  return r.emit(Op::Sqrt, {s.x[0]});
}

// y*y or pow(y, 2): y.
std::optional<NodeId> square_of(Rewriter &r, NodeId id) {
  const Node &n = r.node(id);
  if (n.op == Op::Mul && n.operands[0] == n.operands[1])
    return n.operands[0];
  if (n.op == Op::Pow && r.is_const(n.operands[1], 2))
    return n.operands[0];
  return std::nullopt;
}

// sin(x)^2 + cos(x)^2 -> x*0 + 1, in either order: 1 where x is finite,
// NaN where it is not (as the original), but rounding differs.
Result pythagorean(Rewriter &r, const Site &s) {
  std::optional<NodeId> a = square_of(r, s.x[0]), b = square_of(r, s.x[1]);
  if (!a || !b)
    return {};
  const Node &na = r.node(*a), &nb = r.node(*b);
  bool sin_cos = na.op == Op::Sin && nb.op == Op::Cos;
  bool cos_sin = na.op == Op::Cos && nb.op == Op::Sin;
  if (!(sin_cos || cos_sin) || na.operands[0] != nb.operands[0])
    return {};
  NodeId x = na.operands[0];
  NodeId zero = r.constant(0.0, DType::f64);
  NodeId times_zero = r.emit(Op::Mul, {x, zero});
  NodeId one = r.constant(1.0, DType::f64);
  return r.emit(Op::Add, {times_zero, one});
}

struct Rule {
  const char *name;
  Op op;
  bool unsafe;
  Result (*apply)(Rewriter &, const Site &);
};

const Rule kRules[] = {
    {"x*1 -> x", Op::Mul, false, mul_by_one},
    {"x/1 -> x", Op::Div, false, div_by_one},
    {"x-0 -> x", Op::Sub, false, sub_pos_zero},
    {"x+(-0.0) -> x", Op::Add, false, add_neg_zero},
    {"x+0 -> x (integer x)", Op::Add, false, add_zero_integer},
    {"neg(neg x) -> x", Op::Neg, false, neg_neg},
    {"pow(x, 1) -> x", Op::Pow, false, pow_one},
    {"pow(x, 2) -> x*x", Op::Pow, false, pow_two},
    {"pow(x, 3) -> x*x*x", Op::Pow, false, pow_three},
    {"pow(x, -1) -> reciprocal(x)", Op::Pow, false, pow_minus_one},
    {"x+0 -> x", Op::Add, true, add_zero},
    {"x-x -> x*0", Op::Sub, true, sub_self},
    {"pow(x, 0.5) -> sqrt(x)", Op::Pow, true, pow_half},
    {"sin(x)^2 + cos(x)^2 -> x*0 + 1", Op::Add, true, pythagorean},
};

} // namespace

Graph simplify(const Graph &g, const PassOptions &opts) {
  // A returned value is a fresh tensor: `return x * 1.0` must not become
  // `return x`, which would alias the caller's argument.
  std::vector<bool> is_output(g.nodes.size(), false);
  for (NodeId o : g.outputs)
    is_output[o] = true;
  GraphBuilder b = builder_like(g);
  Rewriter rw(b);
  std::vector<NodeId> map(g.nodes.size(), -1);
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    llvm::SmallVector<NodeId, 3> x;
    for (NodeId o : n.operands)
      x.push_back(map[o]);
    Site site{n.op, x};
    rw.loc = n.loc;
    size_t mark = b.graph().nodes.size();
    Result result;
    for (const Rule &rule : kRules) {
      if (rule.op != n.op || (rule.unsafe && !opts.unsafe_math))
        continue;
      rw.failed = false;
      Result r = rule.apply(rw, site);
      bool aliases_argument =
          r && is_output[id] && rw.node(*r).op == Op::Input;
      if (r && !rw.failed && rw.node(*r).type == n.type && !aliases_argument) {
        result = r;
        break;
      }
      b.graph().nodes.resize(mark); // rejected: drop what it built
    }
    if (!result) {
      map[id] = copy_node(b, n, map);
      continue;
    }
    if ((size_t)*result >= mark)
      b.graph().nodes[*result].name = n.name;
    map[id] = *result;
  }
  return finish(b, g, map);
}

} // namespace kiln::passes
