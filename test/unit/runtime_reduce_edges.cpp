// Eager reductions and row-wise ops at the edges: NaN and infinities, empty
// reductions, error messages, launch counts and logs, deterministic CUDA
// results. Every CPU test has a CUDA twin.
#include "runtime_reduce_reference.h"

#include <omp.h>

#include <cstring>

using namespace kiln;
using namespace kt;
using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

namespace {

class ReduceEdges : public DeviceTest {
protected:
  Tensor vec(std::vector<double> v, DType dt = f32) {
    return from_vector(v).to(dt).to(dev());
  }
};

void expect_values(const Tensor &t, const std::vector<double> &want) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(same_value(got[i], want[i]))
        << "[" << i << "] got " << got[i] << " want " << want[i];
}

TEST_P(ReduceEdges, NanPropagatesThroughAmaxAmin) {
  for (DType dt : {f32, f16, bf16, f64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = vec({1, NAN, 3, -INFINITY}, dt);
    expect_values(amax(x), {NAN});
    expect_values(amin(x), {NAN});
    expect_values(amax(vec({1, INFINITY, 3}, dt)), {INFINITY});
    expect_values(amin(vec({1, -INFINITY, 3}, dt)), {-INFINITY});
    // Over dim 0 of [4, 2]: NaN only in column 1.
    Tensor y = vec({1, 2, NAN, 5, 7, NAN, -1, 0}, dt).view({4, 2});
    expect_values(amax(y, 0), {NAN, NAN});
    expect_values(amax(vec({1, 2, 5, 5, 7, NAN, -1, 0}, dt).view({4, 2}), 0), {7, NAN});
    expect_values(amin(vec({1, 2, 5, 5, 7, 9, -1, 0}, dt).view({4, 2}), 0), {-1, 0});
  }
}

TEST_P(ReduceEdges, ArgmaxPicksFirstNanThenFirstMaximum) {
  for (DType dt : {f32, f16, f64}) {
    SCOPED_TRACE(dtype_name(dt));
    expect_values(argmax(vec({1, NAN, 3, NAN}, dt)), {1});
    expect_values(argmax(vec({1, 5, 5, 2}, dt)), {1});
    expect_values(argmax(vec({-INFINITY, -INFINITY}, dt)), {0});
    expect_values(argmax(vec({-1, INFINITY, 7}, dt)), {1});
    // [2, 3, 2]: argmax over dim 1 (a middle dim) and the flattened index.
    Tensor t = vec({0, 1, 4, 4, 2, 3, 9, 9, 9, 0, 9, NAN}, dt).view({2, 3, 2});
    expect_values(argmax(t, 1), {1, 1, 0, 2});
    expect_values(argmax(t), {11});
    expect_values(argmax(t, -1, true), {1, 0, 1, 0, 0, 1});
    EXPECT_EQ(argmax(t, -1, true).sizes(), (Dims{2, 3, 1}));
  }
  expect_values(argmax(vec({3, -2, 7, 7}, i32)), {2});
  expect_values(argmax(vec({0, 0, 1, 1}, b8)), {2});
}

TEST_P(ReduceEdges, InfinitiesInSumsAndLogsumexp) {
  for (DType dt : {f32, bf16, f64}) {
    SCOPED_TRACE(dtype_name(dt));
    expect_values(sum(vec({INFINITY, 1}, dt)), {INFINITY});
    expect_values(sum(vec({INFINITY, -INFINITY}, dt)), {NAN});
    expect_values(mean(vec({NAN, 1}, dt)), {NAN});
    // logsumexp: all -inf gives -inf, a +inf gives +inf, NaN gives NaN.
    expect_values(logsumexp(vec({-INFINITY, -INFINITY}, dt)), {-INFINITY});
    expect_values(logsumexp(vec({INFINITY, 1}, dt)), {INFINITY});
    expect_values(logsumexp(vec({1, NAN}, dt)), {NAN});
    expect_values(logsumexp(vec({-INFINITY, 0}, dt)), {0});
    Tensor rows = vec({-INFINITY, -INFINITY, 2, INFINITY, 0, -INFINITY}, dt).view({3, 2});
    expect_values(logsumexp(rows, 1), {-INFINITY, INFINITY, 0});
  }
  // A large shift: no overflow.
  std::vector<double> got = values(logsumexp(vec({1000, 1000}, f32)));
  EXPECT_NEAR(got[0], 1000 + std::log(2.0), 1e-3);
}

TEST_P(ReduceEdges, SoftmaxOfInfinities) {
  expect_values(softmax(vec({-INFINITY, 0, -INFINITY}), 0), {0, 1, 0});
  expect_values(log_softmax(vec({-INFINITY, 0}), 0), {-INFINITY, 0});
  // A row of -inf has no maximum to shift by: NaN, as PyTorch.
  expect_values(softmax(vec({-INFINITY, -INFINITY}), 0), {NAN, NAN});
  expect_values(softmax(vec({1, NAN}), 0), {NAN, NAN});
  // Rows of length 1 are all 1 (log: 0), whatever the value.
  expect_values(softmax(vec({-3, 0, 5e30}).view({3, 1}), 1), {1, 1, 1});
  expect_values(log_softmax(vec({-3, 0, 5e30}).view({3, 1}), -1), {0, 0, 0});
  // Large values: shifted by the maximum, no overflow.
  std::vector<double> s = values(softmax(vec({1000, 1000}), 0));
  EXPECT_NEAR(s[0], 0.5, 1e-6);
  EXPECT_NEAR(s[1], 0.5, 1e-6);
}

TEST_P(ReduceEdges, EmptyReductions) {
  Tensor e = zeros({0}, f32, dev());
  expect_values(sum(e), {0});
  expect_values(mean(e), {NAN});
  expect_values(var(e), {NAN});
  expect_values(logsumexp(e), {-INFINITY});
  expect_values(sum(zeros({0}, i32, dev())), {0});
  EXPECT_EQ(sum(zeros({0}, i32, dev())).dtype(), i64);
  // [3, 0] over dim 1: three empty lines; over dim 0: no outputs.
  Tensor m = zeros({3, 0}, f32, dev());
  expect_values(sum(m, 1), {0, 0, 0});
  expect_values(mean(m, 1, true), {NAN, NAN, NAN});
  EXPECT_EQ(mean(m, 1, true).sizes(), (Dims{3, 1}));
  EXPECT_EQ(sum(m, 0).sizes(), (Dims{0}));
  EXPECT_EQ(amax(m, 0).sizes(), (Dims{0}));
  EXPECT_EQ(softmax(m, 1).sizes(), (Dims{3, 0}));
  EXPECT_EQ(layer_norm(zeros({0, 4}, f32, dev()), Tensor(), Tensor()).sizes(), (Dims{0, 4}));
  reset_stats();
  (void)sum(m, 0); // nothing to compute: no launch
  EXPECT_EQ(stats().kernel_launches, 0u);
  EXPECT_KILN_ERROR(amax(e), "kiln::amax: cannot reduce over an empty dimension");
  EXPECT_KILN_ERROR(amin(m, 1), "kiln::amin: cannot reduce over an empty dimension (dim 1 of [3, 0])");
  EXPECT_KILN_ERROR(argmax(m, -1), "kiln::argmax: cannot reduce over an empty dimension");
  EXPECT_KILN_ERROR(argmax(zeros({2, 0, 3}, f32, dev())), "the tensor [2, 0, 3] has no elements");
}

TEST_P(ReduceEdges, ErrorMessages) {
  Tensor x = zeros({2, 3}, f32, dev());
  Tensor xi = zeros({2, 3}, i32, dev());
  EXPECT_KILN_ERROR(sum(x, 2), "kiln::sum: dim 2 is out of range for a tensor of rank 2");
  EXPECT_KILN_ERROR(amax(x, -3, true), "kiln::amax: dim -3 is out of range for a tensor of rank 2");
  EXPECT_KILN_ERROR(softmax(x, 5), "kiln::softmax: dim 5 is out of range for a tensor of rank 2");
  EXPECT_KILN_ERROR(mean(zeros({}, f32, dev()), 1), "kiln::mean: dim 1 is out of range for a tensor of rank 0");
  EXPECT_KILN_ERROR(mean(xi), "kiln::mean: expected a floating-point tensor (f32, f16, bf16, f64), got i32");
  EXPECT_KILN_ERROR(var(xi, 0), "kiln::var: expected a floating-point tensor");
  EXPECT_KILN_ERROR(logsumexp(zeros({3}, b8, dev())), "kiln::logsumexp: expected a floating-point tensor (f32, f16, bf16, f64), got b8");
  EXPECT_KILN_ERROR(softmax(xi, 0), "kiln::softmax: expected a floating-point tensor");
  EXPECT_KILN_ERROR(log_softmax(xi, 0), "kiln::log_softmax: expected a floating-point tensor");
  EXPECT_KILN_ERROR(layer_norm(xi, Tensor(), Tensor()), "kiln::layer_norm: expected a floating-point tensor");
  EXPECT_KILN_ERROR(rms_norm(xi, Tensor()), "kiln::rms_norm: expected a floating-point tensor");
  EXPECT_KILN_ERROR(sum(Tensor()), "kiln::sum: the input tensor is undefined");
  EXPECT_KILN_ERROR(layer_norm(zeros({}, f32, dev()), Tensor(), Tensor()),
                    "kiln::layer_norm: expected a tensor of at least one dim");
  EXPECT_KILN_ERROR(layer_norm(x, zeros({2}, f32, dev()), Tensor()),
                    "kiln::layer_norm: weight must have shape [3] (the last dim of the input [2, 3]), got [2]");
  EXPECT_KILN_ERROR(layer_norm(x, Tensor(), zeros({1, 3}, f32, dev())),
                    "kiln::layer_norm: bias must have shape [3]");
  EXPECT_KILN_ERROR(layer_norm(x, zeros({3}, f64, dev()), Tensor()),
                    "kiln::layer_norm: weight has dtype f64 but the input has f32");
  EXPECT_KILN_ERROR(rms_norm(x, zeros({3}, f16, dev())),
                    "kiln::rms_norm: weight has dtype f16 but the input has f32");
  if (dev().is_cuda())
    EXPECT_KILN_ERROR(rms_norm(x, zeros({3}, f32)),
                      "kiln::rms_norm: weight is on cpu but the input is on cuda:0");
}

TEST_P(ReduceEdges, WholeTensorAndZeroDim) {
  Tensor s = from_vector(std::vector<double>{2.5}, Dims{}).to(dev()); // f64 0-d
  EXPECT_EQ(s.dim(), 0);
  for (Tensor t : {sum(s), sum(s, 0), sum(s, -1, true), mean(s, 0), amax(s)}) {
    EXPECT_EQ(t.dim(), 0);
    expect_values(t, {2.5});
  }
  expect_values(argmax(s, 0), {0});
  expect_values(softmax(s, 0), {1});
  expect_values(var(s), {NAN});
  expect_values(var(s, 0, false, 0), {0});
  // Whole-tensor forms give 0-d results.
  Tensor x = vec({1, 2, 3, 4, 5, 6}).view({2, 3});
  EXPECT_EQ(sum(x).dim(), 0);
  expect_values(sum(x), {21});
  expect_values(mean(x), {3.5});
  expect_values(argmax(x), {5});
  EXPECT_NEAR(var(x).item<double>(), 3.5, 1e-6);
  expect_values(sum(vec({1, 0, 1, 1}, b8)), {3});
  EXPECT_EQ(sum(vec({1, 0, 1, 1}, b8)).dtype(), i64);
  expect_values(amax(vec({1, 0, 1, 1}, b8)), {1});
  EXPECT_EQ(amax(vec({1, 0}, b8)).dtype(), b8);
  expect_values(amin(vec({7, -3, 9}, i32)), {-3});
  EXPECT_EQ(amin(vec({7, -3, 9}, i32)).dtype(), i32);
  // i32 sums accumulate in i64: no overflow at 2^31.
  Tensor big = full({4}, 1e9, i32, dev());
  expect_values(sum(big), {4e9});
}

// One launch per op on a contiguous input (on CUDA a split reduction: two
// per pass); a non-contiguous input adds its copy.
TEST_P(ReduceEdges, LaunchCounts) {
  auto count = [](auto &&fn) {
    reset_stats();
    fn();
    return stats().kernel_launches;
  };
  Tensor rows = randn({64, 1000}, f32, dev());
  // More column tiles (8192 / 32) than any GPU has multiprocessors: not split.
  Tensor cols = randn({1000, 8192}, f32, dev());
  Tensor w = ones({1000}, f32, dev());
  Tensor small = randn({37, 19}, f32, dev());
  EXPECT_EQ(count([&] { sum(rows, 1); }), 1u);
  EXPECT_EQ(count([&] { argmax(rows, 1, true); }), 1u);
  EXPECT_EQ(count([&] { var(rows, 1); }), 1u);
  EXPECT_EQ(count([&] { logsumexp(rows, -1); }), 1u);
  EXPECT_EQ(count([&] { amax(cols, 0); }), 1u);
  EXPECT_EQ(count([&] { mean(cols, 0); }), 1u);
  EXPECT_EQ(count([&] { softmax(rows, 1); }), 1u);
  EXPECT_EQ(count([&] { softmax(cols, 0); }), 1u);
  EXPECT_EQ(count([&] { log_softmax(rows, 1); }), 1u);
  EXPECT_EQ(count([&] { layer_norm(rows, w, w); }), 1u);
  EXPECT_EQ(count([&] { rms_norm(rows, w); }), 1u);
  EXPECT_EQ(count([&] { sum(cols.transpose(0, 1), 1); }), 2u);
  EXPECT_EQ(count([&] { sum(small); }), 1u);
  EXPECT_EQ(count([&] { var(small); }), 1u);
  // Long lines, few outputs: split on CUDA.
  Tensor big = randn({1 << 22}, f32, dev());
  Tensor few = randn({20000, 3}, f32, dev());
  bool split = dev().is_cuda() && rt::multiprocessor_count(dev()) >= 2;
  EXPECT_EQ(count([&] { sum(big); }), split ? 2u : 1u);
  EXPECT_EQ(count([&] { argmax(big); }), split ? 2u : 1u);
  EXPECT_EQ(count([&] { mean(big); }), split ? 2u : 1u);
  EXPECT_EQ(count([&] { var(big); }), split ? 4u : 1u);
  EXPECT_EQ(count([&] { logsumexp(big); }), split ? 4u : 1u);
  EXPECT_EQ(count([&] { sum(few, 0); }), split ? 2u : 1u);
  EXPECT_EQ(count([&] { var(few, 0); }), split ? 4u : 1u);
  EXPECT_EQ(count([&] { softmax(big, 0); }), 1u); // row-wise ops never split
  EXPECT_EQ(count([&] { softmax(few, 0); }), 1u);
}

TEST_P(ReduceEdges, KernelsAreLogged) {
  unsigned saved = rt::g_log_mask;
  rt::g_log_mask = rt::kLogKernels;
  CaptureStderr();
  (void)var(randn({8, 3000}, f16, dev()), 1);
  std::string log = GetCapturedStderr();
  rt::g_log_mask = saved;
  EXPECT_NE(log.find("var"), std::string::npos) << log;
  EXPECT_NE(log.find("f16"), std::string::npos) << log;
}

// Same input, same bits: no atomics, a fixed combine order (split
// reductions included). On the CPU the order does not depend on threads.
TEST_P(ReduceEdges, Deterministic) {
  Tensor big = randn({1 << 21}, f32, dev());
  Tensor rows = randn({3, 70000}, f32, dev());
  Tensor cols = randn({30000, 5}, f32, dev());
  auto bits = [](const Tensor &t) { return values(t); };
  auto same = [](const std::vector<double> &a, const std::vector<double> &b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  };
  std::vector<std::function<Tensor()>> ops = {
      [&] { return sum(big); },          [&] { return mean(big); },
      [&] { return var(big); },          [&] { return logsumexp(big); },
      [&] { return argmax(big); },       [&] { return sum(rows, 1); },
      [&] { return var(cols, 0); },      [&] { return softmax(rows, 1); },
      [&] { return layer_norm(rows, Tensor(), Tensor()); },
      [&] { return sum(cols, 0); },
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<double> a = bits(ops[i]()), b = bits(ops[i]());
    EXPECT_TRUE(same(a, b)) << "op " << i << " differs between runs";
    if (dev().is_cpu()) { // one thread or several: the same bits
      int threads = omp_get_max_threads();
      omp_set_num_threads(1);
      std::vector<double> c = bits(ops[i]());
      omp_set_num_threads(threads);
      EXPECT_TRUE(same(a, c)) << "op " << i << " differs on one thread";
    }
  }
}

// CUDA and CPU agree to rounding on the same inputs.
TEST_P(ReduceEdges, CudaMatchesCpu) {
  if (dev().is_cpu())
    GTEST_SKIP() << "compares the CUDA result with the CPU one";
  Tensor x = randn({257, 1031}, f32);
  Tensor w = randn({1031}, f32), b = randn({1031}, f32);
  // Within tol * (scale + |cpu|); scale: the size of the terms summed.
  auto close = [](const Tensor &g, const Tensor &c, double tol, double scale = 1) {
    std::vector<double> a = values(g), e = values(c);
    for (size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - e[i]) <= tol * (scale + std::fabs(e[i]))))
        return false;
    return a.size() == e.size();
  };
  Tensor xd = x.to(dev()), wd = w.to(dev()), bd = b.to(dev());
  EXPECT_TRUE(close(sum(xd, 1), sum(x, 1), 1e-6, 1031));
  EXPECT_TRUE(close(var(xd, 0), var(x, 0), 1e-5));
  EXPECT_TRUE(close(logsumexp(xd, 1), logsumexp(x, 1), 1e-6));
  EXPECT_TRUE(close(softmax(xd, 0), softmax(x, 0), 1e-6));
  EXPECT_TRUE(close(layer_norm(xd, wd, bd), layer_norm(x, w, b), 1e-5));
  EXPECT_TRUE(close(rms_norm(xd, wd), rms_norm(x, w), 1e-5));
  EXPECT_TRUE(close(argmax(xd, 1), argmax(x, 1), 0));
}

// The comparison helpers of kiln/ops.h (computed on the host).
TEST_P(ReduceEdges, AllcloseAndMaxAbsDiff) {
  Tensor a = vec({1, 2, INFINITY, -0.0});
  Tensor b = vec({1, 2.00001, INFINITY, 0.0}, f64);
  EXPECT_TRUE(allclose(a, b));
  EXPECT_FALSE(allclose(a, b, 0, 1e-6));
  EXPECT_FALSE(allclose(vec({1, INFINITY}), vec({1, -INFINITY})));
  EXPECT_FALSE(allclose(vec({NAN}), vec({NAN}))); // equal_nan = false
  EXPECT_NEAR(max_abs_diff(a, b), 1e-5, 1e-7);
  EXPECT_EQ(max_abs_diff(vec({NAN, 1}), vec({NAN, 1})), 0);
  EXPECT_TRUE(std::isnan(max_abs_diff(vec({NAN, 1}), vec({0, 1}))));
  EXPECT_EQ(max_abs_diff(vec({INFINITY}), vec({1})), INFINITY);
  EXPECT_KILN_ERROR(allclose(vec({1, 2}), vec({1, 2, 3})),
                    "kiln::allclose: shapes [2] and [3] differ");
  EXPECT_KILN_ERROR(max_abs_diff(vec({1}), Tensor()),
                    "kiln::max_abs_diff: the second tensor is undefined");
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceEdges, KT_DEVICES);

} // namespace
