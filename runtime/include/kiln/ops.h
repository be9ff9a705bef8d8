// kiln/ops.h - eager ops: one kernel per op, on the CPU or CUDA.
//
// Broadcasting and type promotion follow PyTorch. A C++ number operand is a
// "weak" scalar (see promote_with_scalar in kiln/dtype.h). These are the
// calls [[kiln::compile]] captures; without the plugin they run as written.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <concepts>
#include <string_view>

KILN_API_BEGIN
namespace kiln {

// A C++ number used as an operand.
template <class S>
concept Number = std::is_arithmetic_v<S> && !std::same_as<S, bool>;

// Generic entry points, one per op of the table (kiln/ops.def). Operands
// that are numbers come in as 0-d "weak scalar" arguments.
enum class OpId : uint16_t {
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition) Name,
#include <kiln/ops.def>
  NumPointwise
};
const char *op_name(OpId op);

struct Operand { // a tensor, or a weak scalar of the given dtype
  const Tensor *tensor = nullptr;
  double value = 0;
  DType scalar_dtype = DType::f64;
  Operand(const Tensor &t) : tensor(&t) {}
  template <Number S>
  Operand(S s)
      : value(double(s)), scalar_dtype(std::is_floating_point_v<S> ? DType::f64
                                                                   : DType::i64) {}
};
Tensor pointwise(OpId op, std::initializer_list<Operand> operands);
// out = op(operands), computed into an existing tensor (for in-place ops).
void pointwise_out(OpId op, std::initializer_list<Operand> operands,
                   const Tensor &out);

// Unary ops.
#define KILN_UNARY_FN(fn, Name)                                                \
  inline Tensor fn(const Tensor &x) { return pointwise(OpId::Name, {x}); }
KILN_UNARY_FN(neg, Neg)
KILN_UNARY_FN(abs, Abs)
KILN_UNARY_FN(floor, Floor)
KILN_UNARY_FN(ceil, Ceil)
KILN_UNARY_FN(trunc, Trunc)
KILN_UNARY_FN(round, Round)
KILN_UNARY_FN(sin, Sin)
KILN_UNARY_FN(cos, Cos)
KILN_UNARY_FN(tan, Tan)
KILN_UNARY_FN(tanh, Tanh)
KILN_UNARY_FN(exp, Exp)
KILN_UNARY_FN(log, Log)
KILN_UNARY_FN(log1p, Log1p)
KILN_UNARY_FN(expm1, Expm1)
KILN_UNARY_FN(log2, Log2)
KILN_UNARY_FN(log10, Log10)
KILN_UNARY_FN(sqrt, Sqrt)
KILN_UNARY_FN(rsqrt, Rsqrt)
KILN_UNARY_FN(erf, Erf)
KILN_UNARY_FN(reciprocal, Reciprocal)
KILN_UNARY_FN(relu, Relu)
KILN_UNARY_FN(sigmoid, Sigmoid)
KILN_UNARY_FN(silu, Silu)
#undef KILN_UNARY_FN

// gelu(x) is the exact (erf) form; gelu(x, "tanh") the tanh approximation,
// as torch.nn.functional.gelu's `approximate` argument.
Tensor gelu(const Tensor &x, std::string_view approximate = "none");

// Binary ops: tensor-tensor, tensor-number, number-tensor.
#define KILN_BINARY_FN(fn, Name)                                               \
  inline Tensor fn(const Tensor &a, const Tensor &b) {                         \
    return pointwise(OpId::Name, {a, b});                                      \
  }                                                                            \
  template <Number S> Tensor fn(const Tensor &a, S b) {                        \
    return pointwise(OpId::Name, {a, b});                                      \
  }                                                                            \
  template <Number S> Tensor fn(S a, const Tensor &b) {                        \
    return pointwise(OpId::Name, {a, b});                                      \
  }
KILN_BINARY_FN(add, Add)
KILN_BINARY_FN(sub, Sub)
KILN_BINARY_FN(mul, Mul)
KILN_BINARY_FN(div, Div)
KILN_BINARY_FN(trunc_div, TruncDiv)
KILN_BINARY_FN(pow, Pow)
KILN_BINARY_FN(fmod, Fmod)
KILN_BINARY_FN(atan2, Atan2)
KILN_BINARY_FN(maximum, Maximum)
KILN_BINARY_FN(minimum, Minimum)
KILN_BINARY_FN(gt, Gt)
KILN_BINARY_FN(lt, Lt)
KILN_BINARY_FN(ge, Ge)
KILN_BINARY_FN(le, Le)
KILN_BINARY_FN(eq, Eq)
KILN_BINARY_FN(ne, Ne)
#undef KILN_BINARY_FN

#define KILN_BINARY_OPERATOR(sym, fn)                                          \
  inline Tensor operator sym(const Tensor &a, const Tensor &b) {               \
    return fn(a, b);                                                           \
  }                                                                            \
  template <Number S> Tensor operator sym(const Tensor &a, S b) {              \
    return fn(a, b);                                                           \
  }                                                                            \
  template <Number S> Tensor operator sym(S a, const Tensor &b) {              \
    return fn(a, b);                                                           \
  }
KILN_BINARY_OPERATOR(+, add)
KILN_BINARY_OPERATOR(-, sub)
KILN_BINARY_OPERATOR(*, mul)
KILN_BINARY_OPERATOR(/, div)
KILN_BINARY_OPERATOR(>, gt)
KILN_BINARY_OPERATOR(<, lt)
KILN_BINARY_OPERATOR(>=, ge)
KILN_BINARY_OPERATOR(<=, le)
KILN_BINARY_OPERATOR(==, eq)
KILN_BINARY_OPERATOR(!=, ne)
#undef KILN_BINARY_OPERATOR
inline Tensor operator-(const Tensor &a) { return neg(a); }

// clamp(x, lo, hi): bounds are tensors or numbers.
Tensor clamp(const Tensor &x, Operand lo, Operand hi);
// where(cond, a, b): cond is b8; a and b are tensors or numbers.
Tensor where(const Tensor &cond, Operand a, Operand b);

// Reductions (kiln/ops.def, KILN_REDUCTION / KILN_COMPOSITE). `dim` may be
// negative; keepdim keeps the reduced dim as size 1. The whole-tensor form
// op(x) reduces every dim to a 0-d tensor. f16/bf16 accumulate in f32.
// Result dtypes as PyTorch: sum of integers/bools is i64; mean, var,
// logsumexp, softmax, log_softmax and the norms need floating inputs;
// argmax is i64 (NaN counts as the maximum; the first index wins ties).
Tensor sum(const Tensor &x);
Tensor sum(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor mean(const Tensor &x);
Tensor mean(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor &x);
Tensor amax(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor amin(const Tensor &x);
Tensor amin(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor &x); // index into the flattened tensor
Tensor argmax(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor logsumexp(const Tensor &x);
Tensor logsumexp(const Tensor &x, int64_t dim, bool keepdim = false);
// Variance with Bessel's correction by default (torch.var's `correction`).
Tensor var(const Tensor &x);
Tensor var(const Tensor &x, int64_t dim, bool keepdim = false,
           int64_t correction = 1);

// Row-wise ops along `dim` (softmax, log_softmax) or the last dim (norms).
Tensor softmax(const Tensor &x, int64_t dim);
Tensor log_softmax(const Tensor &x, int64_t dim);
// (x - mean) / sqrt(var + eps) * weight + bias over the last dim (biased
// variance, as torch.nn.functional.layer_norm with normalized_shape of the
// last dim). weight and bias have the last dim's size; either may be an
// undefined Tensor() for none.
Tensor layer_norm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                  double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) * weight over the last dim. eps < 0 means
// torch's default, the dtype's machine epsilon.
Tensor rms_norm(const Tensor &x, const Tensor &weight, double eps = -1);

// Numerics helpers.
bool allclose(const Tensor &a, const Tensor &b, double rtol = 1e-5,
              double atol = 1e-8);
double max_abs_diff(const Tensor &a, const Tensor &b); // NaN where NaN differs

} // namespace kiln
KILN_API_END
