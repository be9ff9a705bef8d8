// Eager row-wise ops (softmax, log_softmax over any dim; layer_norm and
// rms_norm over the last dim, with and without weight and bias) against the
// float64 model of runtime_reduce_reference.h, in every floating dtype, for
// rows of length 1 to 100000, many rows and one. The CUDA twin runs the same
// cases on the GPU.
#include "runtime_reduce_reference.h"

using namespace kiln;
using namespace kt;

namespace {

class ReduceRows : public DeviceTest {};

const std::initializer_list<DType> kFloats = {f32, f16, bf16, f64};

struct Case {
  Dims shape;
  int dim = -1;
};

const std::vector<Case> &softmax_cases() {
  static const std::vector<Case> c = {
      {{7}, 0},          {{1}, 0},           {{}, 0},          {{37, 19}, 1},
      {{37, 19}, 0},     {{37, 19}, -2},     {{3000, 1}, 1},   {{1, 5000}, 1},
      {{1, 5000}, 0},    {{300, 600}, -1},   {{20000, 7}, 1},  {{20000, 7}, 0},
      {{4, 100000}, 1},  {{5, 300, 17}, 1},  {{5, 300, 17}, 0}, {{5, 300, 17}, 2},
      {{2, 9000, 3}, 1},
  };
  return c;
}

const std::vector<Dims> &norm_shapes() {
  static const std::vector<Dims> s = {{7},        {1, 1},     {37, 19},
                                      {3000, 1},  {1, 5000},  {300, 600},
                                      {20000, 7}, {2, 100000}, {5, 3, 17}};
  return s;
}

int64_t numel_of(const Dims &s) {
  int64_t n = 1;
  for (int64_t v : s)
    n *= v;
  return n;
}

void check_softmax(Device dev, Row op, DType dt, const Case &c) {
  SCOPED_TRACE(std::string(row_name(op)) + " of " +
               describe(c.shape, dt, c.dim, false));
  std::vector<double> vals = random_values(dt, numel_of(c.shape));
  Tensor x = make_tensor(vals, c.shape, dt, dev);
  poison_output(c.shape, dt, dev);
  reset_stats();
  Tensor y = op == Row::Softmax ? softmax(x, c.dim) : log_softmax(x, c.dim);
  EXPECT_EQ(stats().kernel_launches, 1u);
  ASSERT_EQ(y.dtype(), dt);
  ASSERT_EQ(y.sizes(), c.shape);
  RefOut want = ref_rowwise(op, vals, geometry(c.shape, c.dim), {}, {}, 0);
  EXPECT_TRUE(close_all(values(y), want, dt, dt, 16));
}

TEST_P(ReduceRows, Softmax) {
  for (DType dt : kFloats)
    for (const Case &c : softmax_cases())
      check_softmax(dev(), Row::Softmax, dt, c);
}

TEST_P(ReduceRows, LogSoftmax) {
  for (DType dt : kFloats)
    for (const Case &c : softmax_cases())
      check_softmax(dev(), Row::LogSoftmax, dt, c);
}

// affine: 0 none, 1 weight only, 2 weight and bias (layer_norm), bias only.
void check_norm(Device dev, Row op, DType dt, const Dims &shape, int affine,
                double eps) {
  SCOPED_TRACE(std::string(row_name(op)) + " of " + dtype_name(dt) +
               shape.str() + " affine=" + std::to_string(affine) +
               " eps=" + std::to_string(eps));
  int64_t N = shape[shape.rank() - 1];
  std::vector<double> vals = random_values(dt, numel_of(shape));
  for (auto &v : vals) // an offset mean, so that centring matters
    v = round_to(dt, v + 3);
  Tensor x = make_tensor(vals, shape, dt, dev);
  std::vector<double> w, b;
  Tensor tw, tb;
  if (affine == 1 || affine == 2) {
    w = random_values(dt, N, 1);
    tw = make_tensor(w, {N}, dt, dev);
  }
  if (affine >= 2) {
    b = random_values(dt, N, 1);
    tb = make_tensor(b, {N}, dt, dev);
  }
  poison_output(shape, dt, dev);
  reset_stats();
  Tensor y = op == Row::LayerNorm ? layer_norm(x, tw, tb, eps) : rms_norm(x, tw, eps);
  EXPECT_EQ(stats().kernel_launches, 1u);
  ASSERT_EQ(y.dtype(), dt);
  ASSERT_EQ(y.sizes(), shape);
  double used_eps = eps;
  if (eps < 0) // torch.finfo(dtype).eps
    used_eps = dt == f16 ? 0x1p-10 : dt == bf16 ? 0x1p-7 : dt == f64 ? 0x1p-52 : 0x1p-23;
  RefOut want = ref_rowwise(op, vals, geometry(shape, shape.rank() - 1), w, b, used_eps);
  EXPECT_TRUE(close_all(values(y), want, dt, dt, 64));
}

TEST_P(ReduceRows, LayerNorm) {
  for (DType dt : kFloats)
    for (const Dims &s : norm_shapes())
      for (int affine : {0, 1, 2, 3})
        check_norm(dev(), Row::LayerNorm, dt, s, affine, affine == 3 ? 0.5 : 1e-5);
}

TEST_P(ReduceRows, RmsNorm) {
  for (DType dt : kFloats)
    for (const Dims &s : norm_shapes())
      for (int affine : {0, 1})
        for (double eps : {-1.0, 1e-6})
          check_norm(dev(), Row::RmsNorm, dt, s, affine, eps);
}

// rms_norm's default eps is the dtype's machine epsilon: visible when the
// mean square is of its order.
TEST_P(ReduceRows, RmsNormDefaultEpsIsMachineEpsilon) {
  Tensor x = from_vector(std::vector<double>{3e-4, -3e-4}).to(f32).to(dev());
  double ms = double(float(3e-4)) * double(float(3e-4));
  double want = double(float(3e-4)) / std::sqrt(ms + 0x1p-23);
  EXPECT_NEAR(rms_norm(x, Tensor()).to_vector<double>()[0], want, 1e-5 * want);
  double want6 = double(float(3e-4)) / std::sqrt(ms + 1e-6);
  EXPECT_NEAR(rms_norm(x, Tensor(), 1e-6).to_vector<double>()[0], want6, 1e-5 * want6);
  EXPECT_GT(std::fabs(want - want6), 1e-2); // the two eps really differ
}

// Weight and bias may be strided views.
TEST_P(ReduceRows, StridedWeightAndInput) {
  std::vector<double> vals = random_values(f32, 8 * 24), wb = random_values(f32, 48, 1);
  Tensor x = make_tensor(vals, {24, 8}, f32, dev()).transpose(0, 1); // [8, 24]
  Tensor wt = make_tensor(wb, {48}, f32, dev());
  Tensor w = wt.slice(0, 0, 48, 2), b = wt.slice(0, 1, 48, 2);
  std::vector<double> logical(vals.size()), wv, bv;
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 24; ++j)
      logical[size_t(i * 24 + j)] = vals[size_t(j * 8 + i)];
  for (int64_t j = 0; j < 24; ++j)
    wv.push_back(wb[size_t(2 * j)]), bv.push_back(wb[size_t(2 * j + 1)]);
  reset_stats();
  Tensor y = layer_norm(x, w, b, 1e-5);
  EXPECT_EQ(stats().kernel_launches, 2u); // x made contiguous, then the norm
  RefOut want = ref_rowwise(Row::LayerNorm, logical, geometry({8, 24}, 1), wv, bv, 1e-5);
  EXPECT_TRUE(close_all(values(y), want, f32, f32, 64));
  Tensor s = softmax(x, 0);
  EXPECT_TRUE(close_all(values(s), ref_rowwise(Row::Softmax, logical, geometry({8, 24}, 0), {}, {}, 0),
                        f32, f32, 16));
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceRows, KT_DEVICES);

} // namespace
