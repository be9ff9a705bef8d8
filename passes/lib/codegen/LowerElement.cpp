// The per-element statements shared by every kernel flavour (CUDA
// vectorised, CUDA strided, CPU contiguous and strided loops, reductions).
// Each node becomes one call of the op table's formula,
// kiln::scalar::op_<name>, in the compute type the eager runtime would use,
// so compiled and eager evaluate the same formula. Intermediates stay in
// the compute type (f32 for f16/bf16): only stores round, as TorchInductor
// does; except where a value's rounding shows: a discrete result (a
// comparison, trunc_div, a cast to an integer or bool, argmax) and an op
// of another dtype (a promotion, a cast to f32) read an f16/bf16
// intermediate rounded to its dtype, as eager reads it.
#include "Lower.h"

#include <set>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;
using namespace low;

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

std::string kernel_name(const std::string &symbol, int kernel,
                        const std::string &variant,
                        const std::string &flavour) {
  std::string n = symbol + "_k" + std::to_string(kernel) + "_" + variant;
  return flavour.empty() ? n : n + "_" + flavour;
}

Expr value_var(NodeId id) { return var("v" + std::to_string(id)); }

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
  if (n.op == Op::Cast)
    os << ", " << dtype_name(n.cast_to);
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

ValueMap rounded(const ir::Graph &g, NodeId o, const ValueMap &values) {
  ValueMap r = values;
  r[o] = call("kiln::scalar::load",
              {call(std::string("kiln::scalar::store<") +
                        storage_type(g.node(o).type.dtype) + ">",
                    {values.lookup(o)})});
  return r;
}

Expr operand(const ir::Graph &g, NodeId o, const char *want,
             const ValueMap &values) {
  const ir::Node &on = g.node(o);
  Expr e = on.op == Op::Constant ? lit(literal(on.constant, on.type.dtype))
                                 : values.lookup(o);
  const char *have = on.op == Op::Constant || on.op == Op::ScalarInput
                         ? storage_type(on.type.dtype)
                         : value_type(on);
  if (llvm::StringRef(have) == want)
    return e;
  return cast(want, e);
}

Stmt compute_node(const ir::Graph &g, NodeId id, const ValueMap &values) {
  const ir::Node &n = g.node(id);
  const ir::OpInfo &info = ir::op_info(n.op);
  llvm::SmallVector<ir::Type, 3> types;
  for (NodeId o : n.operands)
    types.push_back(g.node(o).type);
  const char *ct = compute_type(ir::compute_dtype(n.op, types));
  // An f16/bf16 intermediate is read rounded to its dtype, as eager stored
  // it, where that rounding shows: by an op of another dtype (a comparison,
  // a cast to an integer, bool, f32 or f64, a promotion: eager widens the
  // stored value, and ties, thresholds or the result's precision would show
  // the difference), and by an op with a discrete result in its own dtype
  // (trunc_div). Within a chain of one 16-bit dtype values stay in f32, as
  // Inductor's do.
  auto read_rounded = [&](NodeId o) {
    return rounds_in_eager(g, o) && (g.node(o).type.dtype != n.type.dtype ||
                                     ir::discrete_result(n.op));
  };
  // A cast: kiln::scalar::op_to<storage type>(the operand).
  if (n.op == Op::Cast) {
    NodeId x = n.operands[0];
    return compute(value_type(n), print(value_var(id)),
                   std::string("to<") + storage_type(n.cast_to) + ">",
                   {operand(g, x, ct,
                            read_rounded(x) ? rounded(g, x, values) : values)},
                   id, describe_node(g, n));
  }
  std::vector<Expr> args;
  for (auto [i, o] : llvm::enumerate(n.operands)) {
    bool cond = info.rule == ir::TypeRule::WHERE && i == 0;
    if (read_rounded(o))
      args.push_back(operand(g, o, ct, rounded(g, o, values)));
    else
      args.push_back(operand(g, o, cond ? "bool" : ct, values));
  }
  // exp, a division and a reciprocal rounded to 16 bits: the GPU's
  // approximate 2^x and division (scalar.h says why).
  const bool approx =
      (n.op == Op::Exp || n.op == Op::Div || n.op == Op::Reciprocal) &&
      rounds_in_eager(g, id);
  return compute(value_type(n), print(value_var(id)),
                 approx ? std::string(info.name) + "_approx" : info.name,
                 std::move(args), id, describe_node(g, n));
}

Stmt store_node(const ir::Graph &g, NodeId o, const ValueMap &values,
                Expr to) {
  const ir::Node &n = g.node(o);
  return store(std::move(to), storage_type(n.type.dtype),
               operand(g, o, value_type(n), values));
}

Stmt load_input(const ir::Graph &g, NodeId in, Expr from) {
  const ir::Node &n = g.node(in);
  return load(value_type(n), print(value_var(in)), std::move(from), n.name);
}

bool uniform_input(const ir::Graph &g, NodeId in) {
  const ir::Shape &s = g.node(in).type.shape;
  return s.ranked && llvm::all_of(s.dims, [](const ir::SymDim &d) {
           return !d.is_symbolic() && d.value == 1;
         });
}

Stmts element_stmts(const ir::Graph &g, const sched::Kernel &k,
                    const ElementAccess &access) {
  Stmts body;
  // Values available in the body: loaded inputs, scalar parameters, and
  // constants (inlined as literals at each use).
  ValueMap values;
  // Uniform: known before the loop (access.hoist).
  std::set<NodeId> uniform;
  for (auto [i, in] : llvm::enumerate(k.inputs)) {
    if (access.hoist && uniform_input(g, in)) {
      access.hoist->push_back(load_input(g, in, access.uniform_load(int(i))));
      uniform.insert(in);
    } else {
      body.push_back(load_input(g, in, access.load(int(i))));
    }
    values[in] = value_var(in);
  }
  for (auto [i, sc] : llvm::enumerate(k.scalars)) {
    values[sc] = access.scalar(int(i));
    uniform.insert(sc);
  }
  for (NodeId id : k.nodes) {
    const bool hoisted =
        access.hoist && !g.node(id).operands.empty() &&
        llvm::all_of(g.node(id).operands, [&](NodeId o) {
          return uniform.count(o) || g.node(o).op == Op::Constant;
        });
    (hoisted ? *access.hoist : body).push_back(compute_node(g, id, values));
    if (hoisted)
      uniform.insert(id);
    values[id] = value_var(id);
  }
  for (auto [j, out] : llvm::enumerate(k.outputs))
    body.push_back(store_node(g, out, values, access.store(int(j))));
  return body;
}

std::vector<Param> kernel_params(const ir::Graph &g, const sched::Kernel &k,
                                 const std::string &restrict_kw) {
  std::vector<Param> ps;
  const std::string r = restrict_kw.empty() ? "" : restrict_kw;
  auto ptr = [&](const char *t, bool is_const) {
    return std::string(is_const ? "const " : "") + t + " *" + r;
  };
  // A pair written in place (Kernel::write_into) may be one pointer.
  auto ptr_of = [&](DType dt, bool is_const, bool restricted) {
    return restricted ? ptr(storage_type(dt), is_const)
                      : std::string(is_const ? "const " : "") +
                            storage_type(dt) + " *";
  };
  for (auto [i, in] : llvm::enumerate(k.inputs))
    ps.push_back({ptr_of(g.node(in).type.dtype, true,
                         k.restricted_input(int(i))),
                  "in" + std::to_string(i), true});
  for (auto [j, o] : llvm::enumerate(k.outputs))
    ps.push_back({ptr_of(g.node(o).type.dtype, false,
                         k.restricted_output(int(j))),
                  "out" + std::to_string(j), true});
  for (auto [i, sc] : llvm::enumerate(k.scalars))
    ps.push_back({std::string(r.empty() ? "" : "const ") +
                      storage_type(g.node(sc).type.dtype),
                  "s" + std::to_string(i), true});
  return ps;
}

} // namespace kiln::codegen
