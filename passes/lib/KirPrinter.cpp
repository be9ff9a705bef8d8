// KIR printer: Graph -> text that parse_kir reads back to the same graph.
#include <kiln/passes/text.h>

#include "ReduceDims.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/raw_ostream.h>

#include <charconv>
#include <cmath>

namespace kiln::ir {

namespace {

bool is_identifier(llvm::StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

// Graph names are C++ function names or symbols: print them bare when the
// lexer reads them back as one token, else quoted.
bool is_bare_graph_name(llvm::StringRef s) {
  return !s.empty() && llvm::all_of(s, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
  });
}

void print_quoted(llvm::raw_ostream &os, llvm::StringRef s) {
  os << '"';
  for (char c : s) {
    switch (c) {
    case '"':
      os << "\\\"";
      break;
    case '\\':
      os << "\\\\";
      break;
    case '\n':
      os << "\\n";
      break;
    case '\t':
      os << "\\t";
      break;
    default:
      os << c;
    }
  }
  os << '"';
}

// Shortest text that reads back to the same double; always with a `.`,
// exponent, inf or nan so that it also reads back as an f64 literal.
std::string format_f64(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

} // namespace

std::string constant_text(const Node &n) {
  if (n.type.dtype == DType::b8)
    return n.constant != 0 ? "1" : "0";
  if (is_integral(n.type.dtype))
    return std::to_string(static_cast<int64_t>(n.constant));
  return format_f64(n.constant);
}

std::string attributes_text(const Node &n) {
  if (n.op == Op::Cast)
    return std::string("{dtype=") + dtype_name(n.cast_to) + "}";
  if (!has_dims_attribute(n.op))
    return "";
  return "{dims=" + dims_text(n.dims) +
         ", keepdim=" + (n.keepdim ? "true" : "false") + "}";
}

std::string to_string(const Shape &s) {
  if (!s.ranked)
    return "[*]";
  std::string out = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i)
      out += ", ";
    const SymDim &d = s.dims[i];
    out += d.is_symbolic() ? "s" + std::to_string(d.symbol)
                           : std::to_string(d.value);
  }
  return out + "]";
}

std::string to_string(const Type &t) {
  std::string out = dtype_name(t.dtype);
  if (!t.scalar)
    out += to_string(t.shape);
  return out;
}

namespace {
std::vector<std::string> value_names(const Graph &g, bool use_names) {
  llvm::StringMap<int> count;
  for (const Node &n : g.nodes)
    if (use_names && is_identifier(n.name))
      ++count[n.name];
  // Anonymous values are numbered in the order the text defines them (the
  // header's arguments first), which is the node id when the arguments are
  // the first nodes; so a parsed print prints the same.
  std::vector<NodeId> order;
  std::vector<bool> placed(g.nodes.size(), false);
  for (NodeId id : g.args())
    if (id >= 0 && !placed[id]) { // -1, repeats: only in invalid graphs
      order.push_back(id);
      placed[id] = true;
    }
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id)
    if (!placed[id])
      order.push_back(id);
  std::vector<std::string> names(g.nodes.size());
  for (size_t pos = 0; pos < order.size(); ++pos) {
    NodeId id = order[pos];
    const std::string &name = g.nodes[id].name;
    names[id] = "%" + (use_names && is_identifier(name) && count[name] == 1
                           ? name
                           : std::to_string(pos));
  }
  return names;
}

// What follows node `id`'s statement (or argument): ` loc(...)` and
// ` name("...")` where its value name does not carry its name.
std::string annotations(const Graph &g, NodeId id, llvm::StringRef value_name,
                        const PrintOptions &opts) {
  const Node &n = g.nodes[id];
  std::string out;
  llvm::raw_string_ostream os(out);
  if (opts.locations && n.loc.valid()) {
    os << " loc(";
    print_quoted(os, n.loc.file);
    os << ":" << n.loc.line << ":" << n.loc.col << ")";
  }
  bool carried = is_identifier(n.name) && value_name == "%" + n.name;
  if (opts.names && !n.name.empty() && !carried) {
    os << " name(";
    print_quoted(os, n.name);
    os << ")";
  }
  return out;
}
} // namespace

std::vector<std::string> value_names(const Graph &g) {
  return value_names(g, true);
}

std::string print(const Graph &g, const PrintOptions &opts) {
  std::vector<std::string> names = value_names(g, opts.names);
  std::string out;
  llvm::raw_string_ostream os(out);

  os << "graph @";
  if (is_bare_graph_name(g.name))
    os << g.name;
  else
    print_quoted(os, g.name);
  os << "(";
  bool first = true;
  for (NodeId id : g.args()) {
    if (!first)
      os << ", ";
    first = false;
    if (id < 0) { // verify() reports this; print something readable anyway
      os << "<missing>";
      continue;
    }
    os << names[id] << ": " << to_string(g.nodes[id].type)
       << annotations(g, id, names[id], opts);
  }
  os << ") {\n";

  for (const std::string &a : g.assumptions)
    os << "  # assume: " << a << "\n";
  for (auto [i, c] : llvm::enumerate(g.checks)) {
    os << "  # check: c" << i << " = " << op_info(c.op).name;
    if (c.op == Op::Input)
      os << " #" << c.arg_index;
    for (auto [j, o] : llvm::enumerate(c.operands))
      os << (j ? ", c" : " c") << o;
    if (is_reduction(c.op)) {
      os << " {dims=[";
      for (auto [j, d] : llvm::enumerate(c.dims))
        os << (j ? ", " : "") << d;
      os << "], keepdim=" << (c.keepdim ? "true" : "false") << "}";
    }
    if (c.raises)
      os << " raises";
    if (!c.name.empty())
      os << " (" << c.name << ")";
    if (c.loc.valid())
      os << " line " << c.loc.line;
    os << "\n";
  }

  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    const OpInfo &info = op_info(n.op);
    if (info.kind == OpKind::Argument)
      continue;
    std::string line;
    llvm::raw_string_ostream ls(line);
    ls << "  " << names[id] << ": " << to_string(n.type) << " = " << info.name;
    if (n.op == Op::Constant)
      ls << " " << constant_text(n);
    for (size_t i = 0; i < n.operands.size(); ++i)
      ls << (i ? ", " : " ") << names[n.operands[i]];
    if (std::string a = attributes_text(n); !a.empty())
      ls << " " << a;
    os << line;
    // Align locations (and names) in a column so the ops read as a list.
    if (std::string notes = annotations(g, id, names[id], opts); !notes.empty())
      os.indent(line.size() < 40 ? 40 - line.size() : 1)
          << llvm::StringRef(notes).drop_front();
    os << "\n";
  }

  os << "  return";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    os << (i ? ", " : " ") << names[g.outputs[i]];
  os << "\n}\n";
  return out;
}

std::string print(llvm::ArrayRef<Graph> graphs) {
  std::string out;
  for (size_t i = 0; i < graphs.size(); ++i) {
    if (i)
      out += "\n";
    out += print(graphs[i]);
  }
  return out;
}

} // namespace kiln::ir
