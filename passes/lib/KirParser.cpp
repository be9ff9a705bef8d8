// KIR parser: text -> graphs, with clang-style diagnostics on bad input.
//
// The whole input is lexed up front (KirLexer.h); the parser is recursive
// descent over one statement per line.
#include <kiln/passes/text.h>

#include "KirLexer.h"
#include "ReduceDims.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/raw_ostream.h>

#include <charconv>
#include <cmath>

namespace kiln::ir {

namespace {

using namespace kir;

bool is_number_token(const Token &t) {
  return t.kind == Tok::Number ||
         (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan"));
}

// A literal without `.`, exponent, inf or nan is an integer (i64).
bool looks_floating(llvm::StringRef s) {
  return s.find_first_of(".eE") != llvm::StringRef::npos || s.contains("inf") ||
         s.contains("nan");
}

std::optional<double> parse_f64(llvm::StringRef s) {
  s.consume_front("+");
  double v = 0;
  auto [p, ec] = std::from_chars(s.begin(), s.end(), v);
  if (ec != std::errc() || p != s.end())
    return std::nullopt;
  return v;
}

std::optional<int64_t> parse_i64(llvm::StringRef s) {
  s.consume_front("+");
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.begin(), s.end(), v);
  if (ec != std::errc() || p != s.end())
    return std::nullopt;
  return v;
}

class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef filename)
      : text_(text), filename_(filename), toks_(lex(text)) {}

  llvm::Expected<std::vector<ParsedGraph>> run() {
    std::vector<ParsedGraph> graphs;
    while (true) {
      skip_newlines();
      if (peek().kind == Tok::Eof)
        break;
      ParsedGraph pg;
      if (!parse_graph(pg))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       error_);
      graphs.push_back(std::move(pg));
    }
    return graphs;
  }

private:
  llvm::StringRef text_, filename_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::string error_; // the diagnostic, once parsing failed
  llvm::StringMap<bool> graph_names_;

  // Per graph.
  GraphBuilder *b_ = nullptr;
  ParsedGraph *pg_ = nullptr;
  llvm::StringMap<NodeId> values_;

  const Token &peek(size_t k = 0) const {
    return toks_[std::min(pos_ + k, toks_.size() - 1)];
  }
  const Token &take() {
    const Token &t = peek();
    if (pos_ < toks_.size() - 1)
      ++pos_;
    return t;
  }
  bool at_ident(llvm::StringRef word) const {
    return peek().kind == Tok::Ident && peek().text == word;
  }
  void skip_newlines() {
    while (peek().kind == Tok::Newline || peek().kind == Tok::Assume)
      take();
  }

  bool fail(const Token &at, const std::string &message) {
    // A lexing error takes precedence: it is what the user must fix here.
    const Token &t = peek().kind == Tok::Error ? peek() : at;
    std::string msg = t.kind == Tok::Error ? t.text : message;
    error_ = format_diagnostic(filename_, text_, t.line, t.col, msg);
    return false;
  }
  bool expect(Tok kind, const char *what) {
    if (peek().kind != kind)
      return fail(peek(), std::string("expected ") + what);
    take();
    return true;
  }
  bool end_statement() {
    if (peek().kind == Tok::Newline) {
      take();
      return true;
    }
    if (peek().kind == Tok::RBrace)
      return true;
    return fail(peek(), "expected the end of the statement");
  }
  void record(NodeId id, const Token &at, bool typed) {
    if (pg_->node_pos.size() <= (size_t)id) {
      pg_->node_pos.resize(id + 1);
      pg_->typed.resize(id + 1, false);
    }
    pg_->node_pos[id] = {at.line, at.col};
    pg_->typed[id] = typed;
  }
  static std::string name_of(const Token &value) {
    return llvm::all_of(value.text, llvm::isDigit) ? "" : value.text;
  }

  bool parse_graph(ParsedGraph &pg) {
    if (!at_ident("graph"))
      return fail(peek(), "expected 'graph'");
    take();
    const Token &name = peek();
    if (!expect(Tok::Global, "a graph name '@name'"))
      return false;
    if (graph_names_.count(name.text))
      return fail(name, "redefinition of graph @" + name.text);
    graph_names_[name.text] = true;

    GraphBuilder b(name.text);
    b_ = &b;
    pg_ = &pg;
    values_.clear();
    if (!expect(Tok::LParen, "'(' after the graph name") || !parse_args())
      return false;
    if (!expect(Tok::LBrace, "'{' to begin the graph body"))
      return false;

    bool returned = false;
    while (true) {
      while (peek().kind == Tok::Newline || peek().kind == Tok::Assume) {
        const Token &t = take();
        if (t.kind == Tok::Assume &&
            !llvm::is_contained(b.graph().assumptions, t.text))
          b.graph().assumptions.push_back(t.text);
      }
      const Token &t = peek();
      if (t.kind == Tok::RBrace) {
        if (!returned)
          return fail(t, "graph @" + name.text + " has no 'return'");
        take();
        break;
      }
      if (t.kind == Tok::Eof || at_ident("graph"))
        return fail(t, "expected '}' at the end of graph @" + name.text);
      if (returned)
        return fail(t, "'return' must be the last statement of a graph");
      if (at_ident("return")) {
        take();
        if (!parse_return())
          return false;
        returned = true;
      } else if (t.kind == Tok::Value) {
        if (!parse_node())
          return false;
      } else {
        return fail(t, "expected a statement ('%name = op ...' or 'return')");
      }
      if (!end_statement())
        return false;
    }
    pg.graph = b.take();
    pg.node_pos.resize(pg.graph.nodes.size());
    pg.typed.resize(pg.graph.nodes.size(), false);
    b_ = nullptr;
    return true;
  }

  // The argument list may span lines.
  void skip_line_breaks() {
    while (peek().kind == Tok::Newline && peek().text == "\n")
      take();
  }

  bool parse_args() {
    int index = 0;
    skip_line_breaks();
    if (peek().kind == Tok::RParen) {
      take();
      return true;
    }
    while (true) {
      skip_line_breaks();
      const Token &value = peek();
      if (!expect(Tok::Value, "an argument '%name: type'"))
        return false;
      if (values_.count(value.text))
        return fail(value, "redefinition of %" + value.text);
      if (!expect(Tok::Colon, "':' and the argument's type"))
        return false;
      Type type;
      if (!parse_type(type))
        return false;
      Loc loc;
      std::string name = name_of(value);
      if (!parse_loc(loc) || !parse_name(name))
        return false;
      NodeId id = type.scalar
                      ? b_->scalar_input(index, type.dtype, name, loc)
                      : b_->input(index, type, name, loc);
      ++index;
      values_[value.text] = id;
      record(id, value, true);
      skip_line_breaks();
      if (peek().kind == Tok::Comma) {
        take();
        continue;
      }
      return expect(Tok::RParen, "',' or ')' after an argument");
    }
  }

  // The dtype a token names (f32, bf16, ...), if it names one.
  static std::optional<DType> dtype_token(const Token &t) {
    if (t.kind == Tok::Ident)
      return dtype_from_name(t.text);
    return std::nullopt;
  }

  bool parse_type(Type &type) {
    const Token &t = peek();
    std::optional<DType> dtype = dtype_token(t);
    if (!dtype)
      return fail(t, "bad type '" + t.text +
                         "': expected a dtype (f32, f16, bf16, f64, i32, i64, "
                         "b8)");
    take();
    type.dtype = *dtype;
    if (peek().kind != Tok::LBracket) {
      if (*dtype != DType::f64 && *dtype != DType::i64 && *dtype != DType::b8)
        return fail(t, "bad type '" + t.text +
                           "': a weak scalar is f64, i64 or b8 (a tensor "
                           "type has dims, e.g. '" +
                           t.text + "[*]')");
      type.scalar = true;
      type.shape = Shape::unranked();
      return true;
    }
    take();
    type.scalar = false;
    type.shape = Shape::ranked_dims({});
    if (peek().kind == Tok::Star) {
      take();
      type.shape = Shape::unranked();
      return expect(Tok::RBracket, "']' after '*'");
    }
    if (peek().kind == Tok::RBracket) {
      take();
      return true;
    }
    while (true) {
      const Token &d = peek();
      std::optional<int64_t> extent;
      if (d.kind == Tok::Number)
        extent = parse_i64(d.text);
      if (extent && *extent >= 0) {
        type.shape.dims.push_back(SymDim::constant(*extent));
      } else if (d.kind == Tok::Ident && d.text.size() > 1 &&
                 d.text[0] == 's' &&
                 llvm::all_of(llvm::StringRef(d.text).drop_front(),
                              llvm::isDigit) &&
                 parse_i64(llvm::StringRef(d.text).drop_front()) &&
                 *parse_i64(llvm::StringRef(d.text).drop_front()) < (1 << 30)) {
        type.shape.dims.push_back(
            SymDim::sym((int)*parse_i64(llvm::StringRef(d.text).drop_front())));
      } else {
        return fail(d, "bad type: dimension '" + d.text +
                           "' is neither an extent (>= 0) nor a symbol s<N>");
      }
      take();
      if (peek().kind == Tok::Comma) {
        take();
        continue;
      }
      return expect(Tok::RBracket, "',' or ']' in the dims");
    }
  }

  // A number token as a constant of `dtype` (or of its literal form).
  bool parse_number(const Token &t, std::optional<DType> dtype, double &value,
                    DType &out_dtype) {
    bool floating = looks_floating(t.text);
    DType dt = dtype ? *dtype : floating ? DType::f64 : DType::i64;
    out_dtype = dt;
    if (dt == DType::f64) {
      std::optional<double> v = parse_f64(t.text);
      if (!v)
        return fail(t, "bad number '" + t.text + "'");
      value = *v;
      return true;
    }
    if (floating) {
      if (!parse_f64(t.text))
        return fail(t, "bad number '" + t.text + "'");
      return fail(t, "bad number '" + t.text + "': not " +
                         (dt == DType::b8 ? "a b8 (0 or 1)" : "an integer"));
    }
    std::optional<int64_t> v = parse_i64(t.text);
    if (!v) {
      if (!parse_f64(t.text))
        return fail(t, "bad number '" + t.text + "'");
      return fail(t, "bad number '" + t.text + "': out of range for i64");
    }
    if (dt == DType::b8 && *v != 0 && *v != 1)
      return fail(t, "bad number '" + t.text + "': a b8 constant is 0 or 1");
    // Constants are stored as double: keep integers exact.
    if (*v > (int64_t(1) << 53) || *v < -(int64_t(1) << 53))
      return fail(t, "bad number '" + t.text +
                         "': integer constants must be within +-2^53");
    value = double(*v);
    return true;
  }

  bool lookup(const Token &t, NodeId &id) {
    auto it = values_.find(t.text);
    if (it != values_.end()) {
      id = it->second;
      return true;
    }
    // Defined further down this graph: say so rather than "undefined".
    for (size_t k = pos_ + 1; k + 1 < toks_.size(); ++k) {
      const Token &u = toks_[k];
      if (u.kind == Tok::Ident && u.text == "graph" &&
          toks_[k - 1].kind == Tok::Newline)
        break;
      if (u.kind == Tok::Value && u.text == t.text &&
          (toks_[k - 1].kind == Tok::Newline ||
           toks_[k - 1].kind == Tok::LBrace) &&
          (toks_[k + 1].kind == Tok::Colon || toks_[k + 1].kind == Tok::Equal))
        return fail(t, "use of %" + t.text + " before its definition");
    }
    return fail(t, "use of undefined value %" + t.text);
  }

  bool parse_node() {
    const Token &def = take();
    if (values_.count(def.text))
      return fail(def, "redefinition of %" + def.text);
    std::optional<Type> declared;
    if (peek().kind == Tok::Colon) {
      take();
      Type t;
      if (!parse_type(t))
        return false;
      declared = t;
    }
    if (!expect(Tok::Equal, "'=' after the value name"))
      return false;
    const Token &mnemonic = peek();
    if (mnemonic.kind != Tok::Ident)
      return fail(mnemonic, "expected an op name");
    std::optional<Op> op = op_from_name(mnemonic.text);
    if (!op)
      return fail(mnemonic, "unknown op '" + mnemonic.text + "'");
    const OpInfo &info = op_info(*op);
    if (info.kind == OpKind::Argument)
      return fail(mnemonic, "'" + mnemonic.text +
                                "' is not an op here: declare arguments in "
                                "the graph header");
    take();

    if (*op == Op::Constant) {
      if (declared && !declared->scalar)
        return fail(def, "bad type '" + to_string(*declared) +
                             "': a constant is a weak scalar (f64, i64 or b8)");
      const Token &num = peek();
      if (!is_number_token(num))
        return fail(num, "expected a number after 'const'");
      take();
      // `const 2 : f64` types the constant like `%c: f64 = const 2`.
      if (peek().kind == Tok::Colon) {
        take();
        const Token &at = peek();
        Type t;
        if (!parse_type(t))
          return false;
        if (!t.scalar)
          return fail(at,
                      "bad type '" + to_string(t) +
                          "': a constant is a weak scalar (f64, i64 or b8)");
        if (declared && !(*declared == t))
          return fail(at, "the constant's type " + to_string(t) +
                              " contradicts its declared type " +
                              to_string(*declared));
        declared = t;
      }
      double v;
      DType dt;
      if (!parse_number(
              num, declared ? std::optional(declared->dtype) : std::nullopt, v,
              dt))
        return false;
      if (peek().kind == Tok::LBrace)
        return fail(peek(), "'const' takes no attributes");
      Loc loc;
      std::string name = name_of(def);
      if (!parse_loc(loc) || !parse_name(name))
        return false;
      NodeId id = b_->constant(v, dt, loc);
      b_->graph().nodes[id].name = name;
      values_[def.text] = id;
      record(id, def, true);
      return true;
    }

    // Operands: values now, literals once the location is known.
    struct Pending {
      NodeId id = -1;
      const Token *literal = nullptr;
    };
    llvm::SmallVector<Pending, 3> operands;
    bool more = peek().kind != Tok::Newline && peek().kind != Tok::RBrace &&
                peek().kind != Tok::LBrace && !at_ident("loc") &&
                !at_ident("name") && peek().kind != Tok::Eof;
    while (more) {
      const Token &t = peek();
      Pending p;
      if (t.kind == Tok::Value) {
        if (!lookup(t, p.id))
          return false;
      } else if (is_number_token(t)) {
        p.literal = &t;
      } else {
        return fail(t, "expected an operand (a %value or a number)");
      }
      take();
      operands.push_back(p);
      more = peek().kind == Tok::Comma;
      if (more)
        take();
    }
    if (!takes_operands(*op, operands.size()))
      return fail(mnemonic, "'" + mnemonic.text + "' takes " +
                                arity_text(*op) + " operand" +
                                (info.arity == 1 ? "" : "s") + ", got " +
                                std::to_string(operands.size()));
    llvm::SmallVector<int64_t, 2> dims;
    bool keepdim = false;
    DType cast_to = Node().cast_to;
    if (*op == Op::Cast) {
      if (!parse_cast_attribute(mnemonic.text, cast_to))
        return false;
    } else if (peek().kind == Tok::LBrace) {
      if (!has_dims_attribute(*op))
        return fail(peek(), "'" + mnemonic.text + "' takes no attributes");
      if (!parse_attributes(mnemonic.text, dims, keepdim))
        return false;
    } else if (has_dims_attribute(*op)) {
      return fail(peek(), "expected '{dims=[...]}' after the operands of '" +
                              mnemonic.text + "'");
    }
    Loc loc;
    std::string name = name_of(def);
    if (!parse_loc(loc) || !parse_name(name))
      return false;

    llvm::SmallVector<NodeId, 3> ids;
    for (Pending &p : operands) {
      if (p.literal) {
        double v;
        DType dt;
        if (!parse_number(*p.literal, std::nullopt, v, dt))
          return false;
        p.id = b_->constant(v, dt, loc);
        record(p.id, *p.literal, true);
      }
      ids.push_back(p.id);
    }
    NodeId id = b_->op(*op, ids, loc, name);
    b_->graph().nodes[id].dims = std::move(dims);
    b_->graph().nodes[id].keepdim = keepdim;
    b_->graph().nodes[id].cast_to = cast_to;
    if (declared)
      b_->graph().nodes[id].type = *declared;
    values_[def.text] = id;
    record(id, def, declared.has_value());
    return true;
  }

  // `{dtype=bf16}` after the operand of `to`: required.
  bool parse_cast_attribute(const std::string &op, DType &to) {
    if (peek().kind != Tok::LBrace)
      return fail(peek(), "expected '{dtype=...}' after the operand of '" + op +
                              "'");
    take();
    const Token &key = peek();
    if (key.kind != Tok::Ident || key.text != "dtype")
      return fail(key, "expected the attribute 'dtype' of '" + op + "'");
    take();
    if (!expect(Tok::Equal, "'=' after 'dtype'"))
      return false;
    const Token &t = peek();
    std::optional<DType> dtype = dtype_token(t);
    if (!dtype)
      return fail(t, "bad dtype '" + t.text +
                         "': expected f32, f16, bf16, f64, i32, i64 or b8");
    take();
    to = *dtype;
    return expect(Tok::RBrace, "'}' after the dtype");
  }

  // `{dims=[0, -1], keepdim=true}`: dims is required, keepdim defaults to
  // false, in either order.
  bool parse_attributes(const std::string &op,
                        llvm::SmallVectorImpl<int64_t> &dims, bool &keepdim) {
    const Token &open = take();
    bool seen_dims = false, seen_keepdim = false;
    while (peek().kind != Tok::RBrace) {
      const Token &key = peek();
      if (key.kind != Tok::Ident)
        return fail(key, "expected an attribute name (dims or keepdim)");
      bool is_dims = key.text == "dims";
      if (!is_dims && key.text != "keepdim")
        return fail(key, "unknown attribute '" + key.text +
                             "' (expected dims or keepdim)");
      bool &seen = is_dims ? seen_dims : seen_keepdim;
      if (seen)
        return fail(key, "duplicate attribute '" + key.text + "'");
      seen = true;
      take();
      if (peek().kind != Tok::Equal)
        return fail(peek(), "expected '=' after '" + key.text + "'");
      take();
      if (is_dims ? !parse_dims(dims) : !parse_bool(keepdim))
        return false;
      if (peek().kind != Tok::Comma)
        break;
      take();
      if (peek().kind == Tok::RBrace)
        return fail(peek(), "expected an attribute name (dims or keepdim)");
    }
    if (peek().kind != Tok::RBrace)
      return fail(peek(), "expected ',' or '}' after an attribute");
    take();
    if (!seen_dims)
      return fail(open, "missing attribute 'dims' of '" + op +
                            "' ({dims=[...]}, [] for all dims)");
    return true;
  }

  bool parse_dims(llvm::SmallVectorImpl<int64_t> &dims) {
    if (peek().kind != Tok::LBracket)
      return fail(peek(), "expected '[' to begin the dims list");
    take();
    if (peek().kind == Tok::RBracket) {
      take();
      return true;
    }
    while (true) {
      const Token &d = peek();
      std::optional<int64_t> v;
      if (d.kind == Tok::Number)
        v = parse_i64(d.text);
      if (!v)
        return fail(d, d.kind == Tok::Number || d.kind == Tok::Ident
                           ? "bad dim '" + d.text + "': expected an integer"
                           : std::string("expected a dim (an integer)"));
      dims.push_back(*v);
      take();
      if (peek().kind == Tok::Comma) {
        take();
        continue;
      }
      if (peek().kind != Tok::RBracket)
        return fail(peek(), "expected ',' or ']' in the dims list");
      take();
      return true;
    }
  }

  bool parse_bool(bool &value) {
    const Token &t = peek();
    if (t.kind != Tok::Ident || (t.text != "true" && t.text != "false"))
      return fail(t, "expected 'true' or 'false' for keepdim");
    value = t.text == "true";
    take();
    return true;
  }

  bool parse_loc(Loc &loc) {
    if (!at_ident("loc"))
      return true;
    take();
    if (!expect(Tok::LParen, "'(' after 'loc'"))
      return false;
    const Token &file = peek();
    if (!expect(Tok::String, "a quoted file name in loc(\"file\":line:col)"))
      return false;
    unsigned nums[2];
    for (unsigned &n : nums) {
      if (!expect(Tok::Colon, "':' in loc(\"file\":line:col)"))
        return false;
      const Token &t = peek();
      std::optional<int64_t> v;
      if (t.kind == Tok::Number)
        v = parse_i64(t.text);
      if (!v || *v < 0 || *v > UINT32_MAX)
        return fail(t, "bad location: expected a line or column number");
      n = (unsigned)*v;
      take();
    }
    if (nums[0] == 0)
      return fail(file, "bad location: line numbers start at 1");
    loc.file = file.text;
    loc.line = nums[0];
    loc.col = nums[1];
    return expect(Tok::RParen, "')' to close loc(...)");
  }

  // `name("...")`: the user's name for a value, where `%name` cannot say
  // it (see kiln/passes/text.h).
  bool parse_name(std::string &name) {
    if (!at_ident("name"))
      return true;
    take();
    if (!expect(Tok::LParen, "'(' after 'name'"))
      return false;
    const Token &value = peek();
    if (!expect(Tok::String, "a quoted name in name(\"...\")"))
      return false;
    name = value.text;
    return expect(Tok::RParen, "')' to close name(...)");
  }

  bool parse_return() {
    if (peek().kind == Tok::Newline || peek().kind == Tok::RBrace)
      return true;
    while (true) {
      const Token &t = peek();
      if (t.kind != Tok::Value)
        return fail(t, "expected a %value to return");
      NodeId id;
      if (!lookup(t, id))
        return false;
      take();
      b_->output(id);
      if (peek().kind != Tok::Comma)
        return true;
      take();
    }
  }
};

} // namespace

std::string format_diagnostic(llvm::StringRef filename, llvm::StringRef text,
                              unsigned line, unsigned col,
                              llvm::StringRef message) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << filename << ":" << line << ":" << col << ": error: " << message << "\n";
  llvm::StringRef rest = text;
  for (unsigned l = 1; l < line && !rest.empty(); ++l)
    rest = rest.split('\n').second;
  if (line == 0 || (rest.empty() && line > 1))
    return out;
  llvm::StringRef source = rest.split('\n').first.rtrim("\r");
  os << source << "\n";
  for (unsigned c = 1; c < col && c - 1 < source.size(); ++c)
    os << (source[c - 1] == '\t' ? '\t' : ' ');
  os << "^\n";
  return out;
}

llvm::Expected<std::vector<ParsedGraph>> parse_kir(llvm::StringRef text,
                                                   llvm::StringRef filename) {
  return Parser(text, filename).run();
}

} // namespace kiln::ir
