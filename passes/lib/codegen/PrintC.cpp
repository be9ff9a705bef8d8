// The lowered program as C++ (host code and CPU loops) and CUDA C++ (the
// kernels). One statement printer; the dialects differ only in how a kernel
// is declared, how a loop hint is spelt, and which statements they accept.
#include <kiln/passes/lowered.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::low {

namespace {

enum class Dialect { Cpp, Cuda };

// `type name`, without a space after a pointer or reference type.
std::string declarator(const std::string &type, const std::string &name) {
  if (!type.empty() && (type.back() == '*' || type.back() == '&'))
    return type + name;
  return type + " " + name;
}

std::string params_text(const std::vector<Param> &ps) {
  std::string s;
  for (auto [i, p] : llvm::enumerate(ps))
    s += (i ? (p.own_line ? ",\n    " : ", ") : "") + declarator(p.type, p.name);
  return s;
}

struct CPrinter {
  llvm::raw_ostream &os;
  Dialect dialect;

  // A Decl or Assign as text, without the semicolon (for-loop headers too).
  std::string inline_stmt(const Stmt &s) const {
    switch (s.kind) {
    case Stmt::Decl: {
      std::string t = s.qual.empty() ? "" : s.qual + " ";
      t += declarator(s.type, s.name);
      t += s.array;
      if (s.value)
        t += " = " + print(s.value);
      return t;
    }
    case Stmt::Assign:
      return print(s.lhs) + " " + s.text + " " + print(s.value);
    case Stmt::Eval:
      return print(s.value);
    default:
      llvm_unreachable("not an inline statement");
    }
  }

  static std::string trailing(const std::string &text) {
    return text.empty() ? "" : " // " + text;
  }

  // A body in braces (`{` already printed by the caller's line).
  void braced(const Stmts &body, const std::string &ind) {
    os << " {\n";
    stmts(body, ind + "  ");
    os << ind << "}";
  }

  // Loops and ifs of one simple statement print it on its own line,
  // without braces.
  static bool simple(const Stmts &body) {
    return body.size() == 1 &&
           (body[0].kind == Stmt::Assign || body[0].kind == Stmt::Eval ||
            body[0].kind == Stmt::Accumulate || body[0].kind == Stmt::Store ||
            body[0].kind == Stmt::Return || body[0].kind == Stmt::Break);
  }

  void stmts(const Stmts &body, const std::string &ind) {
    for (const Stmt &s : body)
      stmt(s, ind);
  }

  void stmt(const Stmt &s, const std::string &ind) {
    switch (s.kind) {
    case Stmt::Comment:
      os << ind << "// " << s.text << "\n";
      return;
    case Stmt::Decl:
    case Stmt::Assign:
    case Stmt::Eval:
      os << ind << inline_stmt(s) << ";"
         << trailing(s.kind == Stmt::Decl ? s.text : "") << "\n";
      return;
    case Stmt::Block:
      os << ind << "{\n";
      stmts(s.body, ind + "  ");
      os << ind << "}\n";
      return;
    case Stmt::For: {
      if (s.hint == LoopHint::Unroll)
        os << ind << "#pragma unroll\n";
      else if (s.hint == LoopHint::Simd)
        os << ind << "#pragma omp simd\n";
      os << ind << "for ("
         << (s.init.empty() ? "" : inline_stmt(s.init[0])) << "; "
         << print(s.cond) << "; " << print(s.step) << ")";
      if (simple(s.body)) {
        os << "\n";
        stmt(s.body[0], ind + "  ");
        return;
      }
      braced(s.body, ind);
      os << "\n";
      return;
    }
    case Stmt::If: {
      os << ind << "if ("
         << (s.init.empty() ? "" : inline_stmt(s.init[0]) + "; ")
         << print(s.cond) << ")";
      if (s.orelse.empty() && simple(s.body)) {
        os << "\n";
        stmt(s.body[0], ind + "  ");
        return;
      }
      braced(s.body, ind);
      if (!s.orelse.empty()) {
        os << " else";
        braced(s.orelse, ind);
      }
      os << "\n";
      return;
    }
    case Stmt::Switch:
      os << ind << "switch (" << print(s.cond) << ") {\n";
      for (const auto &[labels, body] : s.cases) {
        for (auto [i, l] : llvm::enumerate(labels)) {
          os << ind << (l ? "case " + print(l) : std::string("default"))
             << ":";
          if (i + 1 < labels.size())
            os << "\n";
        }
        if (body.size() == 1 && (body[0].kind == Stmt::Return ||
                                 body[0].kind == Stmt::GuardCheck ||
                                 body[0].kind == Stmt::Break)) {
          os << "\n";
          stmt(body[0], ind + "  ");
          continue;
        }
        braced(body, ind);
        os << "\n";
      }
      os << ind << "}\n";
      return;
    case Stmt::Return:
      os << ind << "return" << (s.value ? " " + print(s.value) : "") << ";\n";
      return;
    case Stmt::Break:
      os << ind << "break;\n";
      return;
    case Stmt::Load:
      os << ind << "const " << declarator(s.type, s.name)
         << " = kiln::scalar::load(" << print(s.value) << ");"
         << trailing(s.text) << "\n";
      return;
    case Stmt::Store:
      os << ind << print(s.lhs) << " = kiln::scalar::store<" << s.type << ">("
         << print(s.value) << ");\n";
      return;
    case Stmt::Compute: {
      os << ind << "const " << declarator(s.type, s.name)
         << " = kiln::scalar::op_" << s.op << "(";
      for (auto [i, a] : llvm::enumerate(s.args))
        os << (i ? ", " : "") << print(a);
      os << ");" << trailing(s.text) << "\n";
      return;
    }
    case Stmt::SinCos:
      os << ind << s.type << " " << s.names[0] << ", " << s.names[1] << ";\n"
         << ind << "kiln::scalar::sincos(" << print(s.args[0]) << ", "
         << s.names[0] << ", " << s.names[1] << ");" << trailing(s.text)
         << "\n";
      return;
    case Stmt::Accumulate:
      os << ind << print(s.lhs) << " = kiln::scalar::combine_" << s.op << "("
         << print(s.args[0]) << ", " << print(s.args[1]) << ");"
         << trailing(s.text) << "\n";
      return;
    case Stmt::RowReduce:
      if (dialect != Dialect::Cuda)
        llvm_unreachable("a row reduction outside a CUDA kernel");
      os << ind << print(s.lhs) << " = kiln::gen::"
         << (s.args.size() > 2 ? "col_reduce" : "row_reduce")
         << "<kiln::gen::red_" << s.op << ">(" << print(s.lhs) << ", "
         << print(s.args[0]) << ", ";
      if (s.args.size() > 2)
        os << print(s.args[2]) << ", ";
      os << "reinterpret_cast<" << s.type << " *>(" << print(s.args[1])
         << "));\n";
      return;
    case Stmt::GuardCheck: {
      std::string msg =
          s.message_expr ? print(s.message_expr) : print(str_lit(s.guard.message));
      std::string fail = "return kiln::rt::guard_failed(kFn, " + msg + ");\n";
      if (s.on_failure) {
        std::string note = print(s.on_failure) + ";\n";
        if (!s.cond) {
          os << ind << note << ind << fail;
          return;
        }
        os << ind << "if (" << print(s.cond) << ") {\n"
           << ind << "  " << note << ind << "  " << fail << ind << "}\n";
        return;
      }
      if (!s.cond) {
        os << ind << fail;
        return;
      }
      os << ind << "if (" << print(s.cond) << ")\n" << ind << "  " << fail;
      return;
    }
    case Stmt::Launch:
      os << ind << "kiln::rt::launch(" << print(s.launch.kernel) << ", "
         << print(s.launch.device) << ", {" << print(s.launch.grid) << "}, {"
         << print(s.launch.block) << "}, " << print(s.launch.args) << ");\n";
      return;
    }
  }

  void cuda_function(const Function &f) {
    os << "// " << f.header << "\n";
    if (f.tparam.empty()) {
      os << "extern \"C\" __global__ void __launch_bounds__(" << f.launch_bounds
         << ")\n"
         << f.name << "(" << params_text(f.params) << ") {\n";
      stmts(f.body, "  ");
      os << "}\n\n";
      return;
    }
    os << "template <int " << f.tparam
       << (f.tflag.empty() ? "" : ", bool " + f.tflag)
       << (f.tparam2.empty() ? "" : ", int " + f.tparam2) << ">\n"
       << "__device__ __forceinline__ void\n"
       << f.name << "_impl(" << params_text(f.params) << ") {\n";
    stmts(f.body, "  ");
    os << "}\n\n";
    std::string names;
    for (auto [i, p] : llvm::enumerate(f.params))
      names += (i ? ", " : "") + p.name;
    for (const Function::Global &g : f.globals())
      os << "extern \"C\" __global__ void __launch_bounds__(" << g.bounds
         << ")\n"
         << g.name << "(" << params_text(f.params) << ") {\n"
         << "  " << f.name << "_impl<" << g.targs << ">(" << names
         << ");\n}\n\n";
  }

  void cpu_kernel(const Kernel &k) {
    os << "// " << k.header << "\n";
    os << "struct " << k.prefix << "_ctx {\n";
    for (const Param &p : k.ctx)
      os << "  " << declarator(p.type, p.name) << ";\n";
    os << "};\n\n";
    for (const Function &f : k.functions) {
      if (!f.header.empty())
        os << "// " << f.header << "\n";
      os << "static void " << f.name
         << "(int64_t begin, int64_t end, void *p) {\n";
      stmts(f.body, "  ");
      os << "}\n\n";
    }
  }
};

std::string fast_path_params(const Program &p) {
  std::string s;
  for (auto [i, k] : llvm::enumerate(p.args))
    s += (i ? ", " : "") + declarator(codegen::cxx_param_type(k),
                                      "a" + std::to_string(i));
  for (size_t j = 0; j < p.outputs; ++j)
    s += ", kiln::Tensor *out" + std::to_string(j);
  return s;
}

// mode=reduce-overhead: the entry hands the plain one, with what keys a
// replay (tensor arguments and output slots, scalar arguments' bits), to
// kiln::rt::graph_call.
void print_graphed_entry(llvm::raw_ostream &os, const Program &p) {
  std::string tensors, scalars, outs, call;
  for (auto [i, k] : llvm::enumerate(p.args)) {
    const std::string a = "a" + std::to_string(i);
    if (k == codegen::ArgKind::Tensor)
      tensors += (tensors.empty() ? "&" : ", &") + a;
    else
      scalars += (scalars.empty() ? "" : ", ") +
                 ("kiln::rt::key_bits(" + a + ")");
    call += (call.empty() ? "" : ", ") + a;
  }
  for (size_t j = 0; j < p.outputs; ++j) {
    const std::string o = "out" + std::to_string(j);
    outs += (outs.empty() ? "" : ", ") + o;
    call += (call.empty() ? "" : ", ") + o;
  }
  os << "static kiln::rt::GraphCache " << p.symbol << "_graphs{"
     << print(str_lit(p.user_name)) << "};\n";
  os << "bool " << p.symbol << "(" << fast_path_params(p) << ") {\n";
  os << "  auto plain = [&] { return " << p.symbol << "_plain(" << call
     << "); };\n";
  os << "  return kiln::rt::graph_call(" << p.symbol << "_graphs, {" << tensors
     << "}, {" << scalars << "}, {" << outs << "}, plain);\n";
  os << "}\n\n";
}

} // namespace

std::string print_cuda(const Program &p) {
  std::string s;
  llvm::raw_string_ostream os(s);
  CPrinter pr{os, Dialect::Cuda};
  for (const Variant &v : p.variants)
    for (const Kernel &k : v.kernels)
      if (k.target == Target::Cuda)
        for (const Function &f : k.functions)
          pr.cuda_function(f);
  return s;
}

std::string print_host(const Program &p) {
  std::string s;
  llvm::raw_string_ostream os(s);
  CPrinter pr{os, Dialect::Cpp};
  os << "// ---- fast path of '" << p.user_name << "'";
  if (p.loc.valid())
    os << " (" << llvm::sys::path::filename(p.loc.file) << ":" << p.loc.line
       << ")";
  os << " ----\n\n";
  const std::string params = fast_path_params(p);
  for (const Variant &v : p.variants) {
    for (const Kernel &k : v.kernels)
      if (k.target == Target::Cpu)
        pr.cpu_kernel(k);
    for (const Kernel &k : v.kernels)
      for (const std::string &n : k.entry_points())
        os << "static kiln::rt::KernelRef " << print(kernel_ref(n))
           << "{&kiln_module, \"" << n << "\"};\n";
    os << "static bool " << v.function << "(" << params << ") {\n";
    pr.stmts(v.body, "  ");
    os << "}\n\n";
  }
  os << "bool " << p.symbol << "(" << params << ") __asm__(\"" << p.symbol
     << "\");\n";
  // mode=max-autotune: the GEMMs this call launches are autotuned.
  const char *autotune =
      p.autotune ? "  kiln::gen::AutotuneScope kiln_autotune;\n" : "";
  if (p.cuda_graphs) {
    os << "static bool " << p.symbol << "_plain(" << params << ") {\n";
    os << autotune;
    pr.stmts(p.entry, "  ");
    os << "}\n\n";
    print_graphed_entry(os, p);
  } else {
    os << "bool " << p.symbol << "(" << params << ") {\n";
    os << autotune;
    pr.stmts(p.entry, "  ");
    os << "}\n\n";
  }
  os << print_caller_checks(p);
  return s;
}

std::string print_caller_checks(const Program &p) {
  if (!p.num_caller_checks)
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  CPrinter pr{os, Dialect::Cpp};
  const std::string sym = codegen::caller_checks_symbol(p.symbol);
  std::string params;
  for (size_t i = 0; i < p.num_caller_checks; ++i)
    params += (i ? ", bool held" : "bool held") + std::to_string(i);
  os << "// What only the caller of the fast path can check (the names it\n"
        "// sees): each flag is true when its assumption holds.\n";
  os << "bool " << sym << "(" << params << ") __asm__(\"" << sym << "\");\n";
  os << "bool " << sym << "(" << params << ") {\n";
  pr.stmts(p.caller_checks, "  ");
  os << "}\n\n";
  return s;
}

} // namespace kiln::low
