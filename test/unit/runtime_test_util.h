// Helpers shared by the runtime's unit tests.
#pragma once

#include <kiln/kiln.h>
#include <kiln/rt.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace kiln {
// Readable gtest messages.
inline void PrintTo(const Dims &d, std::ostream *os) { *os << d.str(); }
} // namespace kiln

namespace kt {

// Tests parameterised by device: every CPU test has a CUDA twin, which
// skips (visibly) on a machine without a GPU.
class DeviceTest : public ::testing::TestWithParam<kiln::Device> {
protected:
  void SetUp() override {
    if (GetParam().is_cuda() && !kiln::cuda_available())
      GTEST_SKIP() << "no CUDA GPU: skipped";
  }
  kiln::Device dev() const { return GetParam(); }
};

inline std::string device_label(const ::testing::TestParamInfo<kiln::Device> &i) {
  return i.param.is_cpu() ? "cpu" : "cuda";
}

#define KT_DEVICES                                                             \
  ::testing::Values(kiln::Device::cpu(), kiln::Device::cuda(0)), kt::device_label

// Expects `stmt` to throw kiln::Error with `text` in its message.
#define EXPECT_KILN_ERROR(stmt, text)                                          \
  do {                                                                         \
    try {                                                                      \
      stmt;                                                                    \
      ADD_FAILURE() << "no kiln::Error thrown; expected one containing \""     \
                    << (text) << "\"";                                         \
    } catch (const kiln::Error &e_) {                                          \
      EXPECT_NE(std::string(e_.what()).find(text), std::string::npos)          \
          << "message: " << e_.what() << "\nexpected to contain: " << (text);  \
    }                                                                          \
  } while (0)

// What `f` writes to stderr with the runtime's log mask set to `mask`
// (kiln::rt::LogKind bits; KILN_LOGS at run time).
template <class F> std::string log_of(unsigned mask, F &&f) {
  unsigned saved = kiln::rt::g_log_mask;
  kiln::rt::g_log_mask = mask;
  ::testing::internal::CaptureStderr();
  f();
  std::string s = ::testing::internal::GetCapturedStderr();
  kiln::rt::g_log_mask = saved;
  return s;
}

// Values of a tensor as doubles, in logical (row-major) order.
inline std::vector<double> values(const kiln::Tensor &t) {
  return t.to_vector<double>();
}

// Bitwise-equal doubles, NaN equal to NaN.
inline bool same_value(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

} // namespace kt
