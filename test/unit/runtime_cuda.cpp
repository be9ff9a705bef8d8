// CUDA-only behaviour: the caching allocator, the kernel variants the
// eager launcher picks (vectorised, 32-bit and 64-bit strided), work from
// several host threads. Skipped (visibly) without a GPU.
#include "runtime_reference.h"

#include <thread>

using namespace kiln;
using namespace kt;

namespace {

class Cuda : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cuda_available())
      GTEST_SKIP() << "no CUDA GPU: skipped";
  }
  Device d = Device::cuda(0);
};

// The kernel log lines of `f`.
template <class F> std::string kernel_log(F &&f) {
  return log_of(rt::kLogKernels, f);
}

TEST_F(Cuda, AllocatorReusesFreedBlocksAndReportsOutOfMemory) {
  void *p;
  {
    Tensor t = empty({1000}, f32, d);
    p = t.data_ptr();
  }
  Tensor t2 = empty({1000}, f32, d);
  if (!rt::env_flag("KILN_NO_CUDA_MEMORY_CACHING"))
    EXPECT_EQ(t2.data_ptr(), p) << "a freed block of the same size is reused";
  Tensor t3 = empty({1001}, f32, d);
  EXPECT_NE(t3.data_ptr(), p);
  EXPECT_EQ(uintptr_t(t3.data_ptr()) % 256, 0u);
  EXPECT_KILN_ERROR(empty({int64_t(1) << 42}, b8, d), "CUDA out of memory");
  // Still usable afterwards.
  EXPECT_EQ(kt::values(ones({3}, f32, d) + 1.0), (std::vector<double>{2, 2, 2}));
}

TEST_F(Cuda, AllocatorCountsBytesInUseAndKeepsToItsLimit) {
  size_t base = cuda_memory_allocated();
  {
    Tensor t = empty({1 << 20}, f32, d); // 4 MiB, a size class of its own
    EXPECT_EQ(cuda_memory_allocated() - base, size_t(4) << 20);
  }
  EXPECT_EQ(cuda_memory_allocated(), base) << "freed (to the cache)";
  set_cuda_memory_limit(base + (size_t(6) << 20));
  Tensor a = empty({1 << 20}, f32, d);
  EXPECT_KILN_ERROR(empty({1 << 20}, f32, d),
                    "CUDA out of memory: cannot allocate 4194304 bytes on cuda:0");
  EXPECT_EQ(cuda_memory_allocated() - base, size_t(4) << 20) << "the failure took nothing";
  set_cuda_memory_limit(0);
  Tensor b = empty({1 << 20}, f32, d);
  EXPECT_EQ(cuda_memory_allocated() - base, size_t(8) << 20);
}

TEST_F(Cuda, LauncherPicksVectorised32And64BitPaths) {
  int64_t n = 4099;
  Tensor a = arange(n, f32, d), b = full({n}, 0.5, f32, d);
  EXPECT_NE(kernel_log([&] { a + b; }).find(" contiguous "), std::string::npos);
  // Contiguous but misaligned by one element: the strided kernel.
  Tensor a1 = a.slice(0, 1, n), b1 = b.slice(0, 0, n - 1);
  std::string log = kernel_log([&] {
    Tensor r = a1 + b1;
    std::vector<double> v = kt::values(r);
    for (int64_t i = 0; i < n - 1; ++i)
      ASSERT_EQ(v[i], double(i + 1) + 0.5) << i;
  });
  EXPECT_NE(log.find("launch add f32 n=4098 strided32"), std::string::npos) << log;

  // Offsets beyond 2^31: 64-bit index math.
  int64_t bytes = (int64_t(1) << 31) + 4096;
  Tensor base = zeros({bytes}, b8, d);
  Tensor sparse = base.slice(0, 0, bytes, int64_t(1) << 20); // 2049 elements
  ASSERT_EQ(sparse.numel(), 2049);
  log = kernel_log([&] { sparse.copy_(ones({2049}, b8, d)); });
  EXPECT_NE(log.find("copy b8 n=2049 strided64"), std::string::npos) << log;
  Tensor r;
  log = kernel_log([&] { r = sparse + 1; });
  EXPECT_NE(log.find("launch add b8 n=2049 strided64"), std::string::npos) << log;
  EXPECT_EQ(r.dtype(), i64);
  EXPECT_EQ(kt::values(r), std::vector<double>(2049, 2.0));
  std::vector<double> around =
      kt::values(base.slice(0, (int64_t(1) << 31) - 2, (int64_t(1) << 31) + 3));
  EXPECT_EQ(around, (std::vector<double>{0, 0, 1, 0, 0}));
}

TEST_F(Cuda, EagerOpsFromSeveralThreads) {
  std::vector<std::thread> ts;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&, t] {
      Tensor x = full({10000}, double(t), f32, d);
      for (int i = 0; i < 50; ++i)
        x = x + 1.0;
      std::vector<double> v = kt::values(x);
      ok[t] = v.front() == t + 50 && v.back() == t + 50;
    });
  for (auto &t : ts)
    t.join();
  for (int t = 0; t < 8; ++t)
    EXPECT_TRUE(ok[t]) << "thread " << t;
}

TEST_F(Cuda, CopiesBetweenGpus) {
  if (cuda_device_count() < 2)
    GTEST_SKIP() << "one CUDA GPU: no second device to copy to";
  Tensor a = arange(100, f32, d);
  Tensor b = a.to(Device::cuda(1));
  EXPECT_EQ(b.device(), Device::cuda(1));
  EXPECT_EQ(kt::values(b + 1.0), kt::values(a + 1.0));
}

} // namespace
