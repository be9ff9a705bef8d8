// Type promotion (hand-written tables from PyTorch) and broadcasting, both
// through the dtype.h rules and through the eager ops' result dtypes.
#include "runtime_reference.h"

using namespace kiln;
using namespace kt;

namespace {

TEST(Promotion, TensorTensorTableMatchesPyTorch) {
  // torch.promote_types for every pair, rows and columns in this order.
  const DType order[] = {f32, f16, bf16, f64, i32, i64, b8};
  const DType table[7][7] = {
      /* f32  */ {f32, f32, f32, f64, f32, f32, f32},
      /* f16  */ {f32, f16, f32, f64, f16, f16, f16},
      /* bf16 */ {f32, f32, bf16, f64, bf16, bf16, bf16},
      /* f64  */ {f64, f64, f64, f64, f64, f64, f64},
      /* i32  */ {f32, f16, bf16, f64, i32, i64, i32},
      /* i64  */ {f32, f16, bf16, f64, i64, i64, i64},
      /* b8   */ {f32, f16, bf16, f64, i32, i64, b8},
  };
  for (int a = 0; a < 7; ++a)
    for (int b = 0; b < 7; ++b)
      EXPECT_EQ(promote_types(order[a], order[b]), table[a][b])
          << dtype_name(order[a]) << " with " << dtype_name(order[b]);
}

TEST(Promotion, WeakScalarsMatchPyTorch) {
  // tensor dtype, Python number kind (f64 = float, i64 = int) -> result.
  struct Row {
    DType tensor, scalar, result;
  } rows[] = {
      {f32, f64, f32}, {f16, f64, f16}, {bf16, f64, bf16}, {f64, f64, f64},
      {i32, f64, f32}, {i64, f64, f32}, {b8, f64, f32},   {f32, i64, f32},
      {f16, i64, f16}, {i32, i64, i32}, {i64, i64, i64},  {b8, i64, i64},
  };
  for (const Row &r : rows)
    EXPECT_EQ(promote_with_scalar(r.tensor, r.scalar), r.result)
        << dtype_name(r.tensor) << " with a " << dtype_name(r.scalar)
        << " number";
  EXPECT_EQ(to_floating(i32), f32);
  EXPECT_EQ(to_floating(b8), f32);
  EXPECT_EQ(to_floating(bf16), bf16);
}

class PromotionOn : public kt::DeviceTest {};

TEST_P(PromotionOn, EagerResultDtypes) {
  Device d = dev();
  Tensor xf32 = ones({2}, f32, d), xf16 = ones({2}, f16, d),
         xbf = ones({2}, bf16, d), xf64 = ones({2}, f64, d),
         xi32 = ones({2}, i32, d), xi64 = ones({2}, i64, d),
         xb = ones({2}, b8, d);
  EXPECT_EQ((xi32 + xf16).dtype(), f16);
  EXPECT_EQ((xf16 + xbf).dtype(), f32);
  EXPECT_EQ((xb + xb).dtype(), b8);
  EXPECT_EQ((xb + xi32).dtype(), i32);
  EXPECT_EQ((xi32 * 2.5).dtype(), f32);
  EXPECT_EQ((2.5 * xi64).dtype(), f32);
  EXPECT_EQ((xi32 * 2).dtype(), i32);
  EXPECT_EQ((xb + 1).dtype(), i64);
  EXPECT_EQ((xf16 * 2.5).dtype(), f16);
  EXPECT_EQ((xbf * int64_t(3)).dtype(), bf16);
  EXPECT_EQ((xi32 / xi32).dtype(), f32);
  EXPECT_EQ((xi64 / 2).dtype(), f32);
  EXPECT_EQ((xf64 / 2).dtype(), f64);
  EXPECT_EQ(sin(xi64).dtype(), f32);
  EXPECT_EQ(sigmoid(xb).dtype(), f32);
  EXPECT_EQ(exp(xf16).dtype(), f16);
  EXPECT_EQ(abs(xi32).dtype(), i32);
  EXPECT_EQ(relu(xi64).dtype(), i64);
  EXPECT_EQ((xi32 > xf16).dtype(), b8);
  EXPECT_EQ((xf64 == 1).dtype(), b8);
  EXPECT_EQ(pow(xi32, 2).dtype(), i32);
  EXPECT_EQ(pow(xi32, 0.5).dtype(), f32);
  EXPECT_EQ(pow(2, xf16).dtype(), f16);
  EXPECT_EQ(maximum(xi32, xf64).dtype(), f64);
  EXPECT_EQ(clamp(xi32, 0, 2.5).dtype(), f32);
  EXPECT_EQ(clamp(xi32, 0, 2).dtype(), i32);
  EXPECT_EQ(clamp(xf16, xf32, 1).dtype(), f32);
  EXPECT_EQ(where(xb, xi32, xf64).dtype(), f64);
  EXPECT_EQ(where(xb, xi32, 2.5).dtype(), f32);
  EXPECT_EQ(where(xb, xf16, 2).dtype(), f16);
  EXPECT_EQ(where(xb, 1.0, 0.0).dtype(), f32);
  EXPECT_EQ(where(xb, 1, 0).dtype(), i64);
  // A 0-d tensor operand is a tensor (strong), not a weak scalar.
  Tensor zf64 = full({}, 2.0, f64, d);
  EXPECT_EQ((xi32 + zf64).dtype(), f64);
  EXPECT_EQ((xf16 * zf64).dtype(), f64);
}

TEST_P(PromotionOn, WhereAndClampValues) {
  Device d = dev();
  Tensor c = from_vector(std::vector<bool>{true, false, true}, {3}, d);
  Tensor a = from_vector(std::vector<int32_t>{1, 2, 3}, {3}, d);
  EXPECT_EQ(kt::values(where(c, a, 2.5)), (std::vector<double>{1, 2.5, 3}));
  EXPECT_EQ(kt::values(where(c, 1.0, 0.0)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(kt::values(where(c, 7, a)), (std::vector<double>{7, 2, 7}));
  EXPECT_EQ(kt::values(clamp(a, 2, 2.5)), (std::vector<double>{2, 2, 2.5}));
  Tensor x = from_vector(std::vector<float>{-1, 0.5, NAN, 9}, {4}, d);
  std::vector<double> r = kt::values(clamp(x, 0.0, 1.0));
  EXPECT_EQ(r[0], 0.0);
  EXPECT_EQ(r[1], 0.5);
  EXPECT_TRUE(std::isnan(r[2])) << "clamp propagates NaN";
  EXPECT_EQ(r[3], 1.0);
}

TEST(Broadcast, ShapesAsPyTorch) {
  auto bc = [](Dims a, Dims b, Dims want) {
    Dims out;
    ASSERT_TRUE(rt::broadcast_shapes({&a, &b}, out)) << a.str() << " " << b.str();
    EXPECT_EQ(out, want) << a.str() << " with " << b.str();
  };
  bc({2, 3}, {3}, {2, 3});
  bc({4, 1}, {1, 5}, {4, 5});
  bc({1}, {}, {1});
  bc({}, {}, {});
  bc({0, 3}, {1, 3}, {0, 3});
  bc({2, 1, 3}, {4, 1}, {2, 4, 3});
  bc({5, 1, 1, 1, 1, 1, 1, 2}, {7, 1}, {5, 1, 1, 1, 1, 1, 7, 2});
  Dims out, a{2, 3}, b{4}, c{0}, d{2}, e{3, 1}, f{1, 4}, g{2, 4};
  EXPECT_FALSE(rt::broadcast_shapes({&a, &b}, out));
  EXPECT_FALSE(rt::broadcast_shapes({&c, &d}, out));
  EXPECT_TRUE(rt::broadcast_shapes({&e, &f}, out));
  EXPECT_EQ(out, (Dims{3, 4}));
  EXPECT_FALSE(rt::broadcast_shapes({&e, &f, &g}, out));
}

TEST_P(PromotionOn, EagerBroadcasting) {
  Device d = dev();
  Tensor col = from_vector(std::vector<float>{10, 20, 30}, {3, 1}, d);
  Tensor row = from_vector(std::vector<float>{1, 2}, {2}, d);
  Tensor s = col + row;
  EXPECT_EQ(s.sizes(), (Dims{3, 2}));
  EXPECT_EQ(kt::values(s), (std::vector<double>{11, 12, 21, 22, 31, 32}));
  Tensor z = zeros({0, 2}, f32, d) + row;
  EXPECT_EQ(z.sizes(), (Dims{0, 2}));
  EXPECT_KILN_ERROR(zeros({2, 3}, f32, d) + zeros({4}, f32, d),
                    "kiln::add: shapes [2, 3] and [4] do not broadcast");
  EXPECT_KILN_ERROR(where(zeros({2}, b8, d), zeros({3}, f32, d), zeros({4}, f32, d)),
                    "kiln::where: shapes [2], [3] and [4] do not broadcast");
}

INSTANTIATE_TEST_SUITE_P(Devices, PromotionOn, KT_DEVICES);

} // namespace
