// sink-cat: pointwise work after a concatenation moves before it, so the
// concatenation is the last op and each of its pieces is one pointwise
// value (Inductor lowers cat into the pointwise kernels around it; Kiln's
// kernels then write their pieces straight into the result, Schedule.cpp).
//
//   y = f(cat(a0, ..., ak, d), x)   ->   y = cat(f(a0, part0(x)), ..., d)
//
// where part_j(x) is the piece of x that lines up with a_j along d: x
// itself when it broadcasts along d, its slice [start_j, start_j + e_j)
// when it has the result's full extent there (ops.def's `part`, a view the
// host makes). The extents e_j are `size` host scalars of values whose
// shapes the host knows before the first launch (arguments and views):
// each a_j is reached from one through shape-keeping pointwise ops (one
// tensor operand). Rotary embedding, `x * cos + cat(-x2, x1) * sin`,
// becomes `cat(x1 * cos1 - x2 * sin1, x2 * cos2 + x1 * sin2)`: two pieces
// of one kernel reading x once.
//
// A concatenation sinks when its dim counts from the end (broadcasting
// aligns shapes there; a dim from the front names another dim in a result
// of higher rank), its tensors have its dtype (a promoted piece would
// compute in another dtype), it has one use and is not an output.
#include <kiln/passes/passes.h>

#include "RewriteUtil.h"

#include <map>
#include <tuple>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// The value whose shape a tensor operand of cat has: itself when an
// argument or view, else what it is computed from through pointwise ops
// with one tensor operand; -1 when no such value exists.
NodeId shape_witness(const Graph &g, NodeId id) {
  while (true) {
    const Node &n = g.node(id);
    if (n.op == Op::Input || is_view(n.op))
      return id;
    if (!is_pointwise(n.op) || n.type.scalar)
      return -1;
    NodeId tensor = -1;
    for (NodeId o : n.operands) {
      if (g.node(o).type.scalar)
        continue;
      if (tensor >= 0)
        return -1;
      tensor = o;
    }
    if (tensor < 0)
      return -1;
    id = tensor;
  }
}

// A concatenation in the new graph: its dim (negative), pieces, and the
// host scalars of the pieces' extents along the dim, their starts and the
// sum.
struct CatForm {
  int64_t dim;
  std::vector<NodeId> pieces, extents, starts;
  NodeId full;
};

struct Sinker {
  const Graph &g;
  Graph out;
  std::vector<NodeId> map;
  std::map<NodeId, CatForm> cats; // old node -> its form as a cat
  std::vector<int> uses;

  explicit Sinker(const Graph &g)
      : g(g), map(g.nodes.size(), -1), uses(g.use_counts()) {
    out.name = g.name;
    out.assumptions = g.assumptions;
    out.checks = g.checks;
  }

  llvm::Expected<NodeId> emit(Node n) { return append_typed(out, std::move(n)); }
  NodeId constant(double v, DType dt, const Loc &loc) {
    Node c;
    c.op = Op::Constant;
    c.constant = v;
    c.type = Type::weak_scalar(dt);
    c.loc = loc;
    out.nodes.push_back(std::move(c));
    return NodeId(out.nodes.size() - 1);
  }
  llvm::Expected<NodeId> binary(Op op, NodeId a, NodeId b, const Loc &loc) {
    Node n;
    n.op = op;
    n.operands = {a, b};
    n.loc = loc;
    return emit(std::move(n));
  }

  bool is_output(NodeId id) const { return llvm::is_contained(g.outputs, id); }

  // A cat of the old graph: its extents, when every tensor has a witness.
  llvm::Error record_cat(NodeId id) {
    const Node &n = g.node(id);
    const int64_t d = cat_dim(g, n);
    if (d >= 0)
      return llvm::Error::success();
    std::vector<NodeId> witnesses;
    for (NodeId o : llvm::ArrayRef<NodeId>(n.operands).drop_back()) {
      const Node &on = g.node(o);
      NodeId w = shape_witness(g, o);
      if (on.type.scalar || on.type.dtype != n.type.dtype || w < 0)
        return llvm::Error::success();
      witnesses.push_back(w);
    }
    CatForm f{d, {}, {}, {}, -1};
    for (NodeId o : llvm::ArrayRef<NodeId>(n.operands).drop_back())
      f.pieces.push_back(map[o]);
    NodeId at = constant(0, DType::i64, n.loc);
    for (NodeId w : witnesses) {
      Node s;
      s.op = Op::Size;
      s.operands = {map[w]};
      s.dims = {d};
      s.loc = n.loc;
      llvm::Expected<NodeId> e = emit(std::move(s));
      if (!e)
        return e.takeError();
      f.starts.push_back(at);
      f.extents.push_back(*e);
      llvm::Expected<NodeId> next = binary(Op::Add, at, *e, n.loc);
      if (!next)
        return next.takeError();
      at = *next;
    }
    f.full = at;
    cats[id] = std::move(f);
    return llvm::Error::success();
  }

  // The piece of old value o lining up with piece j of cat form f: a weak
  // scalar itself; a pointwise value computed from the pieces of its
  // operands (the scheduler then recomputes it piece by piece instead of
  // writing it whole); anything else through a `part` view.
  std::map<std::tuple<NodeId, NodeId, NodeId, NodeId>, NodeId> parts;
  llvm::Expected<NodeId> part_of(NodeId o, const CatForm &f, size_t j) {
    const Node &on = g.node(o);
    if (on.type.scalar)
      return map[o];
    auto key = std::make_tuple(o, f.starts[j], f.extents[j], f.full);
    if (auto it = parts.find(key); it != parts.end())
      return it->second;
    Node p;
    if (is_pointwise(on.op) && !cats.count(o)) {
      p = on;
      p.name.clear();
      for (NodeId &x : p.operands) {
        llvm::Expected<NodeId> px = part_of(x, f, j);
        if (!px)
          return px.takeError();
        x = *px;
      }
    } else {
      p.op = Op::Part;
      p.operands = {map[o], constant(double(f.dim), DType::i64, on.loc),
                    f.starts[j], f.extents[j], f.full};
      p.loc = on.loc;
    }
    llvm::Expected<NodeId> id = emit(std::move(p));
    if (!id)
      return id.takeError();
    parts[key] = *id;
    return *id;
  }

  // Pointwise node id with operand `c`, a cat that sinks: one piece per
  // piece of c, then their cat.
  llvm::Expected<NodeId> sink(NodeId id, NodeId c) {
    const Node &n = g.node(id);
    const CatForm &f = cats.at(c);
    CatForm r = f;
    r.pieces.clear();
    for (size_t j = 0; j < f.pieces.size(); ++j) {
      Node p;
      p.op = n.op;
      p.cast_to = n.cast_to;
      p.loc = n.loc;
      for (NodeId o : n.operands) {
        if (o == c) {
          p.operands.push_back(f.pieces[j]);
          continue;
        }
        llvm::Expected<NodeId> pid = part_of(o, f, j);
        if (!pid)
          return pid.takeError();
        p.operands.push_back(*pid);
      }
      llvm::Expected<NodeId> pid = emit(std::move(p));
      if (!pid)
        return pid.takeError();
      r.pieces.push_back(*pid);
    }
    Node cat;
    cat.op = Op::Cat;
    cat.operands.assign(r.pieces.begin(), r.pieces.end());
    cat.operands.push_back(constant(double(f.dim), DType::i64, n.loc));
    cat.name = n.name;
    cat.loc = n.loc;
    llvm::Expected<NodeId> cid = emit(std::move(cat));
    if (!cid)
      return cid.takeError();
    cats[id] = std::move(r);
    return *cid;
  }

  llvm::Expected<Graph> run() {
    for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id) {
      const Node &n = g.node(id);
      NodeId sinks = -1;
      if (is_pointwise(n.op) && !n.type.scalar)
        for (NodeId o : n.operands)
          if (cats.count(o) && uses[o] == 1 && !is_output(o)) {
            sinks = o;
            break;
          }
      if (sinks >= 0) {
        llvm::Expected<NodeId> r = sink(id, sinks);
        if (!r)
          return r.takeError();
        map[id] = *r;
        continue;
      }
      map[id] = copy_node(out, n, map);
      if (n.op == Op::Cat)
        if (llvm::Error e = record_cat(id))
          return std::move(e);
    }
    for (NodeId o : g.outputs)
      out.outputs.push_back(map[o]);
    return std::move(out);
  }

};

} // namespace

llvm::Expected<Graph> sink_cat(const Graph &g, const PassOptions &) {
  return Sinker(g).run();
}

} // namespace kiln::passes
