// compile_backward: a compiled function's backward (AOTAutograd), derived
// at build time (passes::derive_backward), compiled as a function of its
// own (<symbol>_bwd: every pass, the scheduler's fusion, the same guards),
// with the same graph run by eager ops (<symbol>_bwd_eager) as the fallback
// when a guard of the compiled one fails; and the host code that records a
// compiled call for autograd (<symbol>_autograd), which the entry calls
// instead of declining when autograd records.
//
// The partition is derive_backward's: the backward saves the call's tensor
// arguments, and the reductions, matrix products and products' operands
// it reads, which <symbol>_fwd (the forward compiled again with them as
// extra outputs) writes when autograd records; it recomputes every other
// value it reads inside its own kernels (a layer norm's statistics are a
// pass of the backward's row kernel).
#include "Lower.h"

#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;

namespace {

std::string message_of(llvm::Error e, ir::Loc &at) {
  std::string msg;
  llvm::handleAllErrors(
      std::move(e),
      [&](const passes::PassError &pe) {
        msg = pe.message;
        if (pe.loc.valid())
          at = pe.loc;
      },
      [&](const llvm::ErrorInfoBase &b) { msg = b.message(); });
  return msg;
}

} // namespace

BackwardCode compile_backward(const FunctionSpec &spec, const Options &opts) {
  BackwardCode bc;
  bc.why_loc = spec.loc;
  auto decline = [&](std::string why) {
    bc.why = std::move(why);
    return bc;
  };
  if (spec.graph.outputs.size() != 1)
    return decline("it returns " + std::to_string(spec.graph.outputs.size()) +
                   " tensors (a compiled backward takes functions of one "
                   "result)");
  for (int into : spec.into)
    if (into != FunctionSpec::kNotInto)
      return decline("it updates a tensor in place");
  // backward=<names>: their arg_index.
  std::vector<int> wrt;
  for (const std::string &name : opts.backward_args) {
    int found = -1;
    for (const ir::Node &n : spec.graph.nodes)
      if (n.op == Op::Input && n.name == name)
        found = n.arg_index;
    // None: a parameter this specialisation or region does not take as a
    // tensor (the plugin checks that each name is a parameter).
    if (found >= 0)
      wrt.push_back(found);
  }
  if (!opts.backward_args.empty() && wrt.empty())
    return decline("none of its 'backward=' arguments is a tensor it takes");
  llvm::Expected<passes::Backward> derived =
      passes::derive_backward(spec.graph, wrt);
  if (!derived)
    return decline(message_of(derived.takeError(), bc.why_loc));

  // The forward that also writes what the backward saves (its ids are the
  // captured graph's: derive_backward copies it first).
  const size_t nsaved = derived->saved.size();
  // Both compile as plain functions: no backward of their own, no graphs.
  Options sub = opts;
  sub.backward = false;
  sub.cuda_graphs = false;
  FunctionCode forward;
  if (nsaved) {
    FunctionSpec fs = spec;
    fs.symbol = spec.symbol + "_fwd";
    fs.user_name = spec.user_name + " (forward, saving for backward)";
    fs.into.clear();
    fs.caller_checks.clear();
    for (NodeId id : derived->saved)
      fs.graph.outputs.push_back(id);
    forward = compile_function(fs, sub);
    if (!forward.error.empty()) {
      if (forward.error_loc.valid())
        bc.why_loc = forward.error_loc;
      return decline("its forward saving for backward: " + forward.error);
    }
  }

  FunctionSpec bs;
  bs.graph = std::move(derived->graph);
  bs.args = spec.args;
  bs.args.push_back(ArgKind::Tensor);
  for (size_t k = 0; k < nsaved; ++k)
    bs.args.push_back(ArgKind::Tensor);
  bs.user_name = spec.user_name + " (backward)";
  bs.symbol = spec.symbol + "_bwd";
  bs.loc = spec.loc;
  bs.arg_dtypes = spec.arg_dtypes;
  // The gradient has the output's dtype, a saved value its node's.
  bs.dtype_from = derived->dtype_from;
  FunctionCode compiled = compile_function(bs, sub);
  if (!compiled.error.empty()) {
    if (compiled.error_loc.valid())
      bc.why_loc = compiled.error_loc;
    return decline(compiled.error);
  }
  FunctionSpec es = bs;
  es.symbol = spec.symbol + "_bwd_eager";
  FunctionCode eager = eager_function(es);
  if (!eager.error.empty()) {
    if (eager.error_loc.valid())
      bc.why_loc = eager.error_loc;
    return decline("its eager fallback: " + eager.error);
  }

  // The tensor arguments, in order: the node's inputs.
  std::vector<int> tensor_args;
  for (auto [i, k] : llvm::enumerate(spec.args))
    if (k == ArgKind::Tensor)
      tensor_args.push_back(int(i));
  auto tensor_pos = [&](int arg) {
    return int(llvm::find(tensor_args, arg) - tensor_args.begin());
  };
  const size_t nout = bs.graph.outputs.size();
  const std::string S = spec.symbol;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << forward.host << compiled.host << eager.host;
  os << "// ---- backward of '" << spec.user_name
     << "' (compiled backward: " << S << "_bwd, its eager fallback "
     << S << "_bwd_eager) ----\n\n";
  os << "bool " << S << "(" << fast_path_params(spec, 1) << ") __asm__(\"" << S
     << "\");\n\n";
  os << "static std::vector<kiln::Tensor> " << S
     << "_backward(const kiln::Tensor &grad, const std::vector<kiln::Tensor> "
        "&saved, const std::vector<double> &scalars) {\n";
  int scalar = 0;
  std::string call_args;
  for (auto [i, k] : llvm::enumerate(spec.args)) {
    std::string a = "a" + std::to_string(i);
    if (k == ArgKind::Tensor)
      os << "  const kiln::Tensor &" << a << " = saved["
         << tensor_pos(int(i)) << "];\n";
    else
      os << "  const " << cxx_param_type(k) << " " << a << " = "
         << cxx_param_type(k) << "(scalars[" << scalar++ << "]);\n";
    call_args += a + ", ";
  }
  call_args += "grad";
  for (size_t k = 0; k < nsaved; ++k)
    call_args += ", saved[" + std::to_string(tensor_args.size() + k) + "]";
  for (size_t j = 0; j < nout; ++j)
    call_args += ", &g" + std::to_string(j);
  os << "  kiln::Tensor";
  for (size_t j = 0; j < nout; ++j)
    os << (j ? ", g" : " g") << j;
  os << ";\n";
  os << "  if (!" << S << "_bwd(" << call_args << ") && !" << S
     << "_bwd_eager(" << call_args << "))\n";
  os << "    kiln::rt::compiled_backward_failed(\"" << spec.user_name
     << "\");\n";
  os << "  std::vector<kiln::Tensor> grads(" << tensor_args.size() << ");\n";
  for (size_t j = 0; j < nout; ++j)
    os << "  grads[" << tensor_pos(derived->grad_of[j]) << "] = g" << j
       << ";\n";
  os << "  return grads;\n}\n\n";
  os << "static bool " << S << "_autograd(" << fast_path_params(spec, 1) << ") {\n";
  auto arg_label = [&](int arg) {
    for (const ir::Node &n : spec.graph.nodes)
      if (n.op == Op::Input && n.arg_index == arg && !n.name.empty())
        return "'" + n.name + "'";
    return "argument " + std::to_string(arg);
  };
  // An argument whose gradient the backward does not compute must not
  // need one.
  if (!wrt.empty())
    for (int a : tensor_args)
      if (!llvm::is_contained(wrt, a)) {
        os << "  if (a" << a << ".requires_grad())\n"
           << "    return kiln::rt::guard_failed(\"" << spec.user_name
           << "\", \"" << arg_label(a)
           << " requires grad, but the compiled backward computes the "
              "gradients of its 'backward=' arguments only: the original "
              "body runs, its eager ops record\");\n";
        bc.assumptions.push_back(arg_label(a) + " does not require grad");
      }
  for (int a : derived->rank2) {
    os << "  if (a" << a << ".dim() < 2)\n"
       << "    return kiln::rt::guard_failed(\"" << spec.user_name
       << "\", \"the compiled backward of a matrix product assumes "
       << arg_label(a) << " has 2 or more dims: the original body runs, its "
          "eager ops record\");\n";
    bc.assumptions.push_back(arg_label(a) + " has 2 or more dims");
  }
  for (auto [a, b] : derived->same_shape) {
    std::string what = arg_label(a) + " has the shape of " + arg_label(b);
    os << "  if (!(a" << a << ".sizes() == a" << b << ".sizes()))\n"
       << "    return kiln::rt::guard_failed(\"" << spec.user_name
       << "\", \"the compiled backward assumes " << what
       << ": the original body runs, its eager ops record\");\n";
    bc.assumptions.push_back(what);
  }
  // The forward (the one saving what the backward reads, when it saves),
  // not recording.
  os << "  kiln::Tensor result";
  for (size_t k = 0; k < nsaved; ++k)
    os << ", s" << k;
  os << ";\n  {\n    kiln::no_grad off;\n    if (!" << S
     << (nsaved ? "_fwd(" : "(");
  for (size_t i = 0; i < spec.args.size(); ++i)
    os << "a" << i << ", ";
  os << "&result";
  for (size_t k = 0; k < nsaved; ++k)
    os << ", &s" << k;
  os << "))\n      return false;\n  }\n";
  os << "  kiln::rt::record_compiled(\"" << spec.user_name << "\", {";
  for (auto [j, a] : llvm::enumerate(tensor_args))
    os << (j ? ", " : "") << "&a" << a;
  os << "}, result, {";
  for (auto [j, a] : llvm::enumerate(tensor_args))
    os << (j ? ", " : "") << "a" << a;
  for (size_t k = 0; k < nsaved; ++k)
    os << ", s" << k;
  os << "}, {";
  bool first = true;
  for (auto [i, k] : llvm::enumerate(spec.args))
    if (k != ArgKind::Tensor) {
      os << (first ? "" : ", ") << "double(a" << i << ")";
      first = false;
    }
  os << "}, &" << S << "_backward);\n";
  os << "  *out0 = result;\n  return true;\n}\n\n";
  bc.host = std::move(text);
  bc.cuda = forward.cuda + compiled.cuda;
  bc.forward = std::move(forward);
  bc.forward.host.clear();
  bc.forward.cuda.clear();
  for (NodeId id : derived->saved) {
    const ir::Node &n = spec.graph.node(id);
    bc.saved.push_back((n.name.empty() ? "%" + std::to_string(id)
                                       : "'" + n.name + "'") +
                       " (" + ir::op_info(n.op).name +
                       (n.loc.valid() ? ", line " + std::to_string(n.loc.line)
                                      : std::string()) +
                       ")");
  }
  bc.code = std::move(compiled);
  bc.code.host.clear();
  bc.code.cuda.clear();
  bc.grads = derived->grad_of.size();
  return bc;
}

} // namespace kiln::codegen
