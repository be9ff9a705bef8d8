// The lowered program's expressions and statements: builders, walks, and
// the C-family expression printer every text printer shares.
#include <kiln/passes/lowered.h>

#include <llvm/Support/raw_ostream.h>

namespace kiln::low {

namespace {

Expr make(ExprNode::Kind k, std::string text, std::vector<Expr> args) {
  return Expr(std::make_shared<const ExprNode>(
      ExprNode{k, std::move(text), std::move(args)}));
}

// C precedence, lower binds tighter.
int binary_prec(const std::string &op) {
  if (op == "*" || op == "/" || op == "%")
    return 3;
  if (op == "+" || op == "-")
    return 4;
  if (op == "<<" || op == ">>")
    return 5;
  if (op == "<" || op == "<=" || op == ">" || op == ">=")
    return 6;
  if (op == "==" || op == "!=")
    return 7;
  if (op == "&")
    return 8;
  if (op == "^")
    return 9;
  if (op == "|")
    return 10;
  if (op == "&&")
    return 11;
  if (op == "||")
    return 12;
  return 14; // assignments
}

int prec(const Expr &e) {
  switch (e->kind) {
  case ExprNode::Var:
  case ExprNode::Lit:
  case ExprNode::Braces:
    return 0;
  case ExprNode::Call:
  case ExprNode::Index:
  case ExprNode::Member:
  case ExprNode::Cast:
    return 1;
  case ExprNode::Unary:
    return 2;
  case ExprNode::Binary:
    return binary_prec(e->text);
  case ExprNode::Select:
    return 13;
  }
  return 14;
}

void print_expr(llvm::raw_ostream &os, const Expr &e, int allowed);

// The precedence a child of binary `parent` may have unparenthesised:
// `allowed`, less where C's rules surprise a reader (a shift or another
// operator inside a bitwise one, || inside &&), as -Wparentheses asks.
int clearer(const Expr &parent, const Expr &child, int allowed) {
  if (child->kind != ExprNode::Binary || child->text == parent->text)
    return allowed;
  const std::string &op = parent->text;
  if (op == "&" || op == "^" || op == "|" || op == "<<" || op == ">>")
    return 2;
  if (op == "&&" && child->text == "||")
    return 2;
  return allowed;
}

void print_list(llvm::raw_ostream &os, const std::vector<Expr> &args,
                size_t from = 0) {
  for (size_t i = from; i < args.size(); ++i) {
    if (i > from)
      os << ", ";
    print_expr(os, args[i], 13);
  }
}

void print_expr(llvm::raw_ostream &os, const Expr &e, int allowed) {
  const int p = prec(e);
  const bool paren = p > allowed;
  if (paren)
    os << "(";
  switch (e->kind) {
  case ExprNode::Var:
  case ExprNode::Lit:
    os << e->text;
    break;
  case ExprNode::Unary:
    os << e->text;
    print_expr(os, e->args[0], 2);
    break;
  case ExprNode::Binary: {
    const bool right_assoc = p == 14;
    print_expr(os, e->args[0], clearer(e, e->args[0], right_assoc ? p - 1 : p));
    os << " " << e->text << " ";
    print_expr(os, e->args[1], clearer(e, e->args[1], right_assoc ? p : p - 1));
    break;
  }
  case ExprNode::Call:
    if (!e->text.empty() && e->text[0] == '.') {
      print_expr(os, e->args[0], 1);
      os << e->text << "(";
      print_list(os, e->args, 1);
    } else {
      os << e->text << "(";
      print_list(os, e->args);
    }
    os << ")";
    break;
  case ExprNode::Index:
    print_expr(os, e->args[0], 1);
    os << "[";
    print_expr(os, e->args[1], 14);
    os << "]";
    break;
  case ExprNode::Member:
    print_expr(os, e->args[0], 1);
    os << e->text;
    break;
  case ExprNode::Cast:
    os << e->text << "(";
    print_expr(os, e->args[0], 13);
    os << ")";
    break;
  case ExprNode::Select:
    print_expr(os, e->args[0], 12);
    os << " ? ";
    print_expr(os, e->args[1], 13);
    os << " : ";
    print_expr(os, e->args[2], 13);
    break;
  case ExprNode::Braces:
    os << e->text << "{";
    print_list(os, e->args);
    os << "}";
    break;
  }
  if (paren)
    os << ")";
}

} // namespace

// ---- expressions ----

Expr var(std::string name) { return make(ExprNode::Var, std::move(name), {}); }
Expr lit(std::string text) { return make(ExprNode::Lit, std::move(text), {}); }
Expr lit(int64_t v) { return lit(std::to_string(v)); }
Expr str_lit(const std::string &s) {
  std::string t = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      t += '\\';
    if (c == '\n') {
      t += "\\n";
      continue;
    }
    t += c;
  }
  return lit(t + "\"");
}
Expr call(std::string callee, std::vector<Expr> args) {
  return make(ExprNode::Call, std::move(callee), std::move(args));
}
Expr cast(std::string type, Expr e) {
  return make(ExprNode::Cast, std::move(type), {std::move(e)});
}
Expr select(Expr c, Expr a, Expr b) {
  return make(ExprNode::Select, "", {std::move(c), std::move(a), std::move(b)});
}
Expr braces(std::vector<Expr> elems) {
  return make(ExprNode::Braces, "", std::move(elems));
}
Expr addr(Expr e) { return make(ExprNode::Unary, "&", {std::move(e)}); }
Expr deref(Expr e) { return make(ExprNode::Unary, "*", {std::move(e)}); }
Expr pre_inc(Expr e) { return make(ExprNode::Unary, "++", {std::move(e)}); }
Expr unary(const char *op, Expr e) {
  return make(ExprNode::Unary, op, {std::move(e)});
}
Expr typed_braces(std::string type, std::vector<Expr> elems) {
  return make(ExprNode::Braces, std::move(type), std::move(elems));
}
Expr method(Expr obj, std::string name, std::vector<Expr> args) {
  args.insert(args.begin(), std::move(obj));
  return make(ExprNode::Call, "." + name, std::move(args));
}
Expr binary(const char *op, Expr a, Expr b) {
  return make(ExprNode::Binary, op, {std::move(a), std::move(b)});
}

Expr Expr::operator[](const Expr &i) const {
  return make(ExprNode::Index, "", {*this, i});
}
Expr Expr::operator[](int64_t i) const { return (*this)[lit(i)]; }
Expr Expr::field(const std::string &name) const {
  return make(ExprNode::Member, "." + name, {*this});
}
Expr Expr::arrow(const std::string &name) const {
  return make(ExprNode::Member, "->" + name, {*this});
}
Expr lnot(Expr e) { return make(ExprNode::Unary, "!", {std::move(e)}); }

#define KILN_BINARY(OP)                                                        \
  Expr operator OP(Expr a, Expr b) {                                           \
    return binary(#OP, std::move(a), std::move(b));                           \
  }
KILN_BINARY(+)
KILN_BINARY(-)
KILN_BINARY(*)
KILN_BINARY(/)
KILN_BINARY(%)
KILN_BINARY(<)
KILN_BINARY(<=)
KILN_BINARY(>)
KILN_BINARY(>=)
KILN_BINARY(==)
KILN_BINARY(!=)
KILN_BINARY(&&)
KILN_BINARY(||)
#undef KILN_BINARY

bool same(const Expr &a, const Expr &b) {
  if (!a || !b)
    return !a && !b;
  if (a->kind != b->kind || a->text != b->text ||
      a->args.size() != b->args.size())
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!same(a->args[i], b->args[i]))
      return false;
  return true;
}

std::string print(const Expr &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  print_expr(os, e, 14);
  return s;
}

Expr kernel_ref(const std::string &function) { return var(function + "_ref"); }

// ---- statements ----

static Stmt of(Stmt::Kind k) {
  Stmt s;
  s.kind = k;
  return s;
}

Stmt comment(std::string text) {
  Stmt s = of(Stmt::Comment);
  s.text = std::move(text);
  return s;
}
Stmt decl(std::string qual, std::string type, std::string name, Expr init,
          std::string trailing_comment) {
  Stmt s = of(Stmt::Decl);
  s.qual = std::move(qual);
  s.type = std::move(type);
  s.name = std::move(name);
  s.value = std::move(init);
  s.text = std::move(trailing_comment);
  return s;
}
Stmt decl_array(std::string type, std::string name, std::string extent,
                std::string trailing_comment) {
  Stmt s = decl("", std::move(type), std::move(name), {},
                std::move(trailing_comment));
  s.array = "[" + extent + "]";
  return s;
}
Stmt assign(Expr lhs, Expr rhs, std::string op) {
  Stmt s = of(Stmt::Assign);
  s.lhs = std::move(lhs);
  s.value = std::move(rhs);
  s.text = std::move(op);
  return s;
}
Stmt eval(Expr e) {
  Stmt s = of(Stmt::Eval);
  s.value = std::move(e);
  return s;
}
Stmt block(Stmts body) {
  Stmt s = of(Stmt::Block);
  s.body = std::move(body);
  return s;
}
Stmt for_loop(Stmt init, Expr cond, Expr step, Stmts body, LoopHint hint) {
  Stmt s = of(Stmt::For);
  s.init.push_back(std::move(init));
  s.cond = std::move(cond);
  s.step = std::move(step);
  s.body = std::move(body);
  s.hint = hint;
  return s;
}
Stmt for_loop(Expr cond, Expr step, Stmts body) {
  Stmt s = of(Stmt::For);
  s.cond = std::move(cond);
  s.step = std::move(step);
  s.body = std::move(body);
  return s;
}
Stmt if_then(Expr cond, Stmts body, Stmts orelse) {
  Stmt s = of(Stmt::If);
  s.cond = std::move(cond);
  s.body = std::move(body);
  s.orelse = std::move(orelse);
  return s;
}
Stmt ret(Expr value) {
  Stmt s = of(Stmt::Return);
  s.value = std::move(value);
  return s;
}
Stmt brk() { return of(Stmt::Break); }
Stmt switch_on(Expr subject,
               std::vector<std::pair<std::vector<Expr>, Stmts>> cases) {
  Stmt s = of(Stmt::Switch);
  s.cond = std::move(subject);
  s.cases = std::move(cases);
  return s;
}
Stmt guard_check(Expr fail, Guard g) {
  Stmt s = of(Stmt::GuardCheck);
  s.cond = std::move(fail);
  s.guard = std::move(g);
  return s;
}
Stmt load(std::string type, std::string name, Expr from, std::string text) {
  Stmt s = of(Stmt::Load);
  s.type = std::move(type);
  s.name = std::move(name);
  s.value = std::move(from);
  s.text = std::move(text);
  return s;
}
Stmt store(Expr to, std::string storage, Expr value) {
  Stmt s = of(Stmt::Store);
  s.lhs = std::move(to);
  s.type = std::move(storage);
  s.value = std::move(value);
  return s;
}
Stmt compute(std::string type, std::string name, std::string op,
             std::vector<Expr> args, ir::NodeId node, std::string text) {
  Stmt s = of(Stmt::Compute);
  s.type = std::move(type);
  s.name = std::move(name);
  s.op = std::move(op);
  s.args = std::move(args);
  s.node = node;
  s.text = std::move(text);
  return s;
}
Stmt accumulate(std::string op, Expr lhs, Expr earlier, Expr value,
                std::string text) {
  Stmt s = of(Stmt::Accumulate);
  s.op = std::move(op);
  s.lhs = std::move(lhs);
  s.args = {std::move(earlier), std::move(value)};
  s.text = std::move(text);
  return s;
}
Stmt row_reduce(std::string op, std::string acc_type, Expr acc, Expr threads,
                Expr smem, Expr columns) {
  Stmt s = of(Stmt::RowReduce);
  s.op = std::move(op);
  s.type = std::move(acc_type);
  s.lhs = std::move(acc);
  s.args = {std::move(threads), std::move(smem)};
  if (columns)
    s.args.push_back(std::move(columns));
  return s;
}
Stmt launch(LaunchInfo l) {
  Stmt s = of(Stmt::Launch);
  s.launch = std::move(l);
  return s;
}

// ---- walking ----

void walk(const Stmts &body, const std::function<void(const Stmt &)> &f) {
  for (const Stmt &s : body) {
    f(s);
    walk(s.init, f);
    walk(s.body, f);
    walk(s.orelse, f);
    for (const auto &c : s.cases)
      walk(c.second, f);
  }
}

std::vector<Guard> guards_of(const Stmts &body) {
  std::vector<Guard> gs;
  walk(body, [&](const Stmt &s) {
    if (s.kind == Stmt::GuardCheck)
      gs.push_back(s.guard);
  });
  return gs;
}

std::vector<Function::Global> Function::globals() const {
  std::vector<Global> gs;
  const std::string &base = global_name.empty() ? name : global_name;
  for (const Instance &in : instances) {
    std::string v = std::to_string(in.value);
    std::string name = base + v, tail;
    if (!tparam2.empty()) {
      if (in.value2)
        name += "t" + std::to_string(in.value2);
      tail = ", " + std::to_string(in.value2);
    }
    if (tflag.empty()) {
      gs.push_back({name, v + tail, in.bounds});
      continue;
    }
    if (in.plain)
      gs.push_back({name, v + ", false" + tail, in.bounds});
    if (in.full)
      gs.push_back({name + "full", v + ", true" + tail, in.bounds});
  }
  return gs;
}

std::vector<std::string> Kernel::entry_points() const {
  std::vector<std::string> names;
  if (target != Target::Cuda)
    return names;
  for (const Function &f : functions) {
    if (f.tparam.empty()) {
      names.push_back(f.name);
      continue;
    }
    for (const Function::Global &g : f.globals())
      names.push_back(g.name);
  }
  return names;
}

} // namespace kiln::low
