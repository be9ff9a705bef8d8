// Interop (kiln/interop.h): tensors over memory Kiln did not allocate
// (from_blob, DLPack) and the current CUDA stream. The CUDA tests skip
// (visibly) without a GPU; with one, they check under CUDA graph capture
// that every kernel goes on the current stream.
#include "runtime_test_util.h"

#include <kiln/interop.h>

#include <thread>

#if defined(KILN_TEST_CUDART)
#include <cuda_runtime.h>
#endif
#if defined(KILN_TEST_FATBIN)
#include "launch_kernels_fatbin.h"
#endif

using namespace kiln;

namespace {

std::vector<double> values(const Tensor &t) { return kt::values(t); }

TEST(FromBlob, WrapsMemoryWithoutACopy) {
  alignas(16) float buf[6] = {0, 1, 2, 3, 4, 5};
  Tensor t = from_blob(buf, {2, 3}, f32);
  EXPECT_EQ(t.data_ptr(), buf);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(values(t * 2.0), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  t.copy_(full({2, 3}, 7.0));
  EXPECT_EQ(buf[4], 7.0f) << "writes reach the caller's memory";
  // Strided: every other element of each row of a 2x4 buffer.
  alignas(16) int32_t ints[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  Tensor s = from_blob(ints, {2, 2}, {4, 2}, i32);
  EXPECT_FALSE(s.is_contiguous());
  EXPECT_EQ(values(s), (std::vector<double>{0, 2, 4, 6}));
}

TEST(FromBlob, CallsItsDeleterOnceWhenTheLastViewGoes) {
  alignas(16) float buf[6] = {};
  int calls = 0;
  void *seen = nullptr;
  {
    Tensor t = from_blob(buf, {6}, f32, Device::cpu(), [&](void *p) {
      ++calls;
      seen = p;
    });
    Tensor v = t.view({2, 3}).transpose(0, 1);
    t = Tensor();
    EXPECT_EQ(calls, 0) << "a view still holds it";
    EXPECT_EQ(values(v).size(), 6u);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, static_cast<void *>(buf));
}

TEST(FromBlob, RefusesWhatItCannotHoldAndStillCallsTheDeleter) {
  alignas(16) float buf[8] = {};
  int calls = 0;
  auto count = [&](void *) { ++calls; };
  EXPECT_KILN_ERROR(from_blob(buf, {2, 2}, {-2, 1}, f32, Device::cpu(), count),
                    "negative stride");
  EXPECT_KILN_ERROR(from_blob(reinterpret_cast<char *>(buf) + 2, {2}, f32,
                              Device::cpu(), count),
                    "not aligned to the 4-byte elements of f32");
  EXPECT_KILN_ERROR(from_blob(buf, {2, 2}, {1}, f32, Device::cpu(), count),
                    "differ in rank");
  EXPECT_EQ(calls, 3);
  if (!cuda_available()) {
    EXPECT_KILN_ERROR(from_blob(buf, {2}, f32, Device::cuda(0), count),
                      "no CUDA GPU");
    EXPECT_EQ(calls, 4);
  }
}

TEST(FromBlob, IsOrdinaryInputForOps) {
  alignas(16) double buf[4] = {1, 2, 3, 4};
  Tensor t = from_blob(buf, {4}, f64);
  EXPECT_EQ(values(sum(t)), (std::vector<double>{10}));
  t += 1.0; // in place, on the caller's memory
  EXPECT_EQ(buf[0], 2.0);
}

TEST(DLPack, ExportsAViewThatKeepsTheTensorAlive) {
  Tensor t = arange(6).view({2, 3}).transpose(0, 1);
  void *data = t.data_ptr();
  DLManagedTensorVersioned *m = to_dlpack_versioned(t);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->flags, 0u);
  const DLTensor &dl = m->dl_tensor;
  EXPECT_EQ(dl.data, data);
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 3);
  EXPECT_EQ(dl.shape[1], 2);
  EXPECT_EQ(dl.strides[0], 1);
  EXPECT_EQ(dl.strides[1], 3);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  t = Tensor();
  EXPECT_EQ(static_cast<float *>(dl.data)[4], 4.0f) << "still alive";
  m->deleter(m);
}

TEST(DLPack, RoundTripsWithoutACopy) {
  Tensor t = arange(12).view({3, 4}).slice(1, 1, 3);
  for (bool versioned : {true, false}) {
    Tensor u = versioned ? from_dlpack(to_dlpack_versioned(t))
                         : from_dlpack(to_dlpack(t));
    EXPECT_EQ(u.data_ptr(), t.data_ptr());
    EXPECT_EQ(u.sizes(), t.sizes());
    EXPECT_EQ(u.strides(), t.strides());
    EXPECT_EQ(values(u), values(t));
  }
  for (DType dt : {f32, f16, bf16, f64, i32, i64, b8}) {
    Tensor a = ones({3}, dt);
    DLManagedTensor *m = to_dlpack(a);
    Tensor b = from_dlpack(m);
    EXPECT_EQ(b.dtype(), dt) << dtype_name(dt);
  }
}

// A producer that is not Kiln: a row-major f64 tensor with a byte offset,
// no strides, and a deleter that says when it ran.
struct Foreign {
  double data[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int64_t shape[2] = {2, 3};
  int deleted = 0;
  DLManagedTensor managed{};
  DLManagedTensor *make() {
    managed.dl_tensor = {data, {kDLCPU, 0}, 2, {kDLFloat, 64, 1}, shape,
                         nullptr, 2 * sizeof(double)};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor *self) {
      ++static_cast<Foreign *>(self->manager_ctx)->deleted;
    };
    return &managed;
  }
};

TEST(DLPack, ImportsAForeignTensorAndReleasesItOnce) {
  Foreign f;
  {
    Tensor t = from_dlpack(f.make());
    EXPECT_EQ(t.data_ptr(), static_cast<void *>(f.data + 2));
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(values(t), (std::vector<double>{2, 3, 4, 5, 6, 7}));
    Tensor row = t.slice(0, 1, 2);
    t = Tensor();
    EXPECT_EQ(f.deleted, 0);
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST(DLPack, RefusesWhatKilnCannotHoldAndGivesItBack) {
  Foreign f;
  DLManagedTensor *m = f.make();
  m->dl_tensor.dtype.lanes = 4;
  EXPECT_KILN_ERROR(from_dlpack(m), "4 lanes");
  m = f.make();
  m->dl_tensor.dtype = {kDLUInt, 8, 1};
  EXPECT_KILN_ERROR(from_dlpack(m), "dtype code 1, 8 bits");
  m = f.make();
  m->dl_tensor.device = {kDLOpenCL, 0};
  EXPECT_KILN_ERROR(from_dlpack(m), "device type 4");
  EXPECT_EQ(f.deleted, 3);

  Tensor t = ones({2});
  DLManagedTensorVersioned *v = to_dlpack_versioned(t);
  v->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  EXPECT_KILN_ERROR(from_dlpack(v), "read-only");
  v = to_dlpack_versioned(t);
  v->version.major = 2;
  EXPECT_KILN_ERROR(from_dlpack(v), "DLPack version 2.0");
  EXPECT_KILN_ERROR(from_dlpack(static_cast<DLManagedTensor *>(nullptr)),
                    "null DLPack tensor");
}

TEST(Streams, CurrentStreamIsPerThreadAndScoped) {
  CudaStream fake{reinterpret_cast<void *>(0x1234), 1};
  EXPECT_EQ(current_stream(1).handle, nullptr) << "the legacy default stream";
  {
    CudaStreamGuard g(fake);
    EXPECT_EQ(current_stream(1), fake);
    EXPECT_EQ(current_stream(0).handle, nullptr) << "other devices keep theirs";
    void *other = reinterpret_cast<void *>(1);
    std::thread([&] { other = current_stream(1).handle; }).join();
    EXPECT_EQ(other, nullptr) << "other threads keep theirs";
    {
      CudaStreamGuard inner({nullptr, 1});
      EXPECT_EQ(current_stream(1).handle, nullptr);
    }
    EXPECT_EQ(current_stream(1), fake) << "restored";
  }
  EXPECT_EQ(current_stream(1).handle, nullptr);
  EXPECT_KILN_ERROR(set_current_stream({nullptr, 99}), "no CUDA device cuda:99");
  if (!cuda_available())
    EXPECT_KILN_ERROR(create_cuda_stream(0), "no CUDA GPU");
}

// ---- on a GPU ----

class CudaInterop : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cuda_available())
      GTEST_SKIP() << "no CUDA GPU: skipped";
  }
  Device d = Device::cuda(0);
};

TEST_F(CudaInterop, DLPackKeepsTheDevice) {
  Tensor t = arange(4, f32, d);
  DLManagedTensor *m = to_dlpack(t);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(m->dl_tensor.device.device_id, 0);
  Tensor u = from_dlpack(m);
  EXPECT_EQ(u.device(), d);
  EXPECT_EQ(u.data_ptr(), t.data_ptr());
  Tensor w = from_blob(t.data_ptr(), {2, 2}, f32, d);
  EXPECT_EQ(values(w + 1.0), (std::vector<double>{1, 2, 3, 4}));
}

TEST_F(CudaInterop, AllocatorKeepsFreedBlocksPerStream) {
  // Without the cache, cudaMalloc may well return a just-freed address.
  if (rt::env_flag("KILN_NO_CUDA_MEMORY_CACHING"))
    GTEST_SKIP() << "a property of the caching allocator (KILN_NO_CUDA_MEMORY_CACHING is set)";
  CudaStream s1 = create_cuda_stream(0), s2 = create_cuda_stream(0);
  void *p;
  {
    CudaStreamGuard g(s1);
    p = empty({4096}, f32, d).data_ptr();
  }
  {
    CudaStreamGuard g(s2);
    EXPECT_NE(empty({4096}, f32, d).data_ptr(), p)
        << "a block freed on one stream is not handed to another";
  }
  {
    CudaStreamGuard g(s1);
    EXPECT_EQ(empty({4096}, f32, d).data_ptr(), p) << "but to its own";
  }
  destroy_cuda_stream(s1);
  destroy_cuda_stream(s2);
}

#if defined(KILN_TEST_CUDART)
// Captured into a CUDA graph on a non-blocking stream: a kernel queued on
// any other stream (the legacy default one) fails the capture.
template <class F> size_t captured_nodes(CudaStream s, F &&f) {
  cudaStream_t cs = static_cast<cudaStream_t>(s.handle);
  EXPECT_EQ(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal), cudaSuccess);
  // The capture ends whatever f does: a capture left open makes every
  // later CUDA call of the process fail.
  try {
    CudaStreamGuard g(s);
    f();
  } catch (const std::exception &e) {
    ADD_FAILURE() << "under capture: " << e.what();
  }
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(cs, &graph), cudaSuccess);
  size_t n = 0;
  if (graph) {
    cudaGraphGetNodes(graph, nullptr, &n);
    cudaGraphDestroy(graph);
  }
  return n;
}

TEST_F(CudaInterop, EagerOpsGoOnTheCurrentStream) {
  // The captured ops allocate: only from blocks the caching allocator
  // holds, since cudaMalloc is not allowed while a stream captures.
  if (rt::env_flag("KILN_NO_CUDA_MEMORY_CACHING"))
    GTEST_SKIP() << "needs the caching allocator (KILN_NO_CUDA_MEMORY_CACHING is set)";
  CudaStream s = create_cuda_stream(0);
  Tensor x = ones({1 << 16}, f32, d);
  auto work = [&] {
    Tensor y = sin(x) + 1.0;
    Tensor z = sum(y);
  };
  {
    CudaStreamGuard g(s); // warm: the blocks are cached on s
    work();
    synchronize(s);
  }
  EXPECT_GE(captured_nodes(s, work), 3u);
  destroy_cuda_stream(s);
}

#if defined(KILN_TEST_FATBIN)
TEST_F(CudaInterop, CompiledKernelLaunchesGoOnTheCurrentStream) {
  static rt::KernelModule m{kiln_test_fatbin, "test_module"};
  static rt::KernelRef k{&m, "kiln_test_affine"};
  CudaStream s = create_cuda_stream(0);
  const int n = 256;
  Tensor in = arange(n, f32, d), out = zeros({n}, f32, d);
  float *o = out.data<float>();
  const float *i = in.data<float>();
  float scale = 2.0f;
  int count = n;
  void *args[] = {&o, &i, &scale, &count};
  rt::launch(k, d, {1, 1, 1}, {256, 1, 1}, args); // load the module first
  synchronize(d);
  EXPECT_EQ(captured_nodes(s, [&] {
              rt::launch(k, d, {1, 1, 1}, {256, 1, 1}, args);
            }),
            1u);
  destroy_cuda_stream(s);
}
#endif
#endif

} // namespace
