// fold-constants: an op on constants whose result is a weak scalar becomes
// a constant, computed by the runtime's own formula (kiln::scalar::op_<name>)
// in the compute type the runtime would use, so a fold gives exactly what a
// kernel would. A tensor-typed result is left alone: folding it would lose
// its shape. reduce_size folds to the element count when its operand's
// shape is known.
#include <kiln/passes/passes.h>

#include "ReduceDims.h"
#include "Rewrite.h"
#include "RewriteUtil.h"

#include <type_traits>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

template <class T> T operand_as(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (std::is_integral_v<T>)
    return saturating_cast<T>(v);
  else
    return static_cast<T>(v);
}

template <int Arity, TypeRule Rule, class T, class F>
double call(llvm::ArrayRef<double> v, F formula) {
  if constexpr (Arity == 1)
    return double(formula(operand_as<T>(v[0])));
  else if constexpr (Arity == 2)
    return double(formula(operand_as<T>(v[0]), operand_as<T>(v[1])));
  else if constexpr (Rule == TypeRule::WHERE) // the condition stays bool
    return double(formula(operand_as<bool>(v[0]), operand_as<T>(v[1]),
                          operand_as<T>(v[2])));
  else
    return double(
        formula(operand_as<T>(v[0]), operand_as<T>(v[1]), operand_as<T>(v[2])));
}

// Evaluates `op` with operands converted to the compute type T.
template <class T>
std::optional<double> evaluate(Op op, llvm::ArrayRef<double> v) {
  switch (op) {
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,         \
                       formula, decomposition)                                 \
  case Op::Name:                                                               \
    /* FLOAT ops have no integer formulas: their results are floating. */      \
    if constexpr (TypeRule::rule != TypeRule::FLOAT ||                         \
                  std::is_floating_point_v<T>)                                 \
      return call<arity, TypeRule::rule, T>(                                   \
          v, [](auto... x) { return scalar::op_##name(x...); });               \
    return std::nullopt;
#include <kiln/ops.def>
  default:
    return std::nullopt;
  }
}

std::optional<double> evaluate_in(DType compute, Op op,
                                  llvm::ArrayRef<double> v) {
  switch (compute) {
  case DType::f64:
    return evaluate<double>(op, v);
  case DType::f32:
  case DType::f16:
  case DType::bf16: // opmath of 16-bit floats is f32
    return evaluate<float>(op, v);
  case DType::i64:
    return evaluate<int64_t>(op, v);
  case DType::i32:
    return evaluate<int32_t>(op, v);
  case DType::b8:
    return evaluate<bool>(op, v);
  }
  return std::nullopt;
}

std::optional<double> fold(const Graph &g, const Node &n) {
  if (n.op == Op::ReduceSize || n.op == Op::Size) // Size: one dim's extent
    return reduced_count(g, n);
  if (!is_pointwise(n.op) || !n.type.scalar)
    return std::nullopt;
  // A weak scalar's conversion (f64, f32, i64, i32, b8), as op_to
  // converts: an integer into i32 wraps, as static_cast<int32_t> does.
  if (n.op == Op::Cast) {
    if (!is_constant(g, n.operands[0]))
      return std::nullopt;
    const Node &x = g.node(n.operands[0]);
    if (n.cast_to == DType::i32 && x.type.dtype == DType::i64)
      return double(int32_t(uint32_t(uint64_t(int64_t(x.constant)))));
    return round_to_dtype(x.constant, n.cast_to);
  }
  llvm::SmallVector<double, 3> values;
  for (NodeId o : n.operands) {
    if (!is_constant(g, o))
      return std::nullopt;
    values.push_back(g.node(o).constant);
  }
  llvm::SmallVector<Type, 3> types;
  for (NodeId o : n.operands)
    types.push_back(g.node(o).type);
  DType compute = compute_dtype(n.op, types);
  std::optional<double> r = evaluate_in(compute, n.op, values);
  if (!r)
    return std::nullopt;
  return round_to_dtype(*r, n.type.dtype);
}

} // namespace

Graph fold_constants(const Graph &g, const PassOptions &) {
  auto rewrite = [](Rewriter &rw, const Site &s) -> RewriteResult {
    Node n = s.node;
    n.operands.assign(s.x.begin(), s.x.end());
    if (std::optional<double> v = fold(rw.g(), n))
      return rw.constant(*v, n.type.dtype);
    return std::nullopt;
  };
  return llvm::cantFail(rewrite_graph(g, rewrite));
}

} // namespace kiln::passes
