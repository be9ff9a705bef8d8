// The eager API's forms: named functions and operators (each the right op
// of the table), in-place operators, signed zeros, and the error messages
// of bad calls. CUDA twins compare with the CPU.
#include "runtime_reference.h"

using namespace kiln;
using namespace kt;

namespace {

class FormsOn : public kt::DeviceTest {
protected:
  Tensor vec(std::vector<double> v, DType dt = f32) {
    return from_vector(v, {int64_t(v.size())}).to(dt).to(dev());
  }
};

void expect_same(const Tensor &a, const Tensor &b, const char *what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  std::vector<double> x = kt::values(a), y = kt::values(b);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_TRUE(kt::same_value(x[i], y[i]))
        << what << " element " << i << ": " << x[i] << " vs " << y[i];
}

TEST_P(FormsOn, NamedFunctionsAndOperatorsCallTheirOps) {
  Tensor a = vec({-2.5, -0.5, 0.0, 0.75, 3.0});
  Tensor b = vec({1.5, -3.0, 2.0, 0.75, -1.0});
  Tensor c = vec({1, 0, 1, 0, 1}, b8);
#define UNARY(fn, Op) expect_same(fn(a), pointwise(OpId::Op, {a}), #fn);
  UNARY(neg, Neg) UNARY(abs, Abs) UNARY(sin, Sin) UNARY(cos, Cos)
  UNARY(tan, Tan) UNARY(tanh, Tanh) UNARY(exp, Exp) UNARY(log, Log)
  UNARY(sqrt, Sqrt) UNARY(rsqrt, Rsqrt) UNARY(erf, Erf)
  UNARY(reciprocal, Reciprocal) UNARY(relu, Relu) UNARY(sigmoid, Sigmoid)
  UNARY(silu, Silu)
#undef UNARY
  expect_same(-a, pointwise(OpId::Neg, {a}), "unary -");
  expect_same(gelu(a), pointwise(OpId::Gelu, {a}), "gelu");
  expect_same(gelu(a, "tanh"), pointwise(OpId::GeluTanh, {a}), "gelu tanh");
  EXPECT_KILN_ERROR(gelu(a, "fast"),
                    "kiln::gelu: approximate must be \"none\" or \"tanh\", got "
                    "\"fast\"");
#define BINARY(fn, Op)                                                         \
  expect_same(fn(a, b), pointwise(OpId::Op, {a, b}), #fn);                     \
  expect_same(fn(a, 2.5), pointwise(OpId::Op, {a, 2.5}), #fn " scalar");       \
  expect_same(fn(3, b), pointwise(OpId::Op, {3, b}), #fn " scalar first");
  BINARY(add, Add) BINARY(sub, Sub) BINARY(mul, Mul) BINARY(div, Div)
  BINARY(pow, Pow) BINARY(maximum, Maximum) BINARY(minimum, Minimum)
  BINARY(gt, Gt) BINARY(lt, Lt) BINARY(ge, Ge) BINARY(le, Le) BINARY(eq, Eq)
  BINARY(ne, Ne)
#undef BINARY
#define OPERATOR(sym, Op)                                                      \
  expect_same(a sym b, pointwise(OpId::Op, {a, b}), #sym);                     \
  expect_same(a sym 2, pointwise(OpId::Op, {a, 2}), #sym " scalar");           \
  expect_same(0.75 sym b, pointwise(OpId::Op, {0.75, b}), #sym " scalar first");
  OPERATOR(+, Add) OPERATOR(-, Sub) OPERATOR(*, Mul) OPERATOR(/, Div)
  OPERATOR(>, Gt) OPERATOR(<, Lt) OPERATOR(>=, Ge) OPERATOR(<=, Le)
  OPERATOR(==, Eq) OPERATOR(!=, Ne)
#undef OPERATOR
  expect_same(clamp(a, b, 1.0), pointwise(OpId::Clamp, {a, b, 1.0}), "clamp");
  expect_same(where(c, a, b), pointwise(OpId::Where, {c, a, b}), "where");
  EXPECT_EQ(kt::values(a - b)[1], 2.5);
  EXPECT_EQ(kt::values(2 - a)[0], 4.5);
  EXPECT_EQ(kt::values(1 / b)[3], double(1.0f / 0.75f));
  EXPECT_EQ(std::string(op_name(OpId::GeluTanh)), "gelu_tanh");
}

TEST_P(FormsOn, SignedZerosFollowTheFormulas) {
  Tensor z = vec({0.0, -0.0});
  std::vector<double> n = kt::values(-z), ab = kt::values(abs(z)),
                      m = kt::values(z * 1.0), s = kt::values(sqrt(z)),
                      r = kt::values(reciprocal(z));
  EXPECT_TRUE(std::signbit(n[0]));
  EXPECT_FALSE(std::signbit(n[1]));
  EXPECT_FALSE(std::signbit(ab[1]));
  EXPECT_TRUE(std::signbit(m[1]));
  EXPECT_TRUE(std::signbit(s[1])); // sqrt(-0) = -0
  EXPECT_EQ(r[0], INFINITY);
  EXPECT_EQ(r[1], -INFINITY);
}

TEST_P(FormsOn, InPlaceOperators) {
  for (DType dt : {f32, f16, bf16, f64, i32, i64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = vec({1, 2, 3, 4, 5, 6}, dt).view({2, 3});
    const Storage *st = x.storage();
    x += vec({10, 20, 30}, dt); // broadcast operand
    x -= 1; // an integer number keeps integer tensors integral
    x *= vec({2, 2, 2, 2, 2, 2}, dt).view({2, 3});
    EXPECT_EQ(x.storage(), st);
    EXPECT_EQ(x.dtype(), dt);
    EXPECT_EQ(kt::values(x), (std::vector<double>{20, 42, 64, 26, 48, 70}));
    if (is_floating(dt)) {
      x *= 0.5;
      x /= vec({2, 2, 2}, dt);
      x /= 0.5;
      EXPECT_EQ(kt::values(x), (std::vector<double>{10, 21, 32, 13, 24, 35}));
    } else {
      EXPECT_KILN_ERROR(x /= vec({2, 2, 2}, dt),
                        std::string("kiln::div: result type f32 cannot be cast "
                                    "to the output's dtype ") +
                            dtype_name(dt));
      EXPECT_KILN_ERROR(x *= 0.5, "kiln::mul: result type f32 cannot be cast");
    }
  }
  // Into a strided view; a wider result converts into the narrower x.
  Tensor base = vec({1, 2, 3, 4, 5, 6}, f16).view({2, 3});
  Tensor xt = base.transpose(0, 1);
  xt += vec({0.25, 0.5}, f32); // f32 result stored into f16
  EXPECT_EQ(xt.dtype(), f16);
  EXPECT_EQ(kt::values(base), (std::vector<double>{1.25, 2.25, 3.25, 4.5, 5.5, 6.5}));
  Tensor bi = vec({1, 0, 1}, b8);
  EXPECT_KILN_ERROR(bi += vec({1, 1, 1}, i32), "result type i32 cannot be cast "
                                               "to the output's dtype b8");
  // The output's shape must be the broadcast shape.
  Tensor col = vec({1, 2, 3}).view({3, 1});
  EXPECT_KILN_ERROR(col += vec({1, 2, 3, 4}),
                    "kiln::add: the output's shape [3, 1] does not match the "
                    "broadcast shape [3, 4]");
  // Aliasing: x += x is fine; an operand overlapping the output in another
  // layout is read before it is overwritten.
  Tensor y = vec({1, 2, 3, 4, 5});
  y += y;
  EXPECT_EQ(kt::values(y), (std::vector<double>{2, 4, 6, 8, 10}));
  Tensor y1 = y.slice(0, 1, 5);
  y1 += y.slice(0, 0, 4);
  EXPECT_EQ(kt::values(y), (std::vector<double>{2, 6, 10, 14, 18}));
  Tensor sq = vec({1, 2, 3, 4}).view({2, 2});
  sq += sq.transpose(0, 1);
  EXPECT_EQ(kt::values(sq), (std::vector<double>{2, 5, 5, 8}));
  Tensor e = vec({1}).expand({3});
  EXPECT_KILN_ERROR(e += 1.0, "several of its elements share one memory location");
  // pointwise_out writes into a given output.
  Tensor out = empty({2, 2}, f64, dev());
  pointwise_out(OpId::Mul, {vec({1, 2, 3, 4}).view({2, 2}), 3}, out);
  EXPECT_EQ(kt::values(out), (std::vector<double>{3, 6, 9, 12}));
}

TEST_P(FormsOn, ErrorMessagesNameTheOpAndValues) {
  Tensor x = vec({1, 2, 3});
  EXPECT_KILN_ERROR(x + Tensor(), "kiln::add: operand 1 is an undefined tensor");
  EXPECT_KILN_ERROR(where(x, x, x), "kiln::where: the condition must be b8, got f32");
  EXPECT_KILN_ERROR(pointwise(OpId::Where, {1, x, x}),
                    "kiln::where: the condition must be a b8 tensor, got a number");
  EXPECT_KILN_ERROR(pointwise(OpId::Add, {x}), "kiln::add: takes 2 operands, got 1");
  EXPECT_KILN_ERROR(pointwise(OpId::Add, {1, 2}),
                    "kiln::add: needs at least one tensor operand");
  EXPECT_KILN_ERROR(-vec({1, 0}, b8), "kiln::neg: not supported on b8 tensors");
  EXPECT_KILN_ERROR(vec({1, 0}, b8) - vec({1, 0}, b8),
                    "kiln::sub: not supported on b8 tensors");
  EXPECT_KILN_ERROR(pointwise_out(OpId::Add, {x, x}, Tensor()),
                    "kiln::add: the output tensor is undefined");
  if (dev().is_cuda()) {
    Tensor h = ones({3});
    EXPECT_KILN_ERROR(x + h, "kiln::add: tensors on different devices: cuda:0 "
                             "and cpu");
    EXPECT_KILN_ERROR(pointwise_out(OpId::Add, {x, x}, h),
                      "kiln::add: the output is on cpu but the operands are on "
                      "cuda:0");
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, FormsOn, KT_DEVICES);

} // namespace
