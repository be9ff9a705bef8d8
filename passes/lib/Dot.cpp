// Graphviz output for graphs (kiln-opt --emit=dot, the debug dump).
#include <kiln/passes/dot.h>
#include <kiln/passes/text.h>

#include <llvm/Support/raw_ostream.h>

#include <map>

namespace kiln::ir {

namespace {

std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string label(const Graph &g, NodeId id, const std::string &name) {
  const Node &n = g.nodes[id];
  std::string op = op_info(n.op).name;
  if (n.op == Op::Constant) {
    op += " " + constant_text(n);
  } else if (op_info(n.op).kind == OpKind::Argument) {
    op += " #" + std::to_string(n.arg_index);
  } else if (std::string attrs = attributes_text(n); !attrs.empty()) {
    op += " " + attrs;
  }
  return name + " = " + op + " : " + to_string(n.type);
}

} // namespace

std::string to_dot(const Graph &g, llvm::ArrayRef<int> group_of_node,
                   llvm::StringRef group_label) {
  std::vector<std::string> names = value_names(g);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "digraph \"" << escape(g.name) << "\" {\n"
     << "  node [shape=box, fontname=\"monospace\"];\n";

  std::map<int, std::vector<NodeId>> groups;
  auto group = [&](NodeId id) {
    return (size_t)id < group_of_node.size() ? group_of_node[id] : -1;
  };
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id)
    groups[group(id)].push_back(id);

  for (auto &[gid, ids] : groups) {
    std::string indent = "  ";
    if (gid >= 0) {
      os << "  subgraph cluster_" << gid << " {\n"
         << "    label=\"" << escape(group_label) << " " << gid << "\";\n";
      indent = "    ";
    }
    for (NodeId id : ids) {
      const Node &n = g.nodes[id];
      os << indent << "n" << id << " [label=\""
         << escape(label(g, id, names[id])) << "\"";
      if (op_info(n.op).kind == OpKind::Argument)
        os << ", shape=ellipse";
      else if (n.op == Op::Constant)
        os << ", shape=plaintext";
      os << "];\n";
    }
    if (gid >= 0)
      os << "  }\n";
  }

  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id)
    for (NodeId o : g.nodes[id].operands)
      os << "  n" << o << " -> n" << id << ";\n";
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    os << "  out" << i << " [label=\"return " << i
       << "\", shape=doublecircle];\n";
    os << "  n" << g.outputs[i] << " -> out" << i << ";\n";
  }
  os << "}\n";
  return out;
}

} // namespace kiln::ir
