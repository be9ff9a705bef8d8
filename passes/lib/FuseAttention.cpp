// fuse-attention: attention written as ops becomes one attention node (the
// runtime's fused kernel, kiln/attention.h: the scores never in memory), as
// torch.compile's SDPA pattern matcher does. The pattern, softmax over the
// last dim:
//
//   softmax(matmul(q [* s | / s], transpose(k [* s | / s], -2, -1) [* s | / s])
//           [* s | / s] [+ m | where(b, ., -inf)], -1) @ v
//
// with s a host scalar, m an additive mask of q's dtype, b a bool mask, and
// the scores, their scaled and masked values and the probabilities used
// only here; the scale may be on q or k before the product (on k before or
// after the transpose), on the scores, or on several (then their product). The softmax may also run in f32 over 16-bit
// scores, as model code often writes it:
//
//   softmax(scores.to(f32), -1).to(q's dtype) @ v
//
// (to(dtype) or to_like either way); the fused kernel keeps the scores in
// f32 anyway. q, k and v must have one floating dtype, and one rank where
// types know it; the rest of what attention needs of their shapes (ranks
// equal and >= 2 where unknown at compile time, k and v heads
// dividing q's, equal batch dims, the mask broadcasting to the scores) the
// host checks before the first launch (kiln::gen::attention_shape): where
// it does not hold (shapes matmul broadcasts and attention does not), the
// guard fails and the original body runs. Runs on typed graphs, before
// decompose takes softmax apart; the unused ops it leaves, dce drops.
//
// The two products may be bmms instead (3-D q, k and v, one batch size):
// the same attention.
//
// Eager's matmuls raise where key or value heads are neither the query's
// nor 1, where scaled_dot_product_attention takes fewer key heads dividing
// the query's (bmm's where q, k and v are not 3-D of one batch): the node's
// seventh operand (ir::AttentionProducts) has the host check the products'
// rules too, so such a call runs the original body, which raises.
//
// What changes: the fused kernel keeps the scores in f32 (eager rounds them
// to a 16-bit q's dtype between ops), and a row whose every key is masked
// out is 0 where the ops give NaN (softmax of all -inf), as torch's fused
// kernels do.
#include <kiln/passes/passes.h>

#include <cmath>
#include <optional>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

struct Match {
  NodeId q = -1, k = -1, v = -1;
  NodeId mask = -1; // -1: none
  // Host scalars the scores are multiplied by (false) or divided by (true);
  // none: a scale of 1.
  llvm::SmallVector<std::pair<NodeId, bool>, 2> factors;
  Op product = Op::Matmul; // both products: matmul, or bmm
};

class Matcher {
public:
  explicit Matcher(const Graph &g) : g_(g), uses_(g.use_counts()) {}

  std::optional<Match> match(const Node &pv) const {
    if (pv.op != Op::Matmul && pv.op != Op::Bmm)
      return std::nullopt;
    Match m;
    m.product = pv.op;
    m.v = pv.operands[1];
    NodeId p = pv.operands[0];
    // softmax(widened scores).to(q's dtype): the softmax in f32.
    const bool widened = cast(p) && g_.node(cast_source(p)).type.dtype == DType::f32;
    if (widened)
      p = cast_source(p);
    const Node &P = g_.node(p);
    if (P.op != Op::Softmax || !once(p))
      return std::nullopt;
    // The rank when known (-1: not; then dims must count from the end);
    // bmm's operands are 3-D (eager raises otherwise, and so does the
    // host's check of bmm's rules).
    const int64_t r = P.type.shape.ranked ? int64_t(P.type.shape.dims.size())
                      : m.product == Op::Bmm ? 3
                                             : -1;
    if ((r >= 0 && r < 2) || P.dims.size() != 1 ||
        (P.dims[0] != -1 && (r < 0 || P.dims[0] != r - 1)))
      return std::nullopt;
    NodeId x = P.operands[0];
    if (!once(x))
      return std::nullopt;
    if (widened) {
      if (!cast(x) || g_.node(x).type.dtype != DType::f32)
        return std::nullopt;
      x = cast_source(x);
      if (!once(x))
        return std::nullopt;
    }
    const Node &X = g_.node(x);
    // The mask: added, or a bool one choosing -inf.
    std::optional<NodeId> scores_of;
    if (X.op == Op::Add) {
      for (int i = 0; i < 2 && !scores_of; ++i)
        if (!g_.node(X.operands[1 - i]).type.scalar && scores(X.operands[i], m)) {
          m.mask = X.operands[1 - i];
          scores_of = X.operands[i];
        }
      if (!scores_of)
        return std::nullopt;
    } else if (X.op == Op::Where) {
      const Node &c = g_.node(X.operands[0]), &z = g_.node(X.operands[2]);
      if (c.type.scalar || c.type.dtype != DType::b8 || z.op != Op::Constant ||
          !(std::isinf(z.constant) && z.constant < 0) || !scores(X.operands[1], m))
        return std::nullopt;
      m.mask = X.operands[0];
    } else if (!scores(x, m)) {
      return std::nullopt;
    }
    // One rank, one floating dtype; an additive mask of that dtype.
    const Type &q = g_.node(m.q).type;
    for (NodeId t : {m.q, m.k, m.v}) {
      const Type &tt = g_.node(t).type;
      if (tt.scalar || !is_floating(tt.dtype) || tt.dtype != q.dtype ||
          (tt.shape.ranked && int64_t(tt.shape.dims.size()) != r))
        return std::nullopt;
    }
    if (m.mask >= 0 && g_.node(m.mask).type.dtype != DType::b8 &&
        g_.node(m.mask).type.dtype != q.dtype)
      return std::nullopt;
    // Widened: what the softmax read was computed in q's dtype, and its
    // probabilities go back to it (v's, checked above).
    // An f64 q narrowed to f32 for the softmax is not the kernel's
    // arithmetic (it would compute in f64).
    if (widened && (g_.node(x).type.dtype != q.dtype || q.dtype == DType::f64 ||
                    g_.node(pv.operands[0]).type.dtype != q.dtype))
      return std::nullopt;
    return m;
  }

private:
  bool once(NodeId id) const { return uses_[id] == 1; }

  // A dtype conversion used only here: to(dtype), or to_like (operand 0
  // converted to operand 1's dtype).
  bool cast(NodeId id) const {
    const Op op = g_.node(id).op;
    return (op == Op::Cast || op == Op::CastLike) && once(id);
  }
  NodeId cast_source(NodeId id) const { return g_.node(id).operands[0]; }

  // y * s or y / s, s a host scalar, the result in y's dtype: y (and s into
  // m.factors); else -1.
  NodeId scaled(NodeId id, Match &m) const {
    const Node &Y = g_.node(id);
    if (Y.op != Op::Mul && Y.op != Op::Div)
      return -1;
    const int si = Y.op == Op::Div ? 1
                   : g_.node(Y.operands[1]).type.scalar ? 1
                                                        : 0;
    const Node &t = g_.node(Y.operands[1 - si]);
    if (!g_.node(Y.operands[si]).type.scalar || t.type.scalar ||
        t.type.dtype != Y.type.dtype)
      return -1;
    m.factors.push_back({Y.operands[si], Y.op == Op::Div});
    return Y.operands[1 - si];
  }

  // y: q @ k^T, maybe times or divided by a host scalar; used only here.
  // m is as it was where y is not.
  bool scores(NodeId y, Match &m) const {
    Match before = m;
    if (scores_of(y, m))
      return true;
    m = before;
    return false;
  }
  bool scores_of(NodeId y, Match &m) const {
    if (!once(y))
      return false;
    NodeId s = y;
    if (NodeId t = scaled(y, m); t >= 0) {
      s = t;
      if (!once(s))
        return false;
    } else if (g_.node(y).op == Op::Mul || g_.node(y).op == Op::Div) {
      return false;
    }
    const Node &S = g_.node(s);
    if (S.op != m.product)
      return false;
    // k^T scaled after the transpose (q @ (k^T * s)), used only here.
    NodeId kt_id = S.operands[1];
    if (once(kt_id))
      if (NodeId t = scaled(kt_id, m); t >= 0)
        kt_id = t;
    const Node &kt = g_.node(kt_id);
    if (kt.op != Op::Transpose)
      return false;
    // The last two dims: counted from the end, or from the front when the
    // rank is known.
    const int64_t r = kt.type.shape.ranked ? int64_t(kt.type.shape.dims.size())
                      : m.product == Op::Bmm ? 3
                                             : 0;
    int64_t d[2];
    for (int i = 0; i < 2; ++i) {
      const Node &c = g_.node(kt.operands[1 + i]);
      if (c.op != Op::Constant)
        return false;
      d[i] = int64_t(c.constant) >= 0 && r > 0 ? int64_t(c.constant) - r
                                               : int64_t(c.constant);
    }
    if (std::min(d[0], d[1]) != -2 || std::max(d[0], d[1]) != -1)
      return false;
    m.q = S.operands[0];
    // q scaled before the product (q * s @ k^T), the scaled q used only here.
    if (once(m.q))
      if (NodeId t = scaled(m.q, m); t >= 0)
        m.q = t;
    m.k = kt.operands[0];
    // k scaled before the transpose ((k * s)^T), the transposed scaled k
    // and the scaled k used only here.
    if (once(kt_id) && once(m.k))
      if (NodeId t = scaled(m.k, m); t >= 0)
        m.k = t;
    return true;
  }

  const Graph &g_;
  std::vector<int> uses_;
};

} // namespace

llvm::Expected<Graph> fuse_attention(const Graph &g, const PassOptions &) {
  Matcher matcher(g);
  Graph out;
  out.name = g.name;
  out.checks = g.checks;
  out.assumptions = g.assumptions;
  std::vector<NodeId> map(g.nodes.size(), -1);
  auto add = [&](Node n) {
    out.nodes.push_back(std::move(n));
    return NodeId(out.nodes.size() - 1);
  };
  for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id) {
    const Node &n = g.node(id);
    std::optional<Match> m = matcher.match(n);
    if (!m) {
      Node c = n;
      for (NodeId &o : c.operands)
        o = map[o];
      map[id] = add(std::move(c));
      continue;
    }
    auto constant = [&](double v, DType dt) {
      Node c;
      c.op = Op::Constant;
      c.constant = v;
      c.type = Type::weak_scalar(dt);
      c.loc = n.loc;
      return add(std::move(c));
    };
    Node a;
    a.op = Op::Attention;
    a.type = n.type; // the product's: q's shape with v's last dim, q's dtype
    a.name = n.name;
    a.loc = n.loc;
    a.operands = {map[m->q], map[m->k], map[m->v],
                  m->mask >= 0 ? map[m->mask] : constant(-0.0, DType::f64),
                  constant(0, DType::i64)};
    // The scale: one multiplier as it is, else 1 times or divided by each
    // factor on the host.
    if (m->factors.size() == 1 && !m->factors[0].second) {
      a.operands.push_back(map[m->factors[0].first]);
    } else {
      NodeId s = constant(1.0, DType::f64);
      for (auto [f, divide] : m->factors) {
        Node d;
        d.op = divide ? Op::Div : Op::Mul;
        d.operands = {s, map[f]};
        d.loc = n.loc;
        out.nodes.push_back(d);
        llvm::Expected<Type> t = infer_node_type(out, NodeId(out.nodes.size() - 1));
        if (!t)
          return t.takeError();
        out.nodes.back().type = *t;
        s = NodeId(out.nodes.size() - 1);
      }
      a.operands.push_back(s);
    }
    // Written as matmuls or bmms: their batch rules (the host checks them).
    a.operands.push_back(constant(double(m->product == Op::Bmm
                                             ? AttentionProducts::Bmm
                                             : AttentionProducts::Matmul),
                                  DType::i64));
    map[id] = add(std::move(a));
  }
  for (NodeId o : g.outputs)
    out.outputs.push_back(map[o]);
  return out;
}

} // namespace kiln::passes
