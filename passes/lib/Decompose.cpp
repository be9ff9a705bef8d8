// decompose: replaces composite ops (sigmoid, silu, gelu, ...) by the KIR
// snippet of their kiln/ops.def entry, recursively.
//
// An expansion is used only when every op in it computes in the result's
// dtype, as the eager formula does: sigmoid of an integer tensor computes in
// f32, while its snippet would start with an integer `neg`. Such nodes stay
// whole (their formula handles the conversion).
#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include "RewriteUtil.h"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

constexpr int kMaxDepth = 8;

struct Snippets {
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
      std::string text = std::string("graph @") + info.name + "(";
      for (int a = 0; a < info.arity; ++a)
        text += std::string(a ? ", " : "") + "%" + char('a' + a) + ": f32[*]";
      text += ") {\n" + std::string(info.decomposition) + "\nreturn %r\n}\n";
      auto parsed =
          parse_kir(text, std::string("<decomposition of ") + info.name + ">");
      if (!parsed) {
        s.error += llvm::toString(parsed.takeError());
        continue;
      }
      s.by_op.back() = std::move((*parsed)[0].graph);
    }
    return s;
  }();
  return table;
}

class Expander {
public:
  explicit Expander(GraphBuilder &b) : b_(b) {}

  // Appends op(operands), expanded when it has a usable decomposition.
  llvm::Expected<NodeId> emit(Op op, llvm::ArrayRef<NodeId> operands,
                              const Loc &loc, const std::string &name,
                              int depth) {
    Graph &g = b_.graph();
    size_t mark = g.nodes.size();
    llvm::Expected<NodeId> plain = emit_plain(op, operands, loc, name);
    if (!plain)
      return plain.takeError();
    const Snippets &table = snippets();
    const std::optional<Graph> &snippet = table.by_op[static_cast<int>(op)];
    if (!snippet)
      return plain;
    if (depth >= kMaxDepth)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          std::string("the decompositions of kiln/ops.def nest deeper than ") +
              std::to_string(kMaxDepth) + " at '" + op_info(op).name + "'");
    Type want = g.nodes[*plain].type;
    g.nodes.resize(mark);

    std::vector<NodeId> map(snippet->nodes.size(), -1);
    for (NodeId sid = 0; sid < (NodeId)snippet->nodes.size(); ++sid) {
      const Node &sn = snippet->nodes[sid];
      if (sn.op == Op::Input) {
        map[sid] = operands[sn.arg_index];
      } else if (sn.op == Op::Constant) {
        map[sid] = b_.constant(sn.constant, sn.type.dtype, loc);
      } else {
        llvm::SmallVector<NodeId, 3> ops;
        for (NodeId o : sn.operands)
          ops.push_back(map[o]);
        llvm::Expected<NodeId> id = emit(sn.op, ops, loc, "", depth + 1);
        if (!id)
          return id.takeError();
        map[sid] = *id;
      }
    }
    NodeId result = map[snippet->outputs[0]];
    bool same_dtype = true;
    for (size_t i = mark; i < g.nodes.size(); ++i)
      same_dtype &=
          g.nodes[i].op == Op::Constant || g.nodes[i].type.dtype == want.dtype;
    if (same_dtype && (size_t)result >= mark && g.nodes[result].type == want) {
      g.nodes[result].name = name;
      return result;
    }
    g.nodes.resize(mark);
    return emit_plain(op, operands, loc, name);
  }

private:
  GraphBuilder &b_;

  llvm::Expected<NodeId> emit_plain(Op op, llvm::ArrayRef<NodeId> operands,
                                    const Loc &loc, const std::string &name) {
    NodeId id = b_.op(op, operands, loc, name);
    Graph &g = b_.graph();
    llvm::Expected<Type> t = infer_node_type(g, id, &g.assumptions);
    if (!t)
      return t.takeError();
    g.nodes[id].type = std::move(*t);
    return id;
  }
};

} // namespace

llvm::Expected<Graph> decompose(const Graph &g, const PassOptions &) {
  if (!snippets().error.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kiln/ops.def: a decomposition does not "
                                   "parse:\n" +
                                       snippets().error);
  GraphBuilder b = builder_like(g);
  Expander expander(b);
  std::vector<NodeId> map(g.nodes.size(), -1);
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    if (!is_pointwise(n.op)) {
      map[id] = copy_node(b, n, map);
      continue;
    }
    llvm::SmallVector<NodeId, 3> ops;
    for (NodeId o : n.operands)
      ops.push_back(map[o]);
    llvm::Expected<NodeId> r = expander.emit(n.op, ops, n.loc, n.name, 0);
    if (!r)
      return r.takeError();
    map[id] = *r;
  }
  return finish(b, g, map);
}

} // namespace kiln::passes
