// The per-element code shared by every kernel flavour (CUDA vectorised,
// CUDA strided, CPU contiguous, CPU strided). Each node becomes one call of
// the op table's formula, kiln::scalar::op_<name>, in the compute type the
// eager runtime would use, so compiled and eager evaluate the same formula.
// Intermediates stay in the compute type (f32 for f16/bf16): only stores
// round, as TorchInductor does; except where a value's rounding can flip a
// discrete result: a comparison, and argmax, read an f16/bf16 intermediate
// rounded to its dtype, as eager reads it (ties and thresholds agree).
#include "Emit.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;

const char *storage_type(DType t) {
  switch (t) {
  case DType::f32:
    return "float";
  case DType::f16:
    return "kiln::half";
  case DType::bf16:
    return "kiln::bfloat16";
  case DType::f64:
    return "double";
  case DType::i32:
    return "int32_t";
  case DType::i64:
    return "int64_t";
  case DType::b8:
    return "bool";
  }
  return "?";
}

const char *compute_type(DType t) {
  switch (t) {
  case DType::f16:
  case DType::bf16:
    return "float";
  default:
    return storage_type(t);
  }
}

const char *value_type(const ir::Node &n) { return compute_type(n.type.dtype); }

std::string literal(double v, DType t) {
  if (t == DType::b8)
    return v != 0 ? "true" : "false";
  if (t == DType::i64 || t == DType::i32)
    return "int64_t(" + std::to_string(int64_t(v)) + ")";
  if (std::isnan(v))
    return "double(NAN)";
  if (std::isinf(v))
    return v > 0 ? "double(INFINITY)" : "(-double(INFINITY))";
  // 17 significant digits round-trip every double.
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

int vector_width(const ir::Graph &g, const sched::Kernel &k) {
  int widest = 1;
  for (NodeId i : k.inputs)
    widest = std::max(widest, element_size(g.node(i).type.dtype));
  for (NodeId o : k.outputs)
    widest = std::max(widest, element_size(g.node(o).type.dtype));
  return 16 / widest;
}

std::string kernel_name(const std::string &symbol, int kernel, DType variant,
                        const char *path) {
  return symbol + "_k" + std::to_string(kernel) + "_" + dtype_name(variant) +
         "_" + path;
}

std::string var(NodeId id) { return "v" + std::to_string(id); }

// What a node is, for the comment: `c = add(a, b)  // app.cpp:7:10`.
std::string describe_node(const ir::Graph &g, const ir::Node &n) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (!n.name.empty())
    os << n.name << " = ";
  os << ir::op_info(n.op).name << "(";
  for (auto [i, o] : llvm::enumerate(n.operands)) {
    const ir::Node &on = g.node(o);
    os << (i ? ", " : "");
    if (on.op == Op::Constant)
      os << literal(on.constant, on.type.dtype);
    else
      os << (on.name.empty() ? "%" + std::to_string(o) : on.name);
  }
  os << ")";
  if (n.loc.valid())
    os << "  at " << llvm::sys::path::filename(n.loc.file) << ":" << n.loc.line
       << ":" << n.loc.col;
  return s;
}

bool rounds_in_eager(const ir::Graph &g, NodeId o) {
  const ir::Node &n = g.node(o);
  return !n.type.scalar && is_floating(n.type.dtype) &&
         element_size(n.type.dtype) == 2 && n.op != Op::Input &&
         n.op != Op::Constant && n.op != Op::ScalarInput;
}

// `expr` with o's value rounded to its storage type and back: the value an
// eager op reads, which stored o.
llvm::DenseMap<NodeId, std::string>
rounded(const ir::Graph &g, NodeId o,
        const llvm::DenseMap<NodeId, std::string> &expr) {
  llvm::DenseMap<NodeId, std::string> r = expr;
  r[o] = "kiln::scalar::load(kiln::scalar::store<" +
         std::string(storage_type(g.node(o).type.dtype)) + ">(" +
         expr.lookup(o) + "))";
  return r;
}

std::string operand_expr(const ir::Graph &g, NodeId o, const char *want,
                         const llvm::DenseMap<NodeId, std::string> &expr) {
  const ir::Node &on = g.node(o);
  std::string e = on.op == Op::Constant ? literal(on.constant, on.type.dtype)
                                        : expr.lookup(o);
  const char *have = on.op == Op::Constant || on.op == Op::ScalarInput
                         ? storage_type(on.type.dtype)
                         : value_type(on);
  if (llvm::StringRef(have) == want)
    return e;
  return std::string(want) + "(" + e + ")";
}

void emit_pointwise_node(llvm::raw_ostream &os, const ir::Graph &g, NodeId id,
                         const llvm::DenseMap<NodeId, std::string> &expr,
                         const std::string &indent) {
  const ir::Node &n = g.node(id);
  const ir::OpInfo &info = ir::op_info(n.op);
  llvm::SmallVector<ir::Type, 3> types;
  for (NodeId o : n.operands)
    types.push_back(g.node(o).type);
  const char *ct = compute_type(ir::compute_dtype(n.op, types));
  os << indent << "const " << value_type(n) << " " << var(id)
     << " = kiln::scalar::op_" << info.name << "(";
  for (auto [i, o] : llvm::enumerate(n.operands)) {
    bool cond = info.rule == ir::TypeRule::WHERE && i == 0;
    os << (i ? ", " : "");
    if (info.rule == ir::TypeRule::COMPARE && rounds_in_eager(g, o))
      os << operand_expr(g, o, ct, rounded(g, o, expr));
    else
      os << operand_expr(g, o, cond ? "bool" : ct, expr);
  }
  os << "); // " << describe_node(g, n) << "\n";
}

std::string element_body(const ir::Graph &g, const sched::Kernel &k,
                         const ElementAccess &access,
                         const std::string &indent) {
  std::string s;
  llvm::raw_string_ostream os(s);
  // Values available in the body: loaded inputs, scalar parameters, and
  // constants (inlined as literals at each use).
  llvm::DenseMap<NodeId, std::string> expr;
  for (auto [i, in] : llvm::enumerate(k.inputs)) {
    const ir::Node &n = g.node(in);
    os << indent << "const " << value_type(n) << " " << var(in)
       << " = kiln::scalar::load(" << access.load(int(i)) << ");";
    if (!n.name.empty())
      os << " // " << n.name;
    os << "\n";
    expr[in] = var(in);
  }
  for (auto [i, sc] : llvm::enumerate(k.scalars))
    expr[sc] = access.scalar(int(i));
  // sin(a) and cos(a) of the same value become one kiln::scalar::sincos
  // call, at the first of the two (both need only a).
  llvm::DenseMap<NodeId, NodeId> sin_of, cos_of, partner;
  for (NodeId id : k.nodes) {
    const ir::Node &n = g.node(id);
    if (n.op == Op::Sin)
      sin_of.try_emplace(n.operands[0], id);
    else if (n.op == Op::Cos)
      cos_of.try_emplace(n.operands[0], id);
  }
  for (auto [arg, s] : sin_of)
    if (auto c = cos_of.find(arg); c != cos_of.end()) {
      partner[s] = c->second;
      partner[c->second] = s;
    }
  for (NodeId id : k.nodes) {
    if (expr.count(id))
      continue; // computed with its sincos partner
    if (auto it = partner.find(id); it != partner.end()) {
      const ir::Node &n = g.node(id);
      NodeId s = n.op == Op::Sin ? id : it->second;
      NodeId c = n.op == Op::Sin ? it->second : id;
      const char *ct = value_type(g.node(s));
      os << indent << ct << " " << var(s) << ", " << var(c) << ";\n"
         << indent << "kiln::scalar::sincos("
         << operand_expr(g, n.operands[0], ct, expr) << ", " << var(s) << ", "
         << var(c) << "); // " << describe_node(g, g.node(s)) << "; "
         << describe_node(g, g.node(c)) << "\n";
      expr[s] = var(s);
      expr[c] = var(c);
      continue;
    }
    emit_pointwise_node(os, g, id, expr, indent);
    expr[id] = var(id);
  }
  for (auto [j, out] : llvm::enumerate(k.outputs)) {
    const ir::Node &n = g.node(out);
    std::string v = "kiln::scalar::store<" +
                    std::string(storage_type(n.type.dtype)) + ">(" +
                    operand_expr(g, out, value_type(n), expr) + ")";
    os << indent << access.store(int(j), v) << "\n";
  }
  return s;
}

} // namespace kiln::codegen
