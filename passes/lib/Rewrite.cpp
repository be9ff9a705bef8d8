// The rewrite driver (Rewrite.h): the walk, snippets, pattern matching.
#include "Rewrite.h"

#include "RewriteUtil.h"

#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

namespace kiln::passes {

using namespace kiln::ir;

llvm::Expected<NodeId> Rewriter::emit(Op op, llvm::ArrayRef<NodeId> operands,
                                      const Node *attrs, std::string name) {
  Node n;
  n.op = op;
  n.operands.assign(operands.begin(), operands.end());
  if (attrs) {
    n.dims = attrs->dims;
    n.keepdim = attrs->keepdim;
    n.cast_to = attrs->cast_to;
  }
  n.loc = loc;
  n.name = std::move(name);
  NodeId id = b_.add(std::move(n));
  Graph &g = b_.graph();
  llvm::Expected<Type> t = infer_node_type(g, id, &g.assumptions);
  if (!t)
    return t.takeError();
  g.nodes[id].type = std::move(*t);
  return id;
}

llvm::Expected<NodeId> Rewriter::instantiate(const Graph &snippet,
                                             llvm::ArrayRef<NodeId> operands,
                                             EmitOp emit_op) {
  auto unbound = [] {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "internal error: a snippet uses an operand it was not given");
  };
  // An argument the snippet does not use may be unbound (-1).
  std::vector<NodeId> map(snippet.nodes.size(), -1);
  for (NodeId sid = 0; sid < (NodeId)snippet.nodes.size(); ++sid) {
    const Node &sn = snippet.nodes[sid];
    if (sn.op == Op::Input) {
      if (sn.arg_index < (int)operands.size())
        map[sid] = operands[sn.arg_index];
    } else if (sn.op == Op::Constant) {
      map[sid] = constant(sn.constant, sn.type.dtype);
    } else {
      llvm::SmallVector<NodeId, 3> ops;
      for (NodeId o : sn.operands) {
        if (map[o] < 0)
          return unbound();
        ops.push_back(map[o]);
      }
      llvm::Expected<NodeId> id = emit_op(sn, ops);
      if (!id)
        return id.takeError();
      map[sid] = *id;
    }
  }
  if (map[snippet.outputs[0]] < 0)
    return unbound();
  return map[snippet.outputs[0]];
}

llvm::Expected<NodeId> Rewriter::instantiate(const Graph &snippet,
                                             llvm::ArrayRef<NodeId> operands) {
  return instantiate(snippet, operands,
                     [&](const Node &sn, llvm::ArrayRef<NodeId> ops) {
                       return emit(sn.op, ops, &sn);
                     });
}

llvm::Expected<Graph> rewrite_graph(const Graph &g, RewriteFn rewrite) {
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
    rw.loc = n.loc;
    rw.mark = b.graph().nodes.size();
    RewriteResult r = rewrite(rw, Site{n, x, is_output[id]});
    if (!r)
      return r.takeError();
    if (!*r) {
      rw.roll_back();
      map[id] = copy_node(b, n, map);
      continue;
    }
    NodeId result = **r;
    if ((size_t)result >= rw.mark)
      b.graph().nodes[result].name = n.name;
    map[id] = result;
  }
  return finish(b, g, map);
}

llvm::Expected<Graph> parse_snippet(llvm::StringRef what, int num_args,
                                    llvm::StringRef body,
                                    llvm::StringRef result) {
  std::string text = "graph @snippet(";
  for (int a = 0; a < num_args; ++a)
    text += std::string(a ? ", " : "") + "%" + char('a' + a) + ": f32[*]";
  text += ") {\n" + body.str() + "\nreturn " + result.str() + "\n}\n";
  auto parsed = parse_kir(text, what);
  if (!parsed)
    return parsed.takeError();
  return std::move((*parsed)[0].graph);
}

namespace {

// Pattern node -> node of the graph, as far as matched (-1: not yet).
using Binding = llvm::SmallVector<NodeId, 8>;

class Matcher {
public:
  Matcher(const Graph &pattern, const Graph &g) : p_(pattern), g_(g) {}

  // The operands of pattern node `pn` (an op of `root`'s kind) against
  // `operands`, in order or, for a COMMUTATIVE op, swapped.
  bool operands(const Node &pn, llvm::ArrayRef<NodeId> operands,
                Binding &bound) const {
    if (pn.operands.size() != operands.size())
      return false;
    if (in_order(pn.operands, operands, bound))
      return true;
    if (!is_commutative(pn.op) || operands.size() != 2)
      return false;
    NodeId swapped[] = {operands[1], operands[0]};
    return in_order(pn.operands, swapped, bound);
  }

  bool node(NodeId pid, NodeId id, Binding &bound) const {
    if (bound[pid] >= 0)
      return bound[pid] == id;
    const Node &pn = p_.node(pid), &n = g_.node(id);
    if (pn.op == Op::Constant) {
      if (n.op != Op::Constant || n.constant != pn.constant)
        return false;
    } else if (pn.op != Op::Input) {
      if (!same_op(pn, n) || !operands(pn, n.operands, bound))
        return false;
    }
    bound[pid] = id;
    return true;
  }

  static bool same_op(const Node &pn, const Node &n) {
    return pn.op == n.op && pn.dims == n.dims && pn.keepdim == n.keepdim &&
           pn.cast_to == n.cast_to;
  }

private:
  bool in_order(llvm::ArrayRef<NodeId> pattern_ops,
                llvm::ArrayRef<NodeId> operands, Binding &bound) const {
    Binding tried = bound; // kept only when every operand matches
    for (size_t i = 0; i < operands.size(); ++i)
      if (!node(pattern_ops[i], operands[i], tried))
        return false;
    bound = std::move(tried);
    return true;
  }

  const Graph &p_;
  const Graph &g_;
};

} // namespace

bool match(const Graph &pattern, const Graph &g, const Node &root,
           llvm::ArrayRef<NodeId> operands,
           llvm::SmallVectorImpl<NodeId> &args) {
  Matcher m(pattern, g);
  const Node &result = pattern.node(pattern.outputs[0]);
  Binding bound(pattern.nodes.size(), -1);
  if (!Matcher::same_op(result, root) || !m.operands(result, operands, bound))
    return false;
  args.assign(pattern.num_args(), -1);
  for (NodeId pid = 0; pid < (NodeId)pattern.nodes.size(); ++pid)
    if (pattern.nodes[pid].op == Op::Input)
      args[pattern.nodes[pid].arg_index] = bound[pid];
  return true;
}

} // namespace kiln::passes
