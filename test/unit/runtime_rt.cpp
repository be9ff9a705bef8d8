// kiln/rt.h and kiln/stats.h: counters (one eager op = one launch), logs,
// guards, CPU launches, offset calculators, and rt::launch of a kernel from
// an embedded fatbin (built from Inputs/launch_kernels.cu when nvcc is
// there).
#include "runtime_reference.h"

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#if defined(KILN_TEST_FATBIN)
#include "launch_kernels_fatbin.h"
#endif

using namespace kiln;
using namespace kt;
using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

namespace {

// Sets the log mask for one scope.
struct LogMask {
  unsigned saved = rt::g_log_mask;
  explicit LogMask(unsigned m) { rt::g_log_mask = m; }
  ~LogMask() { rt::g_log_mask = saved; }
};

class StatsOn : public kt::DeviceTest {};

TEST_P(StatsOn, OneEagerOpIsOneLaunch) {
  Device d = dev();
  Tensor a = randn({64, 33}, f32, d), b = randn({33}, f32, d);
  Tensor h = randn({64, 33}, f16, d), i = arange(64 * 33, i32, d).view({64, 33});
  Tensor m = from_vector(std::vector<bool>(64 * 33, true), {64, 33}, d);
  auto launches = [](auto &&f) {
    uint64_t before = stats().kernel_launches;
    f();
    return stats().kernel_launches - before;
  };
  EXPECT_EQ(launches([&] { a + a; }), 1u) << "contiguous";
  EXPECT_EQ(launches([&] { a + b; }), 1u) << "broadcast";
  EXPECT_EQ(launches([&] { a.slice(1, 0, 32, 2) * a.slice(1, 1, 33, 2); }), 1u)
      << "strided";
  EXPECT_EQ(launches([&] { a * 2.0; }), 1u) << "tensor-scalar";
  EXPECT_EQ(launches([&] { 2.0 - a; }), 1u) << "scalar-tensor";
  EXPECT_EQ(launches([&] { sin(a.transpose(0, 1)); }), 1u) << "unary strided";
  EXPECT_EQ(launches([&] { gelu(h); }), 1u) << "f16";
  EXPECT_EQ(launches([&] { where(m, a, 0.0); }), 1u) << "where";
  EXPECT_EQ(launches([&] { clamp(a, -1, 1); }), 1u) << "clamp";
  EXPECT_EQ(launches([&] { Tensor r = a > b; }), 1u) << "compare";
  EXPECT_EQ(launches([&] { i * 2.5; }), 1u) << "i32 * 2.5 (computed in f32)";
  EXPECT_EQ(launches([&] { sin(i); }), 1u) << "sin of i32";
  EXPECT_EQ(launches([&] { m + 1; }), 1u) << "b8 + 1 (computed in i64)";
  EXPECT_EQ(launches([&] { a += b; }), 1u) << "in-place";
  EXPECT_EQ(launches([&] { a.to(f16); }), 1u) << "cast";
  EXPECT_EQ(launches([&] { a.transpose(0, 1).contiguous(); }), 1u) << "copy";
  EXPECT_EQ(launches([&] { zeros({5}, f32, d); }), 1u) << "fill";
  EXPECT_EQ(launches([&] { empty({0}, f32, d) + 1.0; }), 0u) << "empty: nothing to run";
  // Mixed dtypes convert an operand first (documented): two launches.
  EXPECT_EQ(launches([&] { a + h; }), 2u) << "f32 + f16";
  Stats s = stats();
  EXPECT_EQ(s.compiled_calls, 0u);
  EXPECT_EQ(s.fallback_calls, 0u);
  reset_stats();
  EXPECT_EQ(stats().kernel_launches, 0u);
}

TEST_P(StatsOn, KernelLogs) {
  Tensor a = ones({6}, f32, dev());
  {
    LogMask on(rt::kLogKernels);
    CaptureStderr();
    a + a;
    std::string err = GetCapturedStderr();
    if (dev().is_cpu())
      EXPECT_EQ(err, "[kiln] cpu add n=6\n");
    else
      EXPECT_EQ(err, "[kiln] launch add f32 n=6 contiguous grid=1 block=256 (cuda:0)\n");
  }
  {
    LogMask off(rt::kLogGuards);
    CaptureStderr();
    a + a;
    EXPECT_EQ(GetCapturedStderr(), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, StatsOn, KT_DEVICES);

TEST(Guards, FailureCountsLogsAndReturnsFalse) {
  reset_stats();
  {
    LogMask on(rt::kLogGuards);
    CaptureStderr();
    EXPECT_FALSE(rt::guard_failed("my_fn", "x is not contiguous"));
    EXPECT_EQ(GetCapturedStderr(), "[kiln] my_fn: guard failed: x is not contiguous\n");
  }
  {
    LogMask off(rt::kLogKernels);
    CaptureStderr();
    rt::guard_failed("my_fn", "again");
    EXPECT_EQ(GetCapturedStderr(), "");
  }
  rt::count_compiled();
  Stats s = stats();
  EXPECT_EQ(s.guard_failures, 2u);
  EXPECT_EQ(s.fallback_calls, 2u);
  EXPECT_EQ(s.compiled_calls, 1u);
  EXPECT_EQ(s.kernel_launches, 0u);
}

// The fast path's first check: on, switched off, made to fail.
TEST(Guards, FastPathOffAndForcedFailure) {
  bool forced = force_guard_failure(); // KILN_FORCE_GUARD_FAILURE=1 runs
  set_force_guard_failure(false);
  reset_stats();
  EXPECT_FALSE(rt::fast_path_off("f"));
  set_compiled_enabled(false);
  EXPECT_TRUE(rt::fast_path_off("f"));
  set_compiled_enabled(true);
  EXPECT_EQ(stats().fallback_calls, 1u);
  EXPECT_EQ(stats().guard_failures, 0u) << "switched off is not a guard failure";
  set_force_guard_failure(true);
  {
    LogMask on(rt::kLogGuards);
    CaptureStderr();
    EXPECT_TRUE(rt::fast_path_off("f"));
    EXPECT_EQ(GetCapturedStderr(),
              "[kiln] f: guard failed: every guard fails "
              "(kiln::set_force_guard_failure, KILN_FORCE_GUARD_FAILURE)\n");
  }
  set_force_guard_failure(false);
  EXPECT_FALSE(rt::fast_path_off("f"));
  EXPECT_EQ(stats().fallback_calls, 2u);
  EXPECT_EQ(stats().guard_failures, 1u);
  set_force_guard_failure(forced);
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// KILN_LOGS is read when the library loads: run this test binary again
// with it set (see runtime_main.cpp) and read the mask it reports.
std::string log_mask_with(const char *env) {
  std::string cmd = "KILN_UNIT_PRINT_LOG_MASK=1 ";
  if (env)
    cmd += std::string("KILN_LOGS='") + env + "' ";
  else
    cmd = "env -u KILN_LOGS " + cmd;
  cmd += "'" + self_exe() + "' 2>&1";
  std::string out;
  if (FILE *p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p))
      out += buf;
    pclose(p);
  }
  return out;
}

TEST(Logs, KilnLogsEnvironmentVariable) {
  EXPECT_EQ(log_mask_with(nullptr), "log_mask=0\n");
  EXPECT_EQ(log_mask_with("kernels"), "log_mask=2\n");
  EXPECT_EQ(log_mask_with("guards"), "log_mask=1\n");
  EXPECT_EQ(log_mask_with("guards,kernels"), "log_mask=3\n");
  EXPECT_EQ(log_mask_with(" kernels , guards "), "log_mask=3\n");
  EXPECT_EQ(log_mask_with("graphs"), "log_mask=4\n");
  EXPECT_EQ(log_mask_with("all"), "log_mask=7\n");
  EXPECT_EQ(log_mask_with("bogus,guards"),
            "[kiln] KILN_LOGS: unknown kind 'bogus' (known: guards, kernels, "
            "graphs, all)\nlog_mask=1\n");
}

TEST(CpuLaunch, CoversTheRangeOnceInParallelChunks) {
  struct Ctx {
    std::vector<std::atomic<int>> hits;
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    std::set<int> threads;
  };
  for (int64_t n : {int64_t(0), int64_t(100), int64_t(1000003)}) {
    Ctx ctx;
    ctx.hits = std::vector<std::atomic<int>>(size_t(n));
    reset_stats();
    rt::cpu_launch(
        "probe", n, 1000,
        [](int64_t b, int64_t e, void *p) {
          auto &c = *static_cast<Ctx *>(p);
          for (int64_t i = b; i < e; ++i)
            c.hits[size_t(i)]++;
          std::lock_guard<std::mutex> lock(c.mu);
          c.chunks.push_back({b, e});
          c.threads.insert(omp_get_thread_num());
        },
        &ctx);
    EXPECT_EQ(stats().kernel_launches, 1u);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(ctx.hits[size_t(i)].load(), 1) << "element " << i;
    if (n == 0) {
      EXPECT_TRUE(ctx.chunks.empty());
    }
    if (n == 100) {
      EXPECT_EQ(ctx.chunks.size(), 1u);
    }
    if (n > 100) {
      for (auto [b, e] : ctx.chunks)
        EXPECT_GE(e - b, 1000);
      if (omp_get_max_threads() > 1)
        EXPECT_GT(ctx.threads.size(), 1u) << "large launches run in parallel";
    }
  }
  LogMask on(rt::kLogKernels);
  CaptureStderr();
  rt::cpu_launch("fused_loop_7", 10, 1000, [](int64_t, int64_t, void *) {}, nullptr);
  EXPECT_EQ(GetCapturedStderr(), "[kiln] cpu fused_loop_7 n=10\n");
}

// Offsets of every element computed from sizes and strides directly.
template <int N>
void expect_calc_matches(const Dims &out, std::vector<const Tensor *> ops,
                         const OffsetCalc<N> &calc) {
  int64_t numel = 1;
  for (int64_t s : out)
    numel *= s;
  for (int64_t lin = 0; lin < numel; ++lin) {
    int64_t got[N];
    calc.get(lin, got);
    int32_t got32[N];
    calc.get(int32_t(lin), got32);
    for (int k = 0; k < N; ++k) {
      const Tensor &t = *ops[k];
      int64_t rem = lin, want = 0;
      for (int d = out.rank() - 1; d >= 0; --d) {
        int64_t idx = rem % out[d];
        rem /= out[d];
        int td = d - (out.rank() - t.dim());
        if (td >= 0 && t.sizes()[td] != 1)
          want += idx * t.strides()[td];
      }
      ASSERT_EQ(got[k], want) << "operand " << k << " element " << lin;
      ASSERT_EQ(got32[k], want) << "32-bit, operand " << k << " element " << lin;
    }
  }
}

TEST(OffsetCalc, CollapsesDropsAndBroadcasts) {
  Tensor a = zeros({4, 5, 6});
  OffsetCalc<1> c1;
  rt::make_offset_calc<1>({4, 5, 6}, {&a}, c1);
  EXPECT_EQ(c1.rank, 1);
  EXPECT_EQ(c1.sizes[0], 120);
  EXPECT_EQ(c1.strides[0][0], 1);

  Tensor out = zeros({4, 5});
  Tensor t = zeros({5, 4}).transpose(0, 1);
  Tensor row = zeros({5});
  OffsetCalc<3> c3;
  rt::make_offset_calc<3>({4, 5}, {&out, &t, &row}, c3);
  EXPECT_EQ(c3.rank, 2);
  EXPECT_EQ(c3.strides[0][2], 0); // broadcast rows
  expect_calc_matches<3>({4, 5}, {&out, &t, &row}, c3);

  Tensor o3 = zeros({4, 1, 5}), x3 = zeros({4, 1, 5});
  OffsetCalc<2> c2;
  rt::make_offset_calc<2>({4, 1, 5}, {&o3, &x3}, c2);
  EXPECT_EQ(c2.rank, 1) << "size-1 dims are dropped, the rest collapse";
  EXPECT_EQ(c2.sizes[0], 20);

  // A strided output is walked in its memory order: its stride-1 dim is
  // the innermost (a transposed input is then the strided one).
  Tensor tout = zeros({5, 4}).transpose(0, 1), in = zeros({4, 5});
  rt::make_offset_calc<2>({4, 5}, {&tout, &in}, c2);
  EXPECT_EQ(c2.rank, 2);
  EXPECT_EQ(c2.sizes[1], 4);
  EXPECT_EQ(c2.strides[1][0], 1);
  EXPECT_EQ(c2.strides[1][1], 5);
  // Each index names one element of the output, and the input's offset is
  // that element's.
  std::vector<bool> seen(20, false);
  for (int64_t lin = 0; lin < 20; ++lin) {
    int64_t off[2];
    c2.get(lin, off);
    const int64_t i = off[0] % 4, j = off[0] / 4; // tout[i][j] at i + 4j
    ASSERT_FALSE(seen[size_t(off[0])]) << "element " << lin;
    seen[size_t(off[0])] = true;
    EXPECT_EQ(off[1], i * 5 + j) << "element " << lin;
  }

  EXPECT_KILN_ERROR(rt::make_offset_calc<2>({4, 5, 6}, {&a}, c2),
                    "kiln::rt::make_offset_calc: 1 operands given for an "
                    "OffsetCalc<2>");
  EXPECT_KILN_ERROR(rt::make_offset_calc<2>({4, 6}, {&out, &row}, c2),
                    "operand 0 of shape [4, 5] does not broadcast to [4, 6]");
}

// rt::reduced_shape (the compiled code's check of a dropped reduction)
// against the eager reductions it stands for: false exactly where they
// raise, else their result's shape.
TEST(ReducedShape, AgreesWithEagerReductions) {
  std::mt19937 rng(7);
  const int64_t sizes[] = {0, 1, 2, 3};
  for (int trial = 0; trial < 400; ++trial) {
    Dims shape;
    for (int i = 0, rank = int(rng() % 4); i < rank; ++i)
      shape.push_back(sizes[rng() % 4]);
    Tensor x = zeros(shape);
    bool whole = rng() % 4 == 0, keepdim = rng() % 2, extreme = rng() % 2;
    int64_t dim = int64_t(rng() % 9) - 4;
    Dims got;
    bool ok = whole ? rt::reduced_shape(shape, {}, false, extreme, got)
                    : rt::reduced_shape(shape, {dim}, keepdim, extreme, got);
    Tensor want;
    bool raised = false;
    try {
      want = whole ? (extreme ? amax(x) : sum(x))
                   : (extreme ? amax(x, dim, keepdim) : sum(x, dim, keepdim));
    } catch (const Error &) {
      raised = true;
    }
    SCOPED_TRACE(shape.str() + (whole ? " all dims" : " dim " + std::to_string(dim)) +
                 (keepdim ? " keepdim" : "") + (extreme ? " amax" : " sum"));
    ASSERT_EQ(ok, !raised);
    if (ok)
      ASSERT_EQ(got.str(), want.sizes().str());
  }
}

// rt::norm_shapes (the compiled code's check of a decomposed norm's
// arguments) against eager layer_norm: false exactly where it raises.
TEST(NormShapes, AgreesWithEagerLayerNorm) {
  std::mt19937 rng(11);
  auto random_shape = [&](int max_rank) {
    Dims d;
    for (int i = 0, rank = int(rng() % (max_rank + 1)); i < rank; ++i)
      d.push_back(int64_t(rng() % 4));
    return d;
  };
  for (int trial = 0; trial < 300; ++trial) {
    Dims xs = random_shape(3), ws = random_shape(2), bs = random_shape(2);
    if (rng() % 2 && xs.rank() > 0)
      ws = Dims{xs[xs.rank() - 1]};
    if (rng() % 2 && xs.rank() > 0)
      bs = Dims{xs[xs.rank() - 1]};
    bool raised = false;
    try {
      layer_norm(zeros(xs), zeros(ws), zeros(bs));
    } catch (const Error &) {
      raised = true;
    }
    SCOPED_TRACE(xs.str() + " " + ws.str() + " " + bs.str());
    ASSERT_EQ(rt::norm_shapes(xs, {&ws, &bs}), !raised);
  }
}

TEST(OffsetCalc, RandomViewsMatchDirectOffsets) {
  std::mt19937 r(17);
  for (int iter = 0; iter < 200; ++iter) {
    int rank = 1 + int(r() % 5);
    Dims shape;
    for (int d = 0; d < rank; ++d)
      shape.push_back(1 + int64_t(r() % 4));
    // A permuted, sliced, broadcast view of a bigger tensor.
    Dims big;
    for (int d = 0; d < rank; ++d)
      big.push_back(shape[d] * 2);
    Tensor base = zeros(big);
    Tensor v = base;
    for (int d = 0; d < rank; ++d)
      v = v.slice(d, int64_t(r() % 2), big[d], 1 + int64_t(r() % 2)).slice(d, 0, shape[d]);
    if (rank > 1 && r() % 2)
      v = v.transpose(0, rank - 1);
    Dims vs = v.sizes();
    Tensor o = zeros(vs);
    Tensor bcast = zeros({vs[rank - 1]});
    OffsetCalc<3> c;
    rt::make_offset_calc<3>(vs, {&o, &v, &bcast}, c);
    expect_calc_matches<3>(vs, {&o, &v, &bcast}, c);
    if (HasFatalFailure())
      return;
  }
}

TEST(RtLaunch, WithoutGpuIsAnErrorNamingTheKernel) {
  if (cuda_available())
    GTEST_SKIP() << "a CUDA GPU is present: RtLaunch.EmbeddedKernel covers launch";
  static const unsigned char junk[16] = {};
  static rt::KernelModule m{junk, "my_function"};
  static rt::KernelRef k{&m, "kernel0"};
  try {
    rt::launch(k, Device::cuda(0), {1, 1, 1}, {32, 1, 1}, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    std::string s = e.what();
    EXPECT_NE(s.find("no CUDA GPU"), std::string::npos) << s;
    EXPECT_NE(s.find("kernel0"), std::string::npos) << s;
    EXPECT_NE(s.find("my_function"), std::string::npos) << s;
  }
  EXPECT_EQ(m.library.load(), nullptr);
  EXPECT_KILN_ERROR(rt::multiprocessor_count(Device::cuda(0)), "no CUDA GPU");
}

TEST(RtLaunch, EmbeddedKernel) {
  if (!cuda_available())
    GTEST_SKIP() << "no CUDA GPU: skipped";
#if !defined(KILN_TEST_FATBIN)
  GTEST_SKIP() << "built without nvcc: no test fatbin";
#else
  static rt::KernelModule m{kiln_test_fatbin, "test_module"};
  static rt::KernelRef k{&m, "kiln_test_affine"};
  Device d = Device::cuda(0);
  EXPECT_GT(rt::multiprocessor_count(d), 0);
  const int n = 1000;
  Tensor in = arange(n, f32, d), out = zeros({n}, f32, d);
  float *o = out.data<float>();
  const float *i = in.data<float>();
  float scale = 2.0f;
  int count = n;
  void *args[] = {&o, &i, &scale, &count};
  // First use from several threads at once: one load, one lookup.
  std::vector<std::thread> ts;
  reset_stats();
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&] { rt::launch(k, d, {4, 1, 1}, {256, 1, 1}, args); });
  for (auto &t : ts)
    t.join();
  EXPECT_EQ(stats().kernel_launches, 8u);
  void *lib = m.library.load(), *h = k.handle.load();
  ASSERT_NE(lib, nullptr);
  ASSERT_NE(h, nullptr);
  {
    LogMask on(rt::kLogKernels);
    CaptureStderr();
    rt::launch(k, d, {4, 1, 1}, {256, 1, 1}, args);
    EXPECT_EQ(GetCapturedStderr(), "[kiln] launch kiln_test_affine grid=4,1,1 "
                                   "block=256,1,1 (test_module, cuda:0)\n");
  }
  EXPECT_EQ(m.library.load(), lib);
  EXPECT_EQ(k.handle.load(), h);
  std::vector<float> got = out.to_vector<float>();
  for (int j = 0; j < n; ++j)
    ASSERT_EQ(got[j], 2.0f * j + 1.0f) << j;

  static rt::KernelRef missing{&m, "no_such_kernel"};
  try {
    rt::launch(missing, d, {1, 1, 1}, {32, 1, 1}, args);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    std::string s = e.what();
    EXPECT_NE(s.find("no_such_kernel"), std::string::npos) << s;
    EXPECT_NE(s.find("test_module"), std::string::npos) << s;
  }
  // A bad launch configuration is reported, and the runtime stays usable.
  EXPECT_KILN_ERROR(rt::launch(k, d, {1, 1, 1}, {4096, 1, 1}, args),
                    "kiln_test_affine");
  EXPECT_EQ(kt::values(ones({3}, f32, d) + 1.0), (std::vector<double>{2, 2, 2}));
#endif
}

} // namespace
