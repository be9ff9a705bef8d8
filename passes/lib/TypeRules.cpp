// The op table's type rules over a node's operand types. The promotion
// facts themselves live in kiln/dtype.h, shared with the runtime.
#include <kiln/passes/ir.h>

#include <llvm/Support/ErrorHandling.h>

namespace kiln::ir {

static DType promote_all(llvm::ArrayRef<Type> operands) {
  // Tensors (of any rank) promote among themselves; weak scalars then only
  // raise the category, as Python numbers do in PyTorch.
  bool have_tensor = false;
  DType tensors = DType::b8;
  for (const Type &t : operands)
    if (!t.scalar) {
      tensors = have_tensor ? promote_types(tensors, t.dtype) : t.dtype;
      have_tensor = true;
    }
  bool have_scalar = false;
  DType scalars = DType::b8;
  for (const Type &t : operands)
    if (t.scalar) {
      scalars = have_scalar ? promote_types(scalars, t.dtype) : t.dtype;
      have_scalar = true;
    }
  if (!have_tensor)
    return scalars;
  return have_scalar ? promote_with_scalar(tensors, scalars) : tensors;
}

DType common_dtype(Op op, llvm::ArrayRef<Type> operands) {
  // Reductions and composites compute in their (first) operand's dtype;
  // reduce_size counts elements.
  switch (op_info(op).kind) {
  case OpKind::Reduction:
  case OpKind::Composite:
  case OpKind::View:
    return operands.empty() ? DType::f32 : operands[0].dtype;
  case OpKind::Shape:
    return DType::i64;
  default:
    break;
  }
  // A cast reads its operand in that operand's dtype.
  if (op_info(op).rule == TypeRule::CAST)
    return operands.empty() ? DType::f32 : operands[0].dtype;
  if (op_info(op).rule == TypeRule::WHERE && operands.size() == 3) {
    DType values = promote_all(operands.drop_front());
    // where(tensor, number, number) is a tensor of the numbers' default
    // dtype, as the runtime makes it: f32 for floating numbers, else i64.
    if (!operands[0].scalar && operands[1].scalar && operands[2].scalar)
      return values == DType::f64 ? DType::f32 : DType::i64;
    return values;
  }
  return promote_all(operands);
}

DType compute_dtype(Op op, llvm::ArrayRef<Type> operands) {
  DType c = common_dtype(op, operands);
  // Sums of integers and bools are i64, as torch.sum.
  if (op_info(op).rule == TypeRule::SUM)
    return is_floating(c) ? c : DType::i64;
  if (op_info(op).rule != TypeRule::FLOAT || is_floating(c))
    return c;
  // Python numbers compute in double; tensors in the default float type.
  return result_is_scalar(operands) ? DType::f64 : DType::f32;
}

DType result_dtype(Op op, llvm::ArrayRef<Type> operands) {
  switch (op_info(op).rule) {
  case TypeRule::COMPARE:
    return DType::b8;
  case TypeRule::INDEX:
    return DType::i64;
  case TypeRule::CAST: // to_like, to_into: operand 1's; to: its cast_to
    if (operands.size() == 2)
      return operands[1].dtype;
    llvm::report_fatal_error("kiln::ir::result_dtype: the dtype of 'to' is "
                             "its node's cast_to");
  default:
    return compute_dtype(op, operands);
  }
}

std::optional<DType> weak_cast_kind(DType cast_to) {
  switch (cast_to) {
  case DType::f64:
  case DType::f32:
    return DType::f64;
  case DType::i64:
  case DType::i32:
    return DType::i64;
  case DType::b8:
    return DType::b8;
  default:
    return std::nullopt;
  }
}

bool result_is_scalar(llvm::ArrayRef<Type> operands) {
  for (const Type &t : operands)
    if (!t.scalar)
      return false;
  return true;
}

} // namespace kiln::ir
