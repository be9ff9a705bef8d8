// eager_function: [[kiln::compile("backend=eager")]] (kiln/passes/codegen.h).
#include "Lower.h"

#include <kiln/passes/lowered.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace kiln::codegen {

namespace {

using ir::NodeId;
using ir::Op;

// The C++ type of a weak scalar of kind dt (f64, i64, b8), or of what a
// weak scalar's to(f32) or to(i32) rounds or wraps through.
const char *host_type(DType dt) {
  switch (dt) {
  case DType::f64:
    return "double";
  case DType::f32:
    return "float";
  case DType::i64:
    return "int64_t";
  case DType::i32:
    return "int32_t";
  default:
    return "bool";
  }
}

// Every node's type: weak scalars for nodes of scalars only, tensors else.
std::vector<ir::Type> node_types(const ir::Graph &g) {
  std::vector<ir::Type> t(g.nodes.size());
  for (auto [i, n] : llvm::enumerate(g.nodes)) {
    switch (n.op) {
    case Op::Input:
      t[i] = ir::Type::tensor(DType::f32);
      break;
    case Op::ScalarInput:
    case Op::Constant:
      t[i] = ir::Type::weak_scalar(n.type.dtype);
      break;
    case Op::ReduceSize:
    case Op::Size:
      t[i] = ir::Type::weak_scalar(DType::i64);
      break;
    default: {
      llvm::SmallVector<ir::Type, 3> ops;
      for (NodeId o : n.operands)
        ops.push_back(t[o]);
      if (n.op == Op::Cast && ir::result_is_scalar(ops))
        t[i] = ir::Type::weak_scalar(ir::weak_cast_kind(n.cast_to).value());
      else if (ir::is_pointwise(n.op) && ir::result_is_scalar(ops))
        t[i] = ir::Type::weak_scalar(ir::result_dtype(n.op, ops));
      else
        t[i] = ir::Type::tensor(DType::f32);
    }
    }
  }
  return t;
}

} // namespace

FunctionCode eager_function(const FunctionSpec &spec) {
  FunctionCode fc;
  fc.symbol = spec.symbol;
  fc.user_name = spec.user_name;
  const ir::Graph &g = spec.graph;
  std::vector<ir::Type> types = node_types(g);
  const std::string params = fast_path_params(spec, g.outputs.size());

  std::string body;
  llvm::raw_string_ostream os(body);
  auto v = [](NodeId id) { return "v" + std::to_string(id); };
  auto operand = [&](NodeId id) -> std::string {
    if (!types[id].scalar)
      return v(id);
    if (types[id].dtype == DType::b8)
      return "kiln_b8(" + v(id) + ")";
    return "kiln::Operand(" + v(id) + ")";
  };
  size_t ops = 0;
  for (auto [i, n] : llvm::enumerate(g.nodes)) {
    NodeId id = NodeId(i);
    const ir::Type &t = types[id];
    auto a = [&](unsigned k) { return v(n.operands[k]); };
    switch (n.op) {
    case Op::Input:
      os << "  const kiln::Tensor &" << v(id) << " = a" << n.arg_index << ";\n";
      continue;
    case Op::ScalarInput:
      os << "  const " << host_type(n.type.dtype) << " " << v(id) << " = a"
         << n.arg_index << ";\n";
      continue;
    case Op::Constant:
      os << "  const " << host_type(t.dtype) << " " << v(id) << " = ";
      if (t.dtype == DType::f64 && std::isnan(n.constant))
        os << "std::numeric_limits<double>::quiet_NaN()";
      else if (t.dtype == DType::f64 && std::isinf(n.constant))
        os << (n.constant < 0 ? "-" : "")
           << "std::numeric_limits<double>::infinity()";
      else if (t.dtype == DType::f64)
        os << llvm::format("%a", n.constant);
      else if (t.dtype == DType::i64)
        os << "int64_t(" << llvm::format("%.0f", n.constant) << ")";
      else
        os << (n.constant != 0 ? "true" : "false");
      os << ";\n";
      continue;
    case Op::ReduceSize:
    case Op::Size:
      os << "  const int64_t " << v(id) << " = ";
      if (n.dims.empty())
        os << a(0) << ".numel();\n";
      else if (n.dims.size() == 1)
        os << a(0) << ".size(" << n.dims[0] << ");\n";
      else {
        fc.error = "backend=eager: the size of several dims is not supported";
        fc.error_loc = n.loc;
        return fc;
      }
      continue;
    default:
      break;
    }
    ++ops;
    const ir::OpInfo &info = ir::op_info(n.op);
    if (ir::is_pointwise(n.op) && t.scalar) {
      // Arithmetic on host scalars, in the promoted type, with the op's C++
      // operator (+ - * /, unary -), or its formula (<cmath> functions);
      // conversions as C++ converts.
      if (info.rule == ir::TypeRule::COMPARE) {
        // Compared in the operands' promoted kind (b8 < i64 < f64), with
        // the op's C++ operator.
        DType ct = DType::b8;
        for (NodeId o : n.operands)
          if (types[o].dtype == DType::f64 ||
              (types[o].dtype == DType::i64 && ct == DType::b8))
            ct = types[o].dtype;
        const char *cht = host_type(ct);
        os << "  const bool " << v(id) << " = " << cht << "(" << a(0) << ") "
           << info.cxx << " " << cht << "(" << a(1) << ");\n";
        continue;
      }
      const char *ht = host_type(t.dtype);
      os << "  const " << ht << " " << v(id) << " = ";
      auto c = [&](unsigned k) { return std::string(ht) + "(" + a(k) + ")"; };
      if (n.op == Op::Cast && n.cast_to != t.dtype) // rounds or wraps first
        os << ht << "(static_cast<" << host_type(n.cast_to) << ">(" << a(0)
           << "))";
      else if (n.op == Op::Cast)
        os << c(0);
      else if (!*info.cxx) {
        os << "kiln::scalar::op_" << info.name << "(";
        for (unsigned k = 0; k < n.operands.size(); ++k)
          os << (k ? ", " : "") << c(k);
        os << ")";
      } else if (info.arity == 1)
        os << info.cxx << c(0);
      else
        os << c(0) << " " << info.cxx << " " << c(1);
      os << ";\n";
      continue;
    }
    // An in-place op's result stored into the tensor it updates: where
    // eager's op raises (kiln::can_cast), the original body runs (and
    // raises).
    if (n.op == Op::CastInto)
      os << "  if (!kiln::can_cast(" << a(0) << ".dtype(), " << a(1)
         << ".dtype()))\n    return kiln::rt::guard_failed(\""
         << spec.user_name
         << "\", \"an in-place update's result cannot be cast to the "
            "updated tensor's dtype\");\n";
    os << "  kiln::Tensor " << v(id) << " = ";
    if (n.op == Op::Cast) {
      os << a(0) << ".to(kiln::DType::" << dtype_name(n.cast_to) << ");\n";
      continue;
    }
    if (n.op == Op::CastLike || n.op == Op::CastInto) {
      os << a(0) << ".to(" << a(1) << ".dtype());\n";
      continue;
    }
    if (ir::is_pointwise(n.op)) {
      os << "kiln::pointwise(kiln::OpId::" << info.enum_name << ", {";
      for (auto [k, o] : llvm::enumerate(n.operands))
        os << (k ? ", " : "") << operand(o);
      os << "});\n";
      continue;
    }
    if (n.op == Op::Broadcast) { // the compiler's: expand to the shape
      os << "kiln::gen::view(kiln::ViewKind::Broadcast, " << a(0)
         << ", kiln::gen::broadcast_of({";
      for (size_t k = 0; k < n.operands.size(); ++k)
        os << (k ? ", " : "") << "&" << a(k) << ".sizes()";
      os << "}));\n";
      continue;
    }
    if (ir::is_view(n.op)) {
      // The method, through its ViewKind. Where it raises, the original
      // body runs, as the compiled code's view check does: it raises there
      // too, unless the graph holds a view the body does not make (chunk's
      // pieces joined whole, past the pieces there are).
      os << "kiln::Tensor();\n  try {\n    " << v(id) << " = " << a(0)
         << ".apply_view(kiln::ViewKind::" << info.enum_name
         << ", std::vector<int64_t>{";
      for (size_t k = 1; k < n.operands.size(); ++k)
        os << (k > 1 ? ", " : "") << "int64_t(" << a(k) << ")";
      os << "});\n  } catch (const kiln::Error &) {\n    return "
            "kiln::rt::guard_failed(\""
         << spec.user_name << "\", \"" << info.name
         << " raises in eager for these shapes\");\n  }\n";
      continue;
    }
    if (n.op == Op::Matmul || n.op == Op::Bmm) {
      os << (n.op == Op::Bmm ? "kiln::bmm(" : "kiln::matmul(") << a(0) << ", "
         << a(1) << ");\n";
      continue;
    }
    if (n.op == Op::Linear) { // a scalar bias operand: none
      os << "kiln::linear(" << a(0) << ", " << a(1) << ", "
         << (types[n.operands[2]].scalar ? std::string("kiln::Tensor()") : a(2))
         << ");\n";
      continue;
    }
    if (n.op == Op::Store) { // base, after dst.copy_(src)
      os << "(kiln::Tensor(" << a(1) << ").copy_(" << a(2) << "), " << a(0)
         << ");\n";
      continue;
    }
    if (n.op == Op::Cat) {
      os << "kiln::cat(std::vector<kiln::Tensor>{";
      for (size_t k = 0; k + 1 < n.operands.size(); ++k)
        os << (k ? ", " : "") << a(k);
      os << "}, " << ir::cat_dim(g, n) << ");\n";
      continue;
    }
    if (n.op == Op::Attention) { // a scalar mask operand: none
      // Written as matmuls or bmms (fuse-attention): their shape errors,
      // which scaled_dot_product_attention does not raise for fewer key
      // heads (or for other ranks than bmm's 3).
      const ir::AttentionProducts kind = ir::attention_products(g, n);
      const bool products = kind != ir::AttentionProducts::None;
      if (products)
        os << "(kiln::gen::check_attention_products("
           << (kind == ir::AttentionProducts::Bmm ? "kiln::gen::Product::Bmm"
                                                  : "kiln::gen::Product::Matmul")
           << ", " << a(0) << ", " << a(1) << ", " << a(2) << "), ";
      os << "kiln::scaled_dot_product_attention(" << a(0) << ", " << a(1)
         << ", " << a(2) << ", "
         << (types[n.operands[3]].scalar ? std::string("kiln::Tensor()") : a(3))
         << ", bool(" << a(4) << ")";
      if (n.operands.size() >= 6)
        os << ", double(" << a(5) << ")";
      os << (products ? "));\n" : ");\n");
      continue;
    }
    std::string fn = std::string("kiln::") + info.name;
    std::string dim = n.dims.empty() ? "" : std::to_string(n.dims[0]);
    std::string keep = n.keepdim ? "true" : "false";
    if (n.dims.size() > 1) {
      fc.error = "backend=eager: a reduction over several dims is not supported";
      fc.error_loc = n.loc;
      return fc;
    }
    switch (info.form) {
    case ir::CompositeForm::ROWWISE:
      os << fn << "(" << a(0) << ", " << dim << ");\n";
      break;
    case ir::CompositeForm::NORM:
      // kiln::layer_norm(x, weight, bias, eps), kiln::rms_norm(x, weight,
      // eps): the tensors, then eps as a double.
      os << fn << "(";
      for (size_t k = 0; k + 1 < n.operands.size(); ++k)
        os << (k && types[n.operands[k]].scalar ? std::string("kiln::Tensor()")
                                                : a(k))
           << ", ";
      os << "double(" << a(n.operands.size() - 1) << "));\n";
      break;
    default: // reductions and REDUCE composites: fn(x[, dim, keepdim, ...])
      if (dim.empty()) {
        // kiln::var(x) has no correction argument: Bessel's only.
        if (n.op == Op::Var) {
          const ir::Node &c = g.node(n.operands[1]);
          if (c.op != Op::Constant || c.constant != 1) {
            fc.error = "backend=eager: var of a whole tensor with a "
                       "correction other than 1 is not supported";
            fc.error_loc = n.loc;
            return fc;
          }
        }
        os << fn << "(" << a(0) << ");\n";
      } else {
        os << fn << "(" << a(0) << ", " << dim << ", " << keep;
        for (size_t k = 1; k < n.operands.size(); ++k)
          os << ", " << a(k);
        os << ");\n";
      }
      break;
    }
  }
  for (auto [j, o] : llvm::enumerate(g.outputs)) {
    if (types[o].scalar) {
      fc.error = "backend=eager: an output is not a tensor";
      fc.error_loc = g.node(o).loc;
      return fc;
    }
    // A tensor updated in place keeps its dtype: eager's in-place op raises
    // where the result's dtype is not that one (an int32 tensor /= 2.0); a
    // copy would convert it. Such a call runs the original body.
    if (j < spec.into.size() && spec.into[j] != codegen::FunctionSpec::kNotInto)
      os << "  if (out" << j << "->defined() && " << v(o) << ".dtype() != out"
         << j << "->dtype())\n    return kiln::rt::guard_failed(\""
         << spec.user_name
         << "\", \"a tensor updated in place has another dtype than the "
            "result\");\n";
    os << "  *out" << j << " = " << v(o) << ";\n";
  }

  std::string &h = fc.host;
  llvm::raw_string_ostream hs(h);
  hs << "// ---- '" << spec.user_name
     << "' with backend=eager: the captured graph, one eager op per node "
        "----\n"
     << "#include <kiln/attention.h>\n#include <kiln/join.h>\n#include <kiln/matmul.h>\n#include <kiln/ops.h>\n\n"
        "#include <limits>\n#include <utility>\n\n"
     << "bool " << spec.symbol << "(" << params << ") __asm__(\"" << spec.symbol
     << "\");\n"
     << "bool " << spec.symbol << "(" << params << ") {\n"
     << "  if (kiln::rt::fast_path_off(\"" << spec.user_name << "\"))\n"
     << "    return false;\n"
     << "  [[maybe_unused]] auto kiln_b8 = [](bool b) {\n"
     << "    kiln::Operand o = int64_t(b);\n"
     << "    o.scalar_dtype = kiln::DType::b8;\n"
     << "    return o;\n  };\n"
     << body << "  kiln::rt::count_compiled();\n  return true;\n}\n\n";
  low::Program checks;
  checks.symbol = spec.symbol;
  checks.user_name = spec.user_name;
  low::lower_caller_checks(spec, checks);
  hs << low::print_caller_checks(checks);
  fc.plan = "backend=eager: " + std::to_string(ops) +
            " ops, each run by its eager kernel\n";
  fc.remarks.push_back(
      {spec.loc, "compiled '" + spec.user_name + "' with backend=eager: " +
                     std::to_string(ops) + (ops == 1 ? " op" : " ops") +
                     " captured, run one by one with eager ops"});
  return fc;
}

} // namespace kiln::codegen
