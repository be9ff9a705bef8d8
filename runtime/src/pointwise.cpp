// Eager element-wise ops: type promotion, broadcasting, checks, and the
// choice of kernel (CPU or CUDA, contiguous or strided).
#include "autograd_impl.h"
#include "cpu_kernels.h"
#include "cuda_backend.h"
#include "detail.h"

#include <kiln/op_traits.h>
#include <kiln/ops.h>

#include <span>
#include <string>

namespace kiln {

namespace {
using namespace op_traits; // the traits column's names

struct OpMeta {
  const char *name;
  const char *qualified; // "kiln::add", for error messages
  int arity;
  detail::Rule rule;
  bool no_b8; // NO_B8: booleans have no subtraction or negation
};
constexpr OpMeta kOps[] = {
#define KILN_POINTWISE(Name, name, ar, rl, traits, identity, cxx, formula,     \
                       decomposition)                                          \
  {#name, "kiln::" #name, ar, detail::Rule::rl, ((traits) & NO_B8) != 0},
#include <kiln/ops.def>
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == size_t(OpId::NumPointwise));

using detail::fail;

std::string shapes_text(const Tensor *const *ts, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i)
      s += i + 1 == n ? " and " : ", ";
    s += ts[i]->sizes().str();
  }
  return s;
}

// The kernel instantiations of for_each_combo (kernel_types.h) beyond
// In == Common.
bool has_mixed_kernel(const OpMeta &m, DType in, DType common) {
  if (m.rule == detail::Rule::FLOAT || m.arity < 2)
    return false;
  return (common == DType::f32 &&
          (in == DType::b8 || in == DType::i32 || in == DType::i64)) ||
         (common == DType::i64 && in == DType::b8);
}

Tensor run_pointwise(OpId op, std::initializer_list<Operand> operands,
                     const Tensor *out) {
  const OpMeta &m = kOps[int(op)];
  const char *fn = m.qualified;
  rt::NvtxRange range(fn);
  if (int(operands.size()) != m.arity)
    fail("%s: takes %d operands, got %d", fn, m.arity, int(operands.size()));
  const Operand *ops = operands.begin();

  const Tensor *tensors[3];
  int ntensors = 0;
  for (int k = 0; k < m.arity; ++k) {
    if (!ops[k].tensor)
      continue;
    if (!ops[k].tensor->defined())
      fail("%s: operand %d is an undefined tensor", fn, k);
    tensors[ntensors++] = ops[k].tensor;
  }
  if (ntensors == 0)
    fail("%s: needs at least one tensor operand", fn);
  Device dev = tensors[0]->device();
  for (int i = 1; i < ntensors; ++i)
    if (tensors[i]->device() != dev)
      fail("%s: tensors on different devices: %s and %s", fn,
           dev.str().c_str(), tensors[i]->device().str().c_str());
  if (out) {
    if (!out->defined())
      fail("%s: the output tensor is undefined", fn);
    if (out->device() != dev)
      fail("%s: the output is on %s but the operands are on %s", fn,
           out->device().str().c_str(), dev.str().c_str());
  }
  int first_value = 0;
  if (m.rule == detail::Rule::WHERE) {
    if (!ops[0].tensor)
      fail("%s: the condition must be a b8 tensor, got a number", fn);
    if (ops[0].tensor->dtype() != DType::b8)
      fail("%s: the condition must be b8, got %s", fn,
           dtype_name(ops[0].tensor->dtype()));
    first_value = 1;
  }

  Dims shape;
  {
    bool ok = true;
    for (int i = 0; i < ntensors; ++i)
      ok = ok && rt::broadcast_shapes({&shape, &tensors[i]->sizes()}, shape);
    if (!ok)
      fail("%s: shapes %s do not broadcast", fn,
           shapes_text(tensors, ntensors).c_str());
  }

  // Type promotion: tensors are strong, numbers weak.
  bool have_tensor = false, float_scalar = false, same_dtype = true;
  DType common = DType::b8, first = DType::b8;
  for (int k = first_value; k < m.arity; ++k)
    if (ops[k].tensor) {
      DType d = ops[k].tensor->dtype();
      same_dtype = same_dtype && (!have_tensor || d == first);
      common = have_tensor ? promote_types(common, d) : d;
      first = have_tensor ? first : d;
      have_tensor = true;
    }
  for (int k = first_value; k < m.arity; ++k)
    if (!ops[k].tensor) {
      float_scalar = float_scalar || ops[k].scalar_dtype == DType::f64;
      if (have_tensor)
        common = promote_with_scalar(common, ops[k].scalar_dtype);
    }
  if (!have_tensor)
    common = float_scalar ? DType::f32 : DType::i64;
  DType result = m.rule == detail::Rule::FLOAT     ? to_floating(common)
                 : m.rule == detail::Rule::COMPARE ? DType::b8
                                                   : common;
  if (common == DType::b8 && m.no_b8)
    fail("%s: not supported on b8 tensors (use logical ops)", fn);

  if (out) {
    if (!(out->sizes() == shape))
      fail("%s: the output's shape %s does not match the broadcast shape %s",
           fn, out->sizes().str().c_str(), shape.str().c_str());
    if (!can_cast(result, out->dtype()))
      fail("%s: result type %s cannot be cast to the output's dtype %s", fn,
           dtype_name(result), dtype_name(out->dtype()));
    detail::check_no_internal_overlap(*out, fn);
  }

  // The kernel's (In, Common) pair; other operand dtypes convert first.
  DType in = common, kernel_common = common;
  if (have_tensor && same_dtype && first != common) {
    if (m.rule == detail::Rule::FLOAT &&
        to_floating(first) == to_floating(common))
      in = kernel_common = first; // same f32 math, no conversion
    else if (has_mixed_kernel(m, first, common))
      in = first;
  }
  Tensor converted[3];
  const Tensor *operand[3] = {};
  for (int k = 0; k < m.arity; ++k) {
    operand[k] = ops[k].tensor;
    if (operand[k] && k >= first_value && operand[k]->dtype() != in) {
      converted[k] = operand[k]->to(in);
      operand[k] = &converted[k];
    }
  }

  // Write straight into `out` unless its dtype differs or an operand
  // overlaps it in a different layout.
  bool direct = out && out->dtype() == result;
  for (int k = 0; direct && k < m.arity; ++k)
    direct = !(operand[k] && detail::partially_overlaps(*out, *operand[k]));
  Tensor target =
      direct ? *out : detail::empty_for(fn, shape, result, dev);

  int64_t n = target.numel();
  if (n > 0) {
    detail::PwLaunch l;
    l.op = op;
    l.in = in;
    l.common = kernel_common;
    l.n = n;
    l.device = dev.index;
    l.args.out = target.data_ptr();
    bool contiguous = target.is_contiguous();
    for (int k = 0; k < m.arity; ++k) {
      if (operand[k]) {
        l.args.in[k] = operand[k]->data_ptr();
        contiguous = contiguous && operand[k]->is_contiguous() &&
                     operand[k]->sizes() == shape;
      } else {
        l.args.scalar[k] = ops[k].value;
        l.args.scalar_mask |= 1u << k;
      }
    }
    l.contiguous = contiguous;
    if (contiguous) {
      l.calc.rank = 1;
      l.calc.sizes[0] = n;
      l.calc.strides[0][0] = 1;
      for (int k = 0; k < 3; ++k)
        l.calc.strides[0][k + 1] = operand[k] ? 1 : 0;
    } else {
      const Tensor *cols[4] = {&target, operand[0], operand[1], operand[2]};
      if (m.arity < 3)
        cols[3] = nullptr;
      if (m.arity < 2)
        cols[2] = nullptr;
      l.calc.rank = detail::fill_offset_calc(shape, cols, 4, l.calc.sizes,
                                             &l.calc.strides[0][0]);
    }
    l.calc.set_divisors();
    if (dev.is_cpu())
      detail::cpu_pointwise(l);
    else
      detail::cuda_pointwise(l);
  }
  if (out && !direct) {
    detail::copy_same_device(*out, target, fn);
    return *out;
  }
  return target;
}
} // namespace

const char *op_name(OpId op) {
  return int(op) < int(OpId::NumPointwise) ? kOps[int(op)].name : "?";
}

namespace {
// The tensor operands of a call, in order (autograd's inputs).
struct OperandTensors {
  const Tensor *t[3] = {};
  size_t n = 0;
  explicit OperandTensors(std::initializer_list<Operand> operands) {
    for (const Operand &o : operands)
      if (o.tensor && n < 3)
        t[n++] = o.tensor;
  }
  std::span<const Tensor *const> span() const { return {t, n}; }
};
} // namespace

Tensor pointwise(OpId op, std::initializer_list<Operand> operands) {
  autograd::Recorder rec(kOps[int(op)].name, OperandTensors(operands).span());
  Tensor r = run_pointwise(op, operands, nullptr);
  autograd::record_pointwise(rec, op, operands, r);
  return r;
}

void pointwise_out(OpId op, std::initializer_list<Operand> operands,
                   const Tensor &out) {
  const OperandTensors ts(operands);
  const char *fn = kOps[int(op)].qualified;
  if (!autograd::check_inplace(fn, out, ts.span())) {
    run_pointwise(op, operands, &out);
    rt::bump_version(out);
    return;
  }
  // Recorded: the node's inputs are the operands as they were, the old
  // value of `out` kept when the formula reads it.
  Tensor old = out;
  if (autograd::pointwise_reads_alias(op, operands, out))
    old = out.clone();
  autograd::Recorder rec(kOps[int(op)].name, ts.span());
  run_pointwise(op, operands, &out);
  rt::bump_version(out);
  autograd::record_pointwise_inplace(rec, op, operands, old, out);
}

Tensor gelu(const Tensor &x, std::string_view approximate) {
  if (approximate == "none")
    return pointwise(OpId::Gelu, {x});
  if (approximate == "tanh")
    return pointwise(OpId::GeluTanh, {x});
  fail("kiln::gelu: approximate must be \"none\" or \"tanh\", got \"%.*s\"",
       int(approximate.size()), approximate.data());
}

Tensor clamp(const Tensor &x, Operand lo, Operand hi) {
  return pointwise(OpId::Clamp, {x, lo, hi});
}

Tensor where(const Tensor &cond, Operand a, Operand b) {
  return pointwise(OpId::Where, {cond, a, b});
}

Tensor &Tensor::operator+=(const Tensor &o) {
  pointwise_out(OpId::Add, {*this, o}, *this);
  return *this;
}
Tensor &Tensor::operator-=(const Tensor &o) {
  pointwise_out(OpId::Sub, {*this, o}, *this);
  return *this;
}
Tensor &Tensor::operator*=(const Tensor &o) {
  pointwise_out(OpId::Mul, {*this, o}, *this);
  return *this;
}
Tensor &Tensor::operator/=(const Tensor &o) {
  pointwise_out(OpId::Div, {*this, o}, *this);
  return *this;
}
Tensor &Tensor::operator+=(double s) {
  pointwise_out(OpId::Add, {*this, s}, *this);
  return *this;
}
Tensor &Tensor::operator-=(double s) {
  pointwise_out(OpId::Sub, {*this, s}, *this);
  return *this;
}
Tensor &Tensor::operator*=(double s) {
  pointwise_out(OpId::Mul, {*this, s}, *this);
  return *this;
}
Tensor &Tensor::operator/=(double s) {
  pointwise_out(OpId::Div, {*this, s}, *this);
  return *this;
}

Tensor &Tensor::inplace_int(int op, int64_t s) {
  static constexpr OpId ops[] = {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div};
  pointwise_out(ops[op & 3], {*this, s}, *this);
  return *this;
}

} // namespace kiln
