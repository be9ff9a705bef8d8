// Eager reductions (sum, mean, amax, amin, argmax, var, logsumexp) against
// the float64 model of runtime_reduce_reference.h: every dtype where the op
// applies, 0-d to 4-d shapes, rows of length 1 to 100000, many rows and one,
// reductions over the last, a middle and the first dim, negative dims,
// keepdim on and off, whole-tensor forms, strided inputs. The CUDA twin runs
// the same cases on the GPU.
#include "runtime_reduce_reference.h"

#include <kiln/scalar.h>

#include <random>

using namespace kiln;
using namespace kt;

namespace {

class ReduceOps : public DeviceTest {};

constexpr std::optional<int> kAll = std::nullopt;

Tensor run_red(Red op, const Tensor &x, std::optional<int> dim, bool keepdim,
               int64_t correction = 1) {
  switch (op) {
  case Red::Sum: return dim ? sum(x, *dim, keepdim) : sum(x);
  case Red::Mean: return dim ? mean(x, *dim, keepdim) : mean(x);
  case Red::Amax: return dim ? amax(x, *dim, keepdim) : amax(x);
  case Red::Amin: return dim ? amin(x, *dim, keepdim) : amin(x);
  case Red::Argmax: return dim ? argmax(x, *dim, keepdim) : argmax(x);
  case Red::Var: return dim ? var(x, *dim, keepdim, correction) : var(x);
  case Red::Logsumexp: return dim ? logsumexp(x, *dim, keepdim) : logsumexp(x);
  }
  return {};
}

DType result_dtype(Red op, DType in) {
  if (op == Red::Argmax || (op == Red::Sum && !is_floating(in)))
    return i64;
  return in;
}

// Rounding allowance in accumulation epsilons (see close_all); negative:
// the result must be exact.
double slack(Red op) {
  return op == Red::Amax || op == Red::Amin || op == Red::Argmax ? -1
         : op == Red::Var                                         ? 64
                                                                  : 16;
}

struct Case {
  Dims shape;
  std::optional<int> dim;
  bool keepdim = false;
};

// Shapes and dims covering each kernel: short rows (a warp per row), long
// rows (a block per row), few long rows (split), columns (inner > 1) with
// few or many outputs, lines of length 1, whole tensors.
const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {{7}, 0},           {{7}, -1, true},      {{7}, kAll},
      {{1}, 0},           {{1}, kAll},          {{1000}, 0},
      {{5000}, -1},       {{100000}, 0},        {{100000}, kAll},
      {{37, 19}, 1},      {{37, 19}, 0, true},  {{37, 19}, -1, true},
      {{37, 19}, -2},     {{37, 19}, kAll},     {{3000, 1}, 1},
      {{3000, 1}, 0},     {{1, 5000}, 1, true}, {{1, 5000}, 0},
      {{20000, 7}, 1},    {{20000, 7}, 0},      {{300, 600}, 1},
      {{300, 600}, 0},    {{5, 300, 17}, 1},    {{5, 300, 17}, 0, true},
      {{5, 300, 17}, 2},  {{5, 300, 17}, -1},   {{5, 300, 17}, -2, true},
      {{2, 20000, 3}, 1}, {{4, 100000}, 1},     {{3, 1, 4, 5}, 1},
      {{2, 3, 4, 5}, 2},  {{2, 3, 4, 5}, kAll}, {{}, kAll},
      {{}, 0},            {{}, -1, true},
  };
  return c;
}

void check(Device dev, Red op, DType dt, const Case &c, int64_t correction = 1) {
  SCOPED_TRACE(std::string(red_name(op)) + " of " +
               describe(c.shape, dt, c.dim, c.keepdim) +
               " correction=" + std::to_string(correction));
  int64_t n = 1;
  for (int64_t s : c.shape)
    n *= s;
  std::vector<double> vals = random_values(dt, n);
  Tensor x = make_tensor(vals, c.shape, dt, dev);
  poison_output(reduced_shape(c.shape, c.dim, c.keepdim), result_dtype(op, dt), dev);
  reset_stats();
  Tensor y = run_red(op, x, c.dim, c.keepdim, correction);
  uint64_t launches = stats().kernel_launches;
  ASSERT_EQ(y.dtype(), result_dtype(op, dt));
  ASSERT_EQ(y.sizes(), reduced_shape(c.shape, c.dim, c.keepdim));
  ASSERT_EQ(y.device(), dev);
  RefOut want = ref_reduce(op, vals, geometry(c.shape, c.dim), correction);
  EXPECT_TRUE(close_all(values(y), want, dt, y.dtype(), slack(op)));
  // One kernel; on CUDA a split reduction takes two per pass.
  if (dev.is_cpu())
    EXPECT_EQ(launches, 1u);
  else
    EXPECT_TRUE(launches == 1 || launches == 2 || launches == 4) << launches;
}

void check_all(Device dev, Red op, std::initializer_list<DType> dtypes) {
  for (DType dt : dtypes)
    for (const Case &c : cases())
      check(dev, op, dt, c);
}

const std::initializer_list<DType> kFloats = {f32, f16, bf16, f64};
const std::initializer_list<DType> kAllTypes = {f32, f16, bf16, f64, i32, i64, b8};

TEST_P(ReduceOps, Sum) { check_all(dev(), Red::Sum, kAllTypes); }
TEST_P(ReduceOps, Mean) { check_all(dev(), Red::Mean, kFloats); }
TEST_P(ReduceOps, Amax) { check_all(dev(), Red::Amax, kAllTypes); }
TEST_P(ReduceOps, Amin) { check_all(dev(), Red::Amin, kAllTypes); }
TEST_P(ReduceOps, Argmax) { check_all(dev(), Red::Argmax, kAllTypes); }
TEST_P(ReduceOps, Var) { check_all(dev(), Red::Var, kFloats); }
TEST_P(ReduceOps, Logsumexp) { check_all(dev(), Red::Logsumexp, kFloats); }

TEST_P(ReduceOps, VarCorrection) {
  for (DType dt : {f32, f64, bf16})
    for (int64_t corr : {0, 1, 2, 3}) {
      check(dev(), Red::Var, dt, {{6, 40}, 1}, corr);
      check(dev(), Red::Var, dt, {{40, 6}, 0}, corr);
      check(dev(), Red::Var, dt, {{5, 2}, 1}, corr); // n - correction <= 0
      check(dev(), Red::Var, dt, {{5, 1}, 1}, corr);
    }
}

// Non-contiguous inputs are made contiguous first (one more launch).
TEST_P(ReduceOps, StridedInputs) {
  for (DType dt : {f32, f16, i32}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> vals = random_values(dt, 19 * 37);
    Tensor t = make_tensor(vals, {19, 37}, dt, dev()).transpose(0, 1); // [37, 19]
    ASSERT_FALSE(t.is_contiguous());
    std::vector<double> logical(vals.size());
    for (int64_t i = 0; i < 37; ++i)
      for (int64_t j = 0; j < 19; ++j)
        logical[size_t(i * 19 + j)] = vals[size_t(j * 37 + i)];
    for (int d : {0, 1}) {
      reset_stats();
      Tensor y = sum(t, d);
      EXPECT_EQ(stats().kernel_launches, 2u);
      EXPECT_TRUE(close_all(values(y), ref_reduce(Red::Sum, logical, geometry({37, 19}, d)),
                            dt, y.dtype(), 16));
      Tensor a = argmax(t, d, true);
      EXPECT_TRUE(close_all(values(a), ref_reduce(Red::Argmax, logical, geometry({37, 19}, d)),
                            dt, i64, -1));
    }
    // Every other column: a sliced view.
    Tensor s = make_tensor(vals, {19, 37}, dt, dev()).slice(1, 0, 37, 2); // [19, 19]
    std::vector<double> sl;
    for (int64_t i = 0; i < 19; ++i)
      for (int64_t j = 0; j < 37; j += 2)
        sl.push_back(vals[size_t(i * 37 + j)]);
    Tensor m = amax(s, -1);
    EXPECT_TRUE(close_all(values(m), ref_reduce(Red::Amax, sl, geometry({19, 19}, 1)), dt, dt, -1));
  }
}

// A float sum of 10^6 positive values: a running f32 sum drifts by about
// 1e-5 relative; the pairwise (CPU) and tree (CUDA) sums stay within 1e-6.
TEST_P(ReduceOps, LongFloatSumsStayAccurate) {
  const int64_t n = 1000000;
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> vals(n);
  for (auto &v : vals)
    v = double(float(u(reduce_rng())));
  long double exact = 0;
  float naive = 0;
  for (double v : vals)
    exact += v, naive += float(v);
  const double tol = 1e-6 * double(exact);
  ASSERT_GT(std::fabs(double(naive) - double(exact)), tol)
      << "the tolerance must reject a naive running f32 sum";
  Tensor x = make_tensor(vals, {n}, f32, dev());
  EXPECT_NEAR(sum(x).item<double>(), double(exact), tol);
  EXPECT_NEAR(sum(x, 0).item<double>(), double(exact), tol);
  EXPECT_NEAR(mean(x).item<double>(), double(exact) / n, tol / n);
  // The same values as one column ([n, 1] over dim 0) and as 2 rows.
  EXPECT_NEAR(sum(x.view({n, 1}), 0).item<double>(), double(exact), tol);
  std::vector<double> halves = values(sum(x.view({2, n / 2}), 1));
  long double h0 = 0, h1 = 0;
  for (int64_t i = 0; i < n / 2; ++i)
    h0 += vals[size_t(i)], h1 += vals[size_t(i + n / 2)];
  EXPECT_NEAR(halves[0], double(h0), tol);
  EXPECT_NEAR(halves[1], double(h1), tol);
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceOps, KT_DEVICES);

// sum_sq_dev's accumulator (the compiled var and layer norm), as the
// kernels use it: elements strided over 256 threads, then merged by a
// tree. Against the float64 sum of squared deviations of the same f32
// values, over lengths and offsets (mean / deviation up to 10^4): within
// 1e-6 everywhere, where f32's two passes in order lose up to 1e-2 (the
// check that the bound can fail: a plain Welford without the shift lost
// 1e-3 at offset 10^4 over 7 elements).
TEST(MomentAcc, ShiftedWelfordMatchesFloat64) {
  using scalar::MomentAcc;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 1);
  double worst_two_pass = 0;
  for (double offset : {0.0, 10.0, 1e4})
    for (int n : {1, 2, 7, 64, 1000, 32000})
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float &v : x)
          v = float(offset + nd(rng));
        long double m = 0, ref = 0;
        for (float v : x)
          m += v;
        m /= n;
        for (float v : x)
          ref += (v - m) * (v - m);
        constexpr int kThreads = 256;
        std::vector<MomentAcc<float>> acc(kThreads,
                                          scalar::init_sum_sq_dev<float>());
        for (int i = 0; i < n; ++i)
          acc[i % kThreads] = scalar::combine_sum_sq_dev(acc[i % kThreads], x[size_t(i)]);
        for (int s = 1; s < kThreads; s *= 2)
          for (int i = 0; i + s < kThreads; i += 2 * s)
            acc[i] = scalar::combine_sum_sq_dev(acc[i], acc[i + s]);
        ASSERT_EQ(acc[0].n, float(n));
        const double tol = 1e-6 * double(ref) + 1e-30;
        EXPECT_NEAR(acc[0].m2, double(ref), tol)
            << "offset " << offset << ", " << n << " elements";
        float s = 0, q = 0;
        for (float v : x)
          s += v;
        const float mf = s / float(n);
        for (float v : x)
          q += (v - mf) * (v - mf);
        if (ref > 0)
          worst_two_pass = std::max(worst_two_pass,
                                    std::fabs(double(q) - double(ref)) / double(ref));
      }
  EXPECT_GT(worst_two_pass, 1e-6) << "the bound must reject f32's two passes";
}

} // namespace
