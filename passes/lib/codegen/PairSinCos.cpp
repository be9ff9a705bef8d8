// pair_sincos: sin(a) and cos(a) of the same value, computed in one block,
// become one kiln::scalar::sincos call at the first of the two (one argument
// reduction on the GPU; both need only a). A pass over the lowered program,
// so every kernel flavour gets it: pointwise loops, and the passes of the
// reduction kernels (`sum(sin(x) * cos(x))`).
#include <kiln/passes/lowered.h>

namespace kiln::low {

namespace {

void pair_in(Stmts &body) {
  for (Stmt &s : body) {
    pair_in(s.body);
    pair_in(s.orelse);
    for (auto &c : s.cases)
      pair_in(c.second);
  }
  for (size_t i = 0; i < body.size(); ++i) {
    Stmt &first = body[i];
    if (first.kind != Stmt::Compute || (first.op != "sin" && first.op != "cos"))
      continue;
    const std::string partner = first.op == "sin" ? "cos" : "sin";
    for (size_t j = i + 1; j < body.size(); ++j) {
      Stmt &second = body[j];
      if (second.kind != Stmt::Compute || second.op != partner ||
          second.type != first.type || !same(second.args[0], first.args[0]))
        continue;
      const Stmt &s = first.op == "sin" ? first : second;
      const Stmt &c = first.op == "sin" ? second : first;
      Stmt pair;
      pair.kind = Stmt::SinCos;
      pair.type = s.type;
      pair.names = {s.name, c.name};
      pair.args = {s.args[0]};
      pair.text = s.text + "; " + c.text;
      body[i] = std::move(pair);
      body.erase(body.begin() + j);
      break;
    }
  }
}

} // namespace

void pair_sincos(Program &p) {
  for (Variant &v : p.variants)
    for (Kernel &k : v.kernels)
      for (Function &f : k.functions)
        pair_in(f.body);
}

} // namespace kiln::low
