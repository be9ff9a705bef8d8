// simplify: algebraic identities, as data: dropping an op's identity
// element (kiln/ops.def's identity column), then a table of KIR patterns
// and their replacements.
//
// A rewrite is kept only when its result has exactly the node's type
// (dtype, shape, scalar-ness): `x * 1.0` on an integer tensor is an f32
// tensor, not x. The safe rules hold for every IEEE value, NaN, inf and
// signed zero included; what does not (x + 0 is +0 for x = -0, x * 0 and
// x - x are NaN for inf) is only done under unsafe_math.
#include <kiln/passes/passes.h>

#include "Rewrite.h"
#include "RewriteUtil.h"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// A condition on what the pattern's %a stands for, beyond the pattern.
enum class Guard { None, FloatingA, IntegerA };

struct PatternRule {
  const char *name;
  bool unsafe;
  const char *pattern;     // statements computing %r from %a, %b, ...
  const char *replacement; // statements computing %r, or an argument ("%a")
  Guard guard = Guard::None;
};

// In order: the first rule whose result has the node's type wins. Before
// these, "x op e -> x" for every op with an identity element (op(x, e) is
// x bit for bit, and e op x too when the op is commutative; a COMMUTATIVE
// op's pattern matches its operands in either order).
const PatternRule kPatternRules[] = {
    // x+0 -> x is exact for integers (there is no -0 to lose).
    {"x+0 -> x (integer x)", false, "%r = add %a, 0", "%a", Guard::IntegerA},
    {"neg(neg x) -> x", false, "%n = neg %a; %r = neg %n", "%a"},
    {"pow(x, 2) -> x*x", false, "%r = pow %a, 2", "%r = mul %a, %a"},
    {"pow(x, 3) -> x*x*x", false, "%r = pow %a, 3",
     "%s = mul %a, %a; %r = mul %s, %a"},
    {"pow(x, -1) -> reciprocal(x)", false, "%r = pow %a, -1",
     "%r = reciprocal %a"},
    // --- unsafe_math ---
    {"x+0 -> x", true, "%r = add %a, 0", "%a"}, // -0 + 0 is +0
    // x-x -> x*0: still NaN for NaN and inf, but -0 for negative x.
    {"x-x -> x*0", true, "%r = sub %a, %a", "%r = mul %a, 0.0",
     Guard::FloatingA},
    {"x-x -> x*0 (integer x)", true, "%r = sub %a, %a", "%r = mul %a, 0",
     Guard::IntegerA},
    // They differ at -0 (+0 vs -0) and -inf (inf vs NaN).
    {"pow(x, 0.5) -> sqrt(x)", true, "%r = pow %a, 0.5", "%r = sqrt %a"},
    // 1 where x is finite, NaN where it is not (as the original), but
    // rounding differs. A square is y*y or pow(y, 2).
    {"sin(x)^2 + cos(x)^2 -> x*0 + 1", true,
     "%sin = sin %a; %sin2 = mul %sin, %sin; %cos = cos %a; "
     "%cos2 = mul %cos, %cos; %r = add %sin2, %cos2",
     "%z = mul %a, 0.0; %r = add %z, 1.0"},
    {"sin(x)^2 + cos(x)^2 -> x*0 + 1", true,
     "%sin = sin %a; %sin2 = pow %sin, 2; %cos = cos %a; "
     "%cos2 = mul %cos, %cos; %r = add %sin2, %cos2",
     "%z = mul %a, 0.0; %r = add %z, 1.0"},
    {"sin(x)^2 + cos(x)^2 -> x*0 + 1", true,
     "%sin = sin %a; %sin2 = mul %sin, %sin; %cos = cos %a; "
     "%cos2 = pow %cos, 2; %r = add %sin2, %cos2",
     "%z = mul %a, 0.0; %r = add %z, 1.0"},
    {"sin(x)^2 + cos(x)^2 -> x*0 + 1", true,
     "%sin = sin %a; %sin2 = pow %sin, 2; %cos = cos %a; "
     "%cos2 = pow %cos, 2; %r = add %sin2, %cos2",
     "%z = mul %a, 0.0; %r = add %z, 1.0"},
};

constexpr int kRuleArgs = 4; // a rule may use %a .. %d

struct ParsedRule {
  const PatternRule *rule;
  Graph pattern, replacement;
};
struct Rules {
  std::vector<ParsedRule> parsed;
  std::string error; // the rules are ours: one that does not parse is a bug
};

// The table, parsed once.
const Rules &rules() {
  static const Rules table = [] {
    Rules out;
    for (const PatternRule &r : kPatternRules) {
      llvm::StringRef repl = r.replacement;
      auto pattern = parse_snippet(r.name, kRuleArgs, r.pattern);
      auto replacement = repl.contains('=')
                             ? parse_snippet(r.name, kRuleArgs, repl)
                             : parse_snippet(r.name, kRuleArgs, "", repl);
      bool ok = true;
      for (llvm::Expected<Graph> *e : {&pattern, &replacement})
        if (!*e) {
          out.error += llvm::toString(e->takeError());
          ok = false;
        }
      if (ok)
        out.parsed.push_back({&r, std::move(*pattern), std::move(*replacement)});
    }
    return out;
  }();
  return table;
}

// Operand `i` of `s` is the constant e, bit for bit (-0.0 is not +0.0).
bool is_exactly(const Rewriter &rw, const Site &s, int i, double e) {
  const Node &n = rw.node(s.x[i]);
  return n.op == Op::Constant && double_bits(n.constant) == double_bits(e);
}

// x op e -> x, and e op x -> x when op is commutative.
std::optional<NodeId> drop_identity(const Rewriter &rw, const Site &s) {
  std::optional<double> e = identity_element(s.node.op);
  if (!e || s.x.size() != 2)
    return std::nullopt;
  if (is_exactly(rw, s, 1, *e))
    return s.x[0];
  if (is_commutative(s.node.op) && is_exactly(rw, s, 0, *e))
    return s.x[1];
  return std::nullopt;
}

bool guard_holds(const Rewriter &rw, Guard guard,
                 llvm::ArrayRef<NodeId> args) {
  if (guard == Guard::None)
    return true;
  bool floating = is_floating(rw.node(args[0]).type.dtype);
  return guard == Guard::FloatingA ? floating : !floating;
}

} // namespace

llvm::Expected<Graph> simplify(const Graph &g, const PassOptions &opts) {
  if (!rules().error.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "simplify: a rule does not parse:\n" +
                                       rules().error);
  // A rule's result is kept when it has the node's type and, for a
  // returned value, is not an argument: `return x * 1.0` must not become
  // `return x`, which would alias the caller's argument.
  auto accept = [](Rewriter &rw, const Site &s, NodeId r) {
    bool aliases_argument = s.is_output && rw.node(r).op == Op::Input;
    if (rw.node(r).type == s.node.type && !aliases_argument)
      return true;
    rw.roll_back(); // rejected: drop what it built
    return false;
  };
  auto rewrite = [&](Rewriter &rw, const Site &s) -> RewriteResult {
    if (std::optional<NodeId> r = drop_identity(rw, s); r && accept(rw, s, *r))
      return r;
    llvm::SmallVector<NodeId, kRuleArgs> args;
    for (const ParsedRule &pr : rules().parsed) {
      if ((pr.rule->unsafe && !opts.unsafe_math) ||
          !match(pr.pattern, rw.g(), s.node, s.x, args) ||
          !guard_holds(rw, pr.rule->guard, args))
        continue;
      llvm::Expected<NodeId> r = rw.instantiate(pr.replacement, args);
      if (!r) { // the result cannot have the right type
        llvm::consumeError(r.takeError());
        rw.roll_back();
        continue;
      }
      if (accept(rw, s, *r))
        return *r;
    }
    return std::nullopt;
  };
  return rewrite_graph(g, rewrite);
}

} // namespace kiln::passes
