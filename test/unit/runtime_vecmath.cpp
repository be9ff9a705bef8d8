// The CPU vector math (kiln/vecmath.def): libkiln_rt's exported kiln_vm_*
// functions, and the eager CPU kernels that reach SLEEF through them (the
// split 256-bit forms of vecmath_128.cpp for f16/bf16/bool inputs, the
// direct calls of vecmath.h for tanh and erf), in ULPs against long double
// on fresh random inputs; special values against the scalar libm's.
#include "runtime_test_util.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#if defined(__x86_64__)
typedef float vf32x4 __attribute__((vector_size(16)));
typedef double vf64x2 __attribute__((vector_size(16)));
extern "C" {
vf32x4 kiln_vm_sin_f32x4(vf32x4);
vf64x2 kiln_vm_erf_f64x2(vf64x2);
vf32x4 kiln_vm_pow_f32x4(vf32x4, vf32x4);
}
#endif

namespace {

using LD = long double;
using kiln::DType;
using kiln::Tensor;

struct MathOp {
  const char *name;
  std::function<Tensor(const Tensor &, const Tensor &)> eager;
  std::function<LD(LD, LD)> exact;
  double lo, hi; // x uniform in [lo, hi]; y (pow) in [-8, 8]
};

const MathOp kOps[] = {
    {"sin", [](const Tensor &x, const Tensor &) { return kiln::sin(x); },
     [](LD x, LD) { return sinl(x); }, -100, 100},
    {"cos", [](const Tensor &x, const Tensor &) { return kiln::cos(x); },
     [](LD x, LD) { return cosl(x); }, -100, 100},
    {"tan", [](const Tensor &x, const Tensor &) { return kiln::tan(x); },
     [](LD x, LD) { return tanl(x); }, -10, 10},
    {"tanh", [](const Tensor &x, const Tensor &) { return kiln::tanh(x); },
     [](LD x, LD) { return tanhl(x); }, -10, 10},
    {"exp", [](const Tensor &x, const Tensor &) { return kiln::exp(x); },
     [](LD x, LD) { return expl(x); }, -80, 80},
    {"log", [](const Tensor &x, const Tensor &) { return kiln::log(x); },
     [](LD x, LD) { return logl(x); }, 1e-6, 1e6},
    {"erf", [](const Tensor &x, const Tensor &) { return kiln::erf(x); },
     [](LD x, LD) { return erfl(x); }, -5, 5},
    {"pow", [](const Tensor &x, const Tensor &y) { return kiln::pow(x, y); },
     [](LD x, LD y) { return powl(x, y); }, 0.01, 10},
};

// |got - exact| in ULPs of `exact` held with `bits` of precision (24 for
// f32, 53 for f64, 11 for f16, 8 for bf16).
LD ulps(LD got, LD exact, int bits, int min_exp) {
  int e = exact == 0 ? min_exp : std::max(ilogbl(exact), min_exp);
  return fabsl(got - exact) / ldexpl(1.0L, e - bits + 1);
}

struct Precision {
  DType dt;
  int bits, min_exp;
  // SLEEF's 1.0 ULP, or glibc's 2 where kiln/vecmath.def keeps its scalar
  // function (and the split forms' lanes); a 16-bit result is the f32 one
  // rounded again.
  double bound;
};

TEST(VecMath, EagerCpuMathIsAccurateOnEveryLane) {
  std::random_device rd;
  unsigned seed = rd();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 g(seed);
  const int64_t n = 1031; // odd: vector body and a partial last vector
  for (const Precision &p : {Precision{kiln::f32, 24, -126, 2.0},
                             Precision{kiln::f64, 53, -1022, 2.0},
                             Precision{kiln::f16, 11, -14, 1.0},
                             Precision{kiln::bf16, 8, -126, 1.0}}) {
    for (const MathOp &op : kOps) {
      SCOPED_TRACE(std::string(op.name) + " " + kiln::dtype_name(p.dt));
      double hi = p.dt == kiln::f16 && op.hi > 10 ? 10 : op.hi; // f16 range
      std::vector<double> x(n), y(n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = std::uniform_real_distribution<double>(op.lo, hi)(g);
        y[i] = std::uniform_real_distribution<double>(-4, 4)(g);
      }
      Tensor tx = kiln::from_vector(x).to(p.dt), ty = kiln::from_vector(y).to(p.dt);
      std::vector<double> xs = kt::values(tx), ys = kt::values(ty);
      std::vector<double> got = kt::values(op.eager(tx, ty));
      for (int64_t i = 0; i < n; ++i) {
        LD exact = op.exact(xs[i], ys[i]);
        if (std::isinf(double(exact)) || fabsl(exact) > 60000 && p.dt == kiln::f16)
          continue; // overflows the dtype: not a question of accuracy
        ASSERT_LE(ulps(got[i], exact, p.bits, p.min_exp), p.bound)
            << "element " << i << ": x " << xs[i] << " y " << ys[i] << " got "
            << got[i] << " exact " << double(exact);
      }
    }
  }
}

// bool inputs compute in f32 (sin(true) = sin(1)): the loops widen bytes
// to 8 floats, the split 256-bit forms.
TEST(VecMath, EagerMathOfBoolsComputesInFloat) {
  std::vector<double> v(37);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = (i * 7) % 3 == 0;
  Tensor b = kiln::from_vector(v).to(kiln::b8);
  std::vector<double> got = kt::values(kiln::sin(b));
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(got[i], double(std::sin(float(v[i])))) << "element " << i;
}

// Special values as the scalar libm gives them.
TEST(VecMath, EagerSpecialValuesMatchLibm) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1e-45, -1e-45, 1e30, -1e30};
  Tensor x = kiln::from_vector(v).to(kiln::f32);
  std::vector<double> xs = kt::values(x);
  struct {
    const char *name;
    Tensor (*eager)(const Tensor &);
    float (*libm)(float);
  } ops[] = {{"sin", kiln::sin, ::sinf},   {"cos", kiln::cos, ::cosf},
             {"tan", kiln::tan, ::tanf},   {"tanh", kiln::tanh, ::tanhf},
             {"exp", kiln::exp, ::expf},   {"log", kiln::log, ::logf},
             {"erf", kiln::erf, ::erff}};
  for (auto &op : ops) {
    std::vector<double> got = kt::values(op.eager(x));
    for (size_t i = 0; i < xs.size(); ++i) {
      double want = op.libm(float(xs[i]));
      if (std::isnan(want)) // a NaN's sign is not specified
        EXPECT_TRUE(std::isnan(got[i])) << op.name << "(" << xs[i] << "): got " << got[i];
      else if (std::isinf(want) || want == 0)
        EXPECT_TRUE(got[i] == want && std::signbit(got[i]) == std::signbit(want))
            << op.name << "(" << xs[i] << "): got " << got[i] << ", libm " << want;
      else if (std::fabs(xs[i]) < 1e29) // sin(1e30): any value in [-1, 1] of 1 ULP
        EXPECT_LE(std::fabs(got[i] - want), 2 * std::fabs(want) * 0x1p-23)
            << op.name << "(" << xs[i] << ")";
    }
  }
}

#if defined(__x86_64__)
// The exported forms generated code calls: every lane its own value.
TEST(VecMath, ExportedFunctionsComputeEachLane) {
  vf32x4 s = kiln_vm_sin_f32x4(vf32x4{0.5f, -1.0f, 2.0f, 100.0f});
  const float xs[] = {0.5f, -1.0f, 2.0f, 100.0f};
  for (int k = 0; k < 4; ++k)
    EXPECT_LE(ulps(s[k], sinl(xs[k]), 24, -126), 1.001) << "sin lane " << k;
  vf64x2 e = kiln_vm_erf_f64x2(vf64x2{0.25, -3.0});
  EXPECT_LE(ulps(e[0], erfl(0.25L), 53, -1022), 1.001);
  EXPECT_LE(ulps(e[1], erfl(-3.0L), 53, -1022), 1.001);
  vf32x4 p = kiln_vm_pow_f32x4(vf32x4{2, 3, -2, 0.5f}, vf32x4{10, 0.5f, 3, -2});
  EXPECT_EQ(p[0], 1024.0f);
  EXPECT_LE(ulps(p[1], sqrtl(3.0L), 24, -126), 1.001);
  EXPECT_EQ(p[2], -8.0f);
  EXPECT_EQ(p[3], 4.0f);
}
#endif

} // namespace
