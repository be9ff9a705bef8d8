// The lowered program as text: `kiln-opt --emit=lowered`, the debug dump's
// lowered.txt, and what the codegen lit tests FileCheck. Statements read as
// the code they become, without C++'s punctuation; the kernel statements
// say what they do (`acc4 = combine sum(acc4, v3)`), the host's guards what
// they check and what a failure logs.
#include <kiln/passes/lowered.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::low {

namespace {

struct TextPrinter {
  llvm::raw_ostream &os;

  static std::string decl_text(const Stmt &s) {
    std::string t = s.qual.empty() ? "" : s.qual + " ";
    t += s.type;
    if (!s.type.empty() && s.type.back() != '*' && s.type.back() != '&')
      t += " ";
    t += s.name + s.array;
    if (s.value)
      t += " = " + print(s.value);
    return t;
  }
  static std::string inline_text(const Stmt &s) {
    switch (s.kind) {
    case Stmt::Decl:
      return decl_text(s);
    case Stmt::Assign:
      return print(s.lhs) + " " + s.text + " " + print(s.value);
    case Stmt::Eval:
      return print(s.value);
    default:
      return "?";
    }
  }
  static std::string comment(const std::string &text) {
    return text.empty() ? "" : "   # " + text;
  }

  void stmts(const Stmts &body, const std::string &ind) {
    for (const Stmt &s : body)
      stmt(s, ind);
  }

  void stmt(const Stmt &s, const std::string &ind) {
    const std::string in2 = ind + "  ";
    switch (s.kind) {
    case Stmt::Comment:
      os << ind << "# " << s.text << "\n";
      return;
    case Stmt::Decl:
      os << ind << decl_text(s) << comment(s.text) << "\n";
      return;
    case Stmt::Assign:
    case Stmt::Eval:
      os << ind << inline_text(s) << "\n";
      return;
    case Stmt::Block:
      os << ind << "block:\n";
      stmts(s.body, in2);
      return;
    case Stmt::For:
      os << ind << "for " << (s.init.empty() ? "" : inline_text(s.init[0]))
         << "; " << print(s.cond) << "; " << print(s.step)
         << (s.hint == LoopHint::Unroll ? " unrolled"
             : s.hint == LoopHint::Simd ? " simd"
                                        : "")
         << ":\n";
      stmts(s.body, in2);
      return;
    case Stmt::If:
      os << ind << "if "
         << (s.init.empty() ? "" : inline_text(s.init[0]) + "; ")
         << print(s.cond) << ":\n";
      stmts(s.body, in2);
      if (!s.orelse.empty()) {
        os << ind << "else:\n";
        stmts(s.orelse, in2);
      }
      return;
    case Stmt::Switch:
      os << ind << "switch " << print(s.cond) << ":\n";
      for (const auto &[labels, body] : s.cases) {
        os << ind << (labels.size() == 1 && !labels[0] ? "" : "case ");
        for (auto [i, l] : llvm::enumerate(labels))
          os << (i ? ", " : "") << (l ? print(l) : std::string("default"));
        os << ":\n";
        stmts(body, in2);
      }
      return;
    case Stmt::Return:
      os << ind << "return" << (s.value ? " " + print(s.value) : "") << "\n";
      return;
    case Stmt::Break:
      os << ind << "break\n";
      return;
    case Stmt::Load:
      os << ind << s.name << ": " << s.type << " = load " << print(s.value)
         << comment(s.text) << "\n";
      return;
    case Stmt::Store:
      os << ind << "store " << print(s.lhs) << " = " << print(s.value)
         << " as " << s.type << "\n";
      return;
    case Stmt::Compute: {
      os << ind << s.name << ": " << s.type << " = " << s.op << "(";
      for (auto [i, a] : llvm::enumerate(s.args))
        os << (i ? ", " : "") << print(a);
      os << ")" << comment(s.text) << "\n";
      return;
    }
    case Stmt::SinCos:
      os << ind << s.names[0] << ", " << s.names[1] << ": " << s.type
         << " = sincos(" << print(s.args[0]) << ")" << comment(s.text) << "\n";
      return;
    case Stmt::Accumulate:
      os << ind << print(s.lhs) << " = combine " << s.op << "("
         << print(s.args[0]) << ", " << print(s.args[1]) << ")"
         << comment(s.text) << "\n";
      return;
    case Stmt::RowReduce:
      os << ind << print(s.lhs) << " = row_reduce " << s.op << "("
         << print(s.lhs) << ") over " << print(s.args[0]) << " threads"
         << (s.args.size() > 2 ? " of each of " + print(s.args[2]) + " columns"
                               : std::string())
         << "\n";
      return;
    case Stmt::GuardCheck:
      os << ind << "guard " << s.guard.check << "\n"
         << in2 << "fails " << (s.cond ? "when " + print(s.cond) : "always")
         << ", logs "
         << (s.message_expr ? print(s.message_expr)
                            : print(str_lit(s.guard.message)))
         << (s.on_failure ? ", then " + print(s.on_failure) : std::string())
         << "\n";
      return;
    case Stmt::Launch:
      os << ind << "launch " << print(s.launch.kernel) << " on "
         << print(s.launch.device) << " grid " << print(s.launch.grid)
         << " block " << print(s.launch.block) << " args "
         << print(s.launch.args) << "\n";
      return;
    }
  }

  void function(const Function &f, const Kernel &k) {
    os << "  function " << f.name << " (" << f.flavour;
    if (k.target == Target::Cuda && f.tparam.empty())
      os << ", bounds " << f.launch_bounds;
    os << ")";
    if (!f.tparam.empty()) {
      os << " template " << f.tparam << " in";
      for (auto [i, inst] : llvm::enumerate(f.instances))
        os << (i ? "," : "") << " " << inst.value
           << (inst.value2 ? " " + f.tparam2 + " " + std::to_string(inst.value2) : "")
           << " (bounds " << inst.bounds
           << (!f.tflag.empty() && !inst.full    ? ", without " + f.tflag
               : !f.tflag.empty() && !inst.plain ? ", only " + f.tflag
                                                  : "")
           << ")";
      if (!f.tflag.empty())
        os << ", each also with " << f.tflag;
      if (!f.global_name.empty())
        os << ", as " << f.global_name << "<SLOTS>";
    }
    os << ":\n";
    if (!f.header.empty())
      os << "    # " << f.header << "\n";
    if (!f.params.empty()) {
      os << "    params";
      for (auto [i, p] : llvm::enumerate(f.params))
        os << (i ? ", " : " ") << p.name << ": " << p.type;
      os << "\n";
    }
    stmts(f.body, "    ");
  }

  void kernel(const Kernel &k) {
    os << "kernel " << k.index << " "
       << (k.target == Target::Cuda ? "cuda" : "cpu") << " " << k.prefix
       << (k.reduction ? " (reduction)" : "") << ":\n";
    if (!k.ctx.empty()) {
      os << "  context";
      for (auto [i, p] : llvm::enumerate(k.ctx))
        os << (i ? ", " : " ") << p.name << ": " << p.type;
      os << "\n";
    }
    if (!k.scratch.empty()) {
      os << "  scratch";
      for (auto [i, e] : llvm::enumerate(k.scratch))
        os << (i ? ", " : " ") << "part" << e.reduction << ": " << e.acc_type
           << " x rows * splits";
      os << "\n";
    }
    for (const Function &f : k.functions)
      function(f, k);
  }
};

} // namespace

std::string print_text(const Program &p) {
  std::string s;
  llvm::raw_string_ostream os(s);
  TextPrinter pr{os};
  os << "lowered @" << p.user_name << " (" << p.symbol << "): " << p.args.size()
     << " argument" << (p.args.size() == 1 ? "" : "s") << ", " << p.outputs
     << " output" << (p.outputs == 1 ? "" : "s") << "\n";
  if (p.cuda_graphs)
    os << "entry, run through kiln::rt::graph_call (mode=reduce-overhead: "
          "replayed as a CUDA graph):\n";
  else
    os << "entry:\n";
  if (p.autotune)
    os << "  (its GEMMs autotuned: kiln::gen::AutotuneScope, "
          "mode=max-autotune)\n";
  pr.stmts(p.entry, "  ");
  for (const Variant &v : p.variants) {
    os << "variant " << v.name << " (" << v.function << "):\n";
    pr.stmts(v.body, "  ");
    for (const Kernel &k : v.kernels)
      pr.kernel(k);
  }
  if (p.num_caller_checks) {
    os << "caller checks (" << codegen::caller_checks_symbol(p.symbol) << ", "
       << p.num_caller_checks << " held flags):\n";
    pr.stmts(p.caller_checks, "  ");
  }
  return s;
}

} // namespace kiln::low
