// kiln::rt::graph_call (mode=reduce-overhead) driven directly, with fast
// paths written here: what is captured and replayed, what runs plainly
// (an output the key does not fix, a capture CUDA refuses, a guard that
// fails), and the instances a caller holding results gets. The compiled
// functions' side is test/plugin/exec-graphs-cuda.cpp. Skipped (visibly)
// without a GPU.
#include "runtime_reference.h"

#include <kiln/interop.h>
#include <kiln/rt.h>

using namespace kiln;
using namespace kt;

namespace {

class CudaGraphs : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cuda_available())
      GTEST_SKIP() << "no CUDA GPU: skipped";
    reset_stats();
  }
  Device d = Device::cuda(0);
};

// sin(x) + y as a fast path of three eager kernels (sin, add, and a copy
// into a fresh output), counted as a compiled call.
bool sin_add(const Tensor &x, const Tensor &y, Tensor *out) {
  *out = (sin(x) + y).clone();
  rt::count_compiled();
  return true;
}

Tensor call(rt::GraphCache &c, const Tensor &x, const Tensor &y) {
  Tensor out;
  auto fast = [&] { return sin_add(x, y, &out); };
  EXPECT_TRUE(rt::graph_call(c, {&x, &y}, {}, {&out}, fast));
  return out;
}

TEST_F(CudaGraphs, ReplaysReadTheInputsOfTheCall) {
  rt::GraphCache c{"sin_add"};
  Tensor x = randn({1000}, f32, d), y = randn({1000}, f32, d);
  for (int i = 0; i < 5; ++i) {
    x.copy_(randn({1000}, f32, d));
    Tensor got = call(c, x, y);
    EXPECT_LE(max_abs_diff(got, sin(x) + y), 0.0) << "call " << i;
  }
  Stats s = stats();
  EXPECT_EQ(s.graph_captures, 1u);
  EXPECT_EQ(s.graph_replays, 3u);
  EXPECT_EQ(s.compiled_calls, 5u);
  // Each call ran three kernels, replays included.
  EXPECT_GE(s.kernel_launches, 15u);
}

TEST_F(CudaGraphs, HeldResultsGetOtherInstancesThenPlainCalls) {
  rt::GraphCache c{"sin_add"};
  Tensor x = randn({256}, f32, d), y = randn({256}, f32, d);
  std::vector<Tensor> held, want;
  for (int i = 0; i < 8; ++i) {
    x.copy_(randn({256}, f32, d));
    held.push_back(call(c, x, y));
    want.push_back(sin(x) + y);
  }
  for (size_t i = 0; i < held.size(); ++i)
    EXPECT_LE(max_abs_diff(held[i], want[i]), 0.0) << "result " << i;
  // One plain call, then one capture per held result up to four.
  EXPECT_EQ(stats().graph_captures, 4u);
  EXPECT_EQ(stats().graph_replays, 0u);
  held.clear();
  (void)call(c, x, y);
  EXPECT_EQ(stats().graph_replays, 1u);
}

TEST_F(CudaGraphs, OutputOfOtherMemoryRunsPlainly) {
  rt::GraphCache c{"global"};
  Tensor g = randn({64}, f32, d), x = randn({64}, f32, d);
  Tensor g0 = g.clone();
  std::string log = log_of(rt::kLogGraphs, [&] {
    for (int i = 0; i < 4; ++i) {
      Tensor out;
      auto fast = [&] {
        g += x;
        out = g;
        return true;
      };
      EXPECT_TRUE(rt::graph_call(c, {&x}, {}, {&out}, fast));
      EXPECT_EQ(out.data_ptr(), g.data_ptr());
    }
  });
  EXPECT_NE(log.find("no CUDA graph for this call (an output is memory the "
                     "call did not allocate nor was given)"),
            std::string::npos)
      << log;
  EXPECT_EQ(stats().graph_replays, 0u);
  EXPECT_EQ(stats().graph_captures, 0u);
  // Every call added x once: the failed capture's work never ran, and the
  // call ran again plainly.
  EXPECT_LE(max_abs_diff(g, g0 + x * 4.0), 1e-5);
}

TEST_F(CudaGraphs, CaptureCudaRefusesRunsPlainly) {
  rt::GraphCache c{"synchronises"};
  Tensor x = randn({64}, f32, d);
  Tensor acc = zeros({64}, f32, d);
  for (int i = 0; i < 4; ++i) {
    Tensor out;
    auto fast = [&] {
      acc += x;
      synchronize(current_stream(0)); // not allowed while capturing
      out = acc.clone();
      return true;
    };
    EXPECT_TRUE(rt::graph_call(c, {&x, &acc}, {}, {&out}, fast));
  }
  EXPECT_EQ(stats().graph_captures, 0u);
  EXPECT_LE(max_abs_diff(acc, x * 4.0), 1e-5);
}

TEST_F(CudaGraphs, FailedGuardAtCaptureRunsTheBodyFromThenOn) {
  rt::GraphCache c{"guarded"};
  Tensor x = randn({64}, f32, d);
  int calls = 0;
  for (int i = 0; i < 4; ++i) {
    Tensor out;
    auto fast = [&] {
      ++calls;
      return i == 0; // the first call passes, then the guard fails
    };
    EXPECT_EQ(rt::graph_call(c, {&x}, {}, {&out}, fast), i == 0);
  }
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(stats().graph_captures, 0u);
}

TEST_F(CudaGraphs, KeysFollowShapesScalarsAndPointers) {
  rt::GraphCache c{"keys"};
  Tensor x = randn({128}, f32, d), x2 = randn({64}, f32, d);
  for (int i = 0; i < 3; ++i)
    for (double a : {1.0, 2.0, -0.0})
      for (const Tensor *t : {&x, &x2}) {
        Tensor out;
        auto fast = [&] {
          out = *t * a;
          rt::count_compiled();
          return true;
        };
        ASSERT_TRUE(rt::graph_call(c, {t}, {rt::key_bits(a)}, {&out}, fast));
        EXPECT_LE(max_abs_diff(out, *t * a), 0.0);
      }
  EXPECT_EQ(stats().graph_captures, 6u);
  EXPECT_EQ(stats().graph_replays, 6u);
}

// x = f(x): each result is a new address, so each call a new key; the
// captures stop after a few (they would never pay), the results stay right.
TEST_F(CudaGraphs, KeysThatKeepChangingStopCapturing) {
  rt::GraphCache c{"recurrent"};
  Tensor x = randn({256}, f32, d), y = randn({256}, f32, d);
  Tensor want = x.clone();
  std::string log = log_of(rt::kLogGraphs, [&] {
    for (int i = 0; i < 100; ++i) {
      x = call(c, x, y);
      want = sin(want) + y;
    }
  });
  EXPECT_LE(max_abs_diff(x, want), 1e-5);
  EXPECT_LE(stats().graph_captures, 8u);
  EXPECT_NE(log.find("the keys keep changing"), std::string::npos) << log;
}

TEST(Graphs, CpuTensorsRunTheFastPath) {
  reset_stats();
  rt::GraphCache c{"cpu"};
  Tensor x = randn({16}, f32), y = randn({16}, f32);
  for (int i = 0; i < 3; ++i)
    EXPECT_LE(max_abs_diff(call(c, x, y), sin(x) + y), 0.0);
  EXPECT_EQ(stats().graph_captures, 0u);
  EXPECT_EQ(stats().compiled_calls, 3u);
}

} // namespace
