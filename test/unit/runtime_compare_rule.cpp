// The execution tests' comparison rule (test/Inputs/compare.h): what it lets
// through and what it must not.
#include "../Inputs/compare.h"
#include "runtime_test_util.h"

#include <limits>

using kiln::Tensor;
using kiln_compare::difference;

namespace {
Tensor f32(std::vector<float> v) { return kiln::from_vector(v, {int64_t(v.size())}); }
Tensor f64(std::vector<double> v) { return kiln::from_vector(v, {int64_t(v.size())}); }
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
} // namespace

TEST(CompareRule, RelativeToTheLargestFiniteValue) {
  EXPECT_DOUBLE_EQ(difference(f32({1, 2, 4}), f32({1, 2, 4})), 0);
  EXPECT_NEAR(difference(f32({1, 2, 4.5f}), f32({1, 2, 4})), 0.5 / 4, 1e-12);
  // small values: relative to 1, not to themselves
  EXPECT_NEAR(difference(f32({0.25f}), f32({0.125f})), 0.125, 1e-12);
}

TEST(CompareRule, NonFiniteValuesMustMatchExactly) {
  EXPECT_EQ(difference(f32({kNaN, 1}), f32({kNaN, 1})), 0);
  EXPECT_EQ(difference(f32({kInf, -kInf}), f32({kInf, -kInf})), 0);
  EXPECT_EQ(difference(f32({kNaN}), f32({1})), INFINITY);
  EXPECT_EQ(difference(f32({1}), f32({kNaN})), INFINITY);
  EXPECT_EQ(difference(f32({kInf}), f32({-kInf})), INFINITY);
  EXPECT_EQ(difference(f32({265}), f32({kInf})), INFINITY);
  EXPECT_EQ(difference(f32({kInf}), f32({265})), INFINITY);
}

TEST(CompareRule, AnInfinityDoesNotWidenTheToleranceOfTheRest) {
  // The rule before: scaled by the largest |eager|, an eager inf let every
  // other element of the tensor through.
  EXPECT_NEAR(difference(f32({kInf, 1.5f}), f32({kInf, 1})), 0.5, 1e-12);
}

TEST(CompareRule, TheReferenceDecidesWhereEagerOverflowed) {
  // sqrt(sum(x*x)) + 1 over 70000 f16 values: eager rounds the sum to f16
  // (inf), the fused code keeps it in f32 (265.5).
  EXPECT_NEAR(difference(f32({265.5f}), f32({kInf}), f64({265.6})), 0.1 / 265.6, 1e-9);
  EXPECT_GT(difference(f32({1000}), f32({kInf}), f64({265.6})), 1);
  // where the reference overflows too, eager's inf stands
  EXPECT_EQ(difference(f32({265.5f}), f32({kInf}), f64({INFINITY})), INFINITY);
}

TEST(CompareRule, StructureMustMatch) {
  EXPECT_EQ(difference(f32({1, 2}), f32({1})), INFINITY);
  EXPECT_EQ(difference(f32({1}), f64({1})), INFINITY);
  EXPECT_EQ(difference(Tensor(), f32({1})), INFINITY);
  EXPECT_EQ(difference(Tensor(), Tensor()), 0);
}
