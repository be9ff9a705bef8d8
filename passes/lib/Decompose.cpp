// decompose: replaces ops with a decomposition (sigmoid, silu, gelu, ...,
// and the composites mean, softmax, layer_norm, ...) by the KIR snippet of
// their kiln/ops.def entry, recursively. A composite's snippet has the
// node's dims and keepdim in place of $dims and $keepdim.
//
// A pointwise op's expansion is used only when every op in it computes in
// the result's dtype, as the eager formula does: sigmoid of an integer
// tensor computes in f32, while its snippet would start with an integer
// `neg`. Such nodes stay whole (their formula handles the conversion).
#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include "ReduceDims.h"
#include "Rewrite.h"
#include "RewriteUtil.h"
#include "ShapeChecks.h"

#include <functional>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

constexpr int kMaxDepth = 8;

// The snippet of `op` with its `$dims` and `$keepdim` replaced by `n`'s
// attributes.
std::string substitute(llvm::StringRef snippet, const Node &n) {
  std::string out;
  while (true) {
    size_t dollar = snippet.find('$');
    out += snippet.take_front(dollar);
    if (dollar == llvm::StringRef::npos)
      return out;
    snippet = snippet.drop_front(dollar);
    if (snippet.consume_front("$dims"))
      out += dims_text(n.dims);
    else if (snippet.consume_front("$keepdim"))
      out += n.keepdim ? "true" : "false";
    else { // not ours: the parser reports it
      out += '$';
      snippet = snippet.drop_front();
    }
  }
}

llvm::Expected<Graph> parse_snippet(const OpInfo &info, llvm::StringRef body) {
  return passes::parse_snippet(std::string("<decomposition of ") + info.name +
                                   ">",
                               info.arity, body);
}

struct Snippets {
  // Pointwise ops: parsed once. Composites are parsed per use, with the
  // node's attributes in place of $dims and $keepdim.
  std::vector<std::optional<Graph>> by_op;
  std::string error; // the table's snippets are ours: a bad one is a bug
};

const Snippets &snippets() {
  static const Snippets table = [] {
    Snippets s;
    for (int i = 0; i < kNumOps; ++i) {
      Op op = static_cast<Op>(i);
      s.by_op.emplace_back();
      const OpInfo &info = op_info(op);
      if (!*info.decomposition)
        continue;
      Node example; // checks a composite's snippet before any use
      example.op = op;
      auto parsed =
          parse_snippet(info, substitute(info.decomposition, example));
      if (!parsed) {
        s.error += llvm::toString(parsed.takeError());
        continue;
      }
      if (info.kind != OpKind::Composite)
        s.by_op.back() = std::move(*parsed);
    }
    return s;
  }();
  return table;
}

class Expander {
public:
  explicit Expander(Rewriter &rw) : rw_(rw) {}

  // Appends `n`'s op and attributes on `operands`, expanded when it has a
  // usable decomposition.
  llvm::Expected<NodeId> emit(const Node &n, llvm::ArrayRef<NodeId> operands,
                              const std::string &name, int depth) {
    Graph &g = rw_.graph();
    size_t mark = g.nodes.size();
    llvm::Expected<NodeId> plain = rw_.emit(n.op, operands, &n, name);
    if (!plain)
      return plain.takeError();
    const OpInfo &info = op_info(n.op);
    bool composite = info.kind == OpKind::Composite;
    std::optional<Graph> parsed;
    if (composite) {
      llvm::Expected<Graph> p =
          parse_snippet(info, substitute(info.decomposition, n));
      if (!p)
        return p.takeError();
      parsed = std::move(*p);
    }
    const std::optional<Graph> &snippet =
        composite ? parsed : snippets().by_op[static_cast<int>(n.op)];
    if (!snippet)
      return plain;
    if (depth >= kMaxDepth)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          std::string("the decompositions of kiln/ops.def nest deeper than ") +
              std::to_string(kMaxDepth) + " at '" + info.name + "'");
    Type want = g.nodes[*plain].type;
    g.nodes.resize(mark);

    llvm::Expected<NodeId> expanded = rw_.instantiate(
        *snippet, operands, [&](const Node &sn, llvm::ArrayRef<NodeId> ops) {
          return emit(sn, ops, "", depth + 1);
        });
    if (!expanded)
      return expanded.takeError();
    NodeId result = *expanded;
    // A composite is its decomposition (the eager runtime follows it too),
    // so it always expands; its type rule must agree with the expansion.
    if (composite) {
      if (g.nodes[result].type == want) {
        g.nodes[result].name = name;
        return result;
      }
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          std::string("internal error: the decomposition of '") + info.name +
              "' computes " + to_string(g.nodes[result].type) +
              ", but its type is " + to_string(want));
    }
    bool same_dtype = true;
    for (size_t i = mark; i < g.nodes.size(); ++i)
      same_dtype &=
          g.nodes[i].op == Op::Constant || g.nodes[i].type.dtype == want.dtype;
    if (same_dtype && (size_t)result >= mark && g.nodes[result].type == want) {
      g.nodes[result].name = name;
      return result;
    }
    g.nodes.resize(mark);
    return rw_.emit(n.op, operands, &n, name);
  }

private:
  Rewriter &rw_;
};

// The shapes of a norm's input, weight and bias are valid for every value
// of their symbols: x of rank >= 1, each tensor argument [x's last dim].
bool norm_args_known(const Graph &g, const Node &n) {
  const Shape &x = g.node(n.operands[0]).type.shape;
  if (!x.ranked || x.dims.empty())
    return false;
  for (size_t i = 1; i < n.operands.size(); ++i) {
    const Type &t = g.node(n.operands[i]).type;
    if (!t.scalar && !(t.shape.ranked && t.shape.dims.size() == 1 &&
                       t.shape.dims[0] == x.dims.back()))
      return false;
  }
  return true;
}

// An activation applied to a matrix product, directly or after adds (a
// bias, a residual): the GEMM's epilogue may apply it (cuBLASLt's relu and
// gelu), so it stays whole for the scheduler to find.
bool product_activation(const Graph &g, const Node &n) {
  if (!is_epilogue_activation(n.op))
    return false;
  std::function<bool(NodeId, int)> from_product = [&](NodeId id, int adds) {
    const Node &x = g.node(id);
    if (is_gemm(x.op))
      return true;
    return x.op == Op::Add && adds < 2 &&
           (from_product(x.operands[0], adds + 1) ||
            from_product(x.operands[1], adds + 1));
  };
  return from_product(n.operands[0], 0);
}

} // namespace

llvm::Expected<Graph> decompose(const Graph &g, const PassOptions &) {
  if (!snippets().error.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kiln/ops.def: a decomposition does not "
                                   "parse:\n" +
                                       snippets().error);
  std::optional<ShapeCheckBuilder> checks; // into the new graph's checks
  return rewrite_graph(g, [&](Rewriter &rw, const Site &s) -> RewriteResult {
    const Node &n = s.node;
    // The norms' eager checks that their decomposition (which broadcasts)
    // does not make: a 0-d input, a weight or bias not of shape [x.size(-1)]
    // (runtime/src/reduce.cpp, plan_last and set_affine).
    if (op_info(n.op).form == CompositeForm::NORM && !norm_args_known(g, n)) {
      if (!checks)
        checks.emplace(g, rw.graph().checks);
      checks->constraint(n);
    }
    // Casts, now that types are known: to_like and to_into become a `to`
    // of operand 1's dtype, and a cast to the dtype its operand has is that
    // operand (as Tensor::to returns its object). to_into where eager's
    // in-place op raises fails the variant.
    if (n.op == Op::Cast || n.op == Op::CastLike || n.op == Op::CastInto) {
      DType to = n.op == Op::Cast ? n.cast_to : g.node(n.operands[1]).type.dtype;
      DType from = g.node(n.operands[0]).type.dtype;
      if (n.op == Op::CastInto && !can_cast(from, to))
        return llvm::make_error<PassError>(
            NodeId(&n - g.nodes.data()), n.loc, n.name,
            std::string("an in-place update of a tensor of dtype ") +
                dtype_name(to) + " by a result of dtype " + dtype_name(from) +
                " raises in eager (the result cannot be cast to the "
                "updated tensor's dtype)");
      if (from == to)
        return s.x[0];
      Node attrs;
      attrs.cast_to = to;
      llvm::Expected<NodeId> c = rw.emit(Op::Cast, s.x.take_front(), &attrs,
                                         n.name);
      if (!c)
        return c.takeError();
      return *c;
    }
    // rms_norm's eps: a negative one (its default, -1) stands for x's
    // machine epsilon, as eager takes it (kiln::machine_epsilon).
    if (n.op == Op::RmsNorm) {
      llvm::SmallVector<NodeId, 3> x(s.x.begin(), s.x.end());
      const Node &e = rw.graph().nodes[x[2]];
      double meps = machine_epsilon(g.node(n.operands[0]).type.dtype);
      if (e.op == Op::Constant) {
        if (e.constant < 0)
          x[2] = rw.constant(meps, DType::f64);
      } else {
        // Known at run time only: where(eps < 0, meps, eps), host work.
        Node none;
        llvm::Expected<NodeId> neg =
            rw.emit(Op::Lt, {x[2], rw.constant(0.0, DType::f64)}, &none);
        if (!neg)
          return neg.takeError();
        llvm::Expected<NodeId> pick = rw.emit(
            Op::Where, {*neg, rw.constant(meps, DType::f64), x[2]}, &none);
        if (!pick)
          return pick.takeError();
        x[2] = *pick;
      }
      llvm::Expected<NodeId> r = Expander(rw).emit(n, x, n.name, 0);
      if (!r)
        return r.takeError();
      return *r;
    }
    OpKind kind = op_info(n.op).kind;
    if ((kind != OpKind::Pointwise && kind != OpKind::Composite) ||
        product_activation(g, n))
      return std::nullopt;
    llvm::Expected<NodeId> r = Expander(rw).emit(n, s.x, n.name, 0);
    if (!r)
      return r.takeError();
    return *r;
  });
}

} // namespace kiln::passes
