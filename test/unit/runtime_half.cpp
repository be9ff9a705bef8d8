// half and bfloat16 conversions of kiln/scalar.h against the compiler's
// _Float16 and an independent bfloat16 rounding; the CUDA twin checks the
// device conversions (cast kernels) bit for bit against the host ones.
#include "runtime_reference.h"

#include <kiln/scalar.h>

#include <random>

using namespace kiln;
using namespace kt;

namespace {

uint16_t f16_bits(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
_Float16 f16_from_bits(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return h;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Half, EveryBitPatternWidensExactlyAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    half h{uint16_t(b)};
    float f = scalar::to_float(h);
    float want = float(f16_from_bits(uint16_t(b)));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      half back = scalar::to_half(f);
      EXPECT_TRUE(std::isnan(scalar::to_float(back))) << std::hex << b;
      EXPECT_EQ(back.bits & 0x8000u, b & 0x8000u) << "NaN sign " << std::hex << b;
      continue;
    }
    ASSERT_EQ(bits_of(f), bits_of(want)) << "half 0x" << std::hex << b;
    ASSERT_EQ(scalar::to_half(f).bits, b) << "round trip of 0x" << std::hex << b;
  }
}

// float -> half must round to nearest even exactly as _Float16 does.
void expect_float_to_half(float f) {
  uint16_t want = f16_bits(_Float16(f));
  uint16_t got = scalar::to_half(f).bits;
  if (std::isnan(f)) {
    EXPECT_EQ(got & 0x7c00u, 0x7c00u);
    EXPECT_NE(got & 0x03ffu, 0u) << "NaN must stay NaN";
    return;
  }
  ASSERT_EQ(got, want) << "float " << f << " (0x" << std::hex << bits_of(f)
                       << ")";
}

TEST(Half, FloatToHalfRoundsAsFloat16OnEdges) {
  std::vector<float> edges = {
      0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, -65504.0f, 65519.996f, 65520.0f,
      65536.0f, 1e10f, INFINITY, -INFINITY, NAN, -NAN,
      std::ldexp(1.0f, -24), std::ldexp(1.0f, -25), std::ldexp(3.0f, -26),
      std::ldexp(1.0f, -26), std::ldexp(1.0f, -14), std::ldexp(1.0f, -15),
      std::ldexp(1023.0f, -24), std::ldexp(1.0f, -149), 1e-30f,
      float_of(0x387fe000u), float_of(0x387ff000u), float_of(0x38800000u),
      float_of(0x477fe000u), float_of(0x477fefffu), float_of(0x477ff000u),
      float_of(0x7f800001u), float_of(0xffc00000u)};
  // Ties: the exact midpoints between neighbouring halfs (even and odd).
  for (uint32_t b = 0; b < 0x7bffu; b += 97) {
    double lo = double(f16_from_bits(uint16_t(b)));
    double hi = double(f16_from_bits(uint16_t(b + 1)));
    float mid = float((lo + hi) / 2);
    edges.push_back(mid);
    edges.push_back(-mid);
    edges.push_back(std::nextafter(mid, 0.0f));
    edges.push_back(std::nextafter(mid, INFINITY));
  }
  for (float f : edges)
    expect_float_to_half(f);
}

TEST(Half, FloatToHalfRoundsAsFloat16OnRandomFloats) {
  std::mt19937 r(7);
  for (int i = 0; i < 2000000; ++i) {
    float f = float_of(r());
    expect_float_to_half(f);
    if (HasFatalFailure())
      return;
  }
  // Dense sampling of the half range, where rounding matters most.
  std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
  for (int i = 0; i < 500000; ++i)
    expect_float_to_half(u(r));
  std::uniform_real_distribution<float> tiny(-1e-4f, 1e-4f);
  for (int i = 0; i < 500000; ++i)
    expect_float_to_half(tiny(r));
}

TEST(BFloat16, EveryBitPatternWidensExactly) {
  for (uint32_t b = 0; b < 65536; ++b) {
    float f = scalar::to_float(bfloat16{uint16_t(b)});
    ASSERT_EQ(bits_of(f), b << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(scalar::to_bfloat16(f).bits, b) << std::hex << b;
    }
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNaN) {
  // Ties go to even: 1 + 2^-8 lies between 1 and 1 + 2^-7.
  EXPECT_EQ(scalar::to_bfloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80u);
  EXPECT_EQ(scalar::to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82u);
  EXPECT_EQ(scalar::to_bfloat16(float_of(0x3f808001u)).bits, 0x3f81u);
  EXPECT_EQ(scalar::to_bfloat16(float_of(0x7f7fffffu)).bits, 0x7f80u); // -> inf
  EXPECT_EQ(scalar::to_bfloat16(INFINITY).bits, 0x7f80u);
  EXPECT_EQ(scalar::to_bfloat16(-0.0f).bits, 0x8000u);
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    uint16_t got = scalar::to_bfloat16(float_of(nan)).bits;
    EXPECT_EQ(got & 0x7f80u, 0x7f80u) << std::hex << nan;
    EXPECT_NE(got & 0x007fu, 0u) << "NaN 0x" << std::hex << nan << " became inf";
    EXPECT_EQ(got & 0x8000u, (nan >> 16) & 0x8000u);
  }
  std::mt19937 r(11);
  for (int i = 0; i < 1000000; ++i) {
    float f = float_of(r());
    if (std::isnan(f))
      continue;
    float got = scalar::to_float(scalar::to_bfloat16(f));
    ASSERT_EQ(double(got), kt::round_bf16(double(f))) << f;
  }
}

// The CUDA twin: casts on the device give the host's bits.
class HalfCast : public kt::DeviceTest {};

TEST_P(HalfCast, CastKernelsMatchHostConversions) {
  std::mt19937 r(3);
  std::vector<float> fs;
  for (int i = 0; i < 100000; ++i)
    fs.push_back(float_of(r()));
  for (float f : {0.0f, -0.0f, 65504.0f, 65520.0f, std::ldexp(1.0f, -25),
                  std::ldexp(3.0f, -26), NAN, INFINITY, -INFINITY})
    fs.push_back(f);
  Tensor x = from_vector(fs, {int64_t(fs.size())}, dev());
  for (DType dt : {f16, bf16}) {
    std::vector<float> back = x.to(dt).to(f32).to_vector<float>();
    for (size_t i = 0; i < fs.size(); ++i) {
      float want = dt == f16 ? scalar::to_float(scalar::to_half(fs[i]))
                             : scalar::to_float(scalar::to_bfloat16(fs[i]));
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(back[i])) << fs[i];
        continue;
      }
      ASSERT_EQ(bits_of(back[i]), bits_of(want))
          << dtype_name(dt) << " of " << fs[i] << " (0x" << std::hex
          << bits_of(fs[i]) << ")";
    }
  }
  // Every half and bf16 pattern widens the same way on the device.
  std::vector<int32_t> pats(65536);
  for (int i = 0; i < 65536; ++i)
    pats[i] = i;
  for (DType dt : {f16, bf16}) {
    // Build the 16-bit patterns on the host, then move them.
    Tensor h = empty({65536}, dt);
    for (int i = 0; i < 65536; ++i)
      std::memcpy(static_cast<char *>(h.data_ptr()) + 2 * i, &pats[i], 2);
    std::vector<float> wide = h.to(dev()).to(f32).to_vector<float>();
    for (int i = 0; i < 65536; ++i) {
      float want = dt == f16 ? scalar::to_float(half{uint16_t(i)})
                             : scalar::to_float(bfloat16{uint16_t(i)});
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(wide[i]));
      else
        ASSERT_EQ(bits_of(wide[i]), bits_of(want)) << std::hex << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, HalfCast, KT_DEVICES);

} // namespace
