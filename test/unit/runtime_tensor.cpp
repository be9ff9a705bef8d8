// Tensor basics: Dims, views and their strides, contiguity, refcounting,
// factories, copies between layouts, dtypes and devices.
#include "runtime_reference.h"

#include <omp.h>

#include <numeric>

using namespace kiln;
using namespace kt;

namespace {

std::vector<double> iota_values(int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

class TensorOn : public kt::DeviceTest {
protected:
  // [rows, cols] holding 0, 1, 2, ... on the test's device.
  Tensor iota(int64_t rows, int64_t cols, DType dt = f32) {
    return from_vector(iota_values(rows * cols), {rows, cols}).to(dt).to(dev());
  }
};

TEST(Dims, BasicsAndRankLimit) {
  Dims d{2, 3, 4};
  EXPECT_EQ(d.rank(), 3);
  EXPECT_EQ(d.str(), "[2, 3, 4]");
  EXPECT_EQ(Dims{}.str(), "[]");
  EXPECT_EQ(d.vec(), (std::vector<int64_t>{2, 3, 4}));
  d.push_back(5);
  EXPECT_EQ(d, (Dims{2, 3, 4, 5}));
  EXPECT_FALSE(d == (Dims{2, 3, 4}));
  EXPECT_KILN_ERROR((Dims{1, 2, 3, 4, 5, 6, 7, 8, 9}),
                    "rank 9 is more than the maximum rank 8");
  Dims full{1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_KILN_ERROR(full.push_back(1), "maximum rank 8");
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({2, 0, 4}), (Dims{4, 4, 1}));
}

TEST(Device, Names) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cuda(1).str(), "cuda:1");
  std::ostringstream s;
  s << Device::cuda() << " " << f16 << " " << empty({2, 3});
  EXPECT_EQ(s.str(), "cuda:0 f16 Tensor(f32[2, 3], cpu)");
  EXPECT_EQ(Tensor().str(), "Tensor(undefined)");
}

TEST_P(TensorOn, SizesStridesAndNegativeDims) {
  Tensor t = zeros({2, 3, 4}, f16, dev());
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.size(-3), 2);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.stride(-2), 4);
  EXPECT_EQ(t.element_size(), 2u);
  EXPECT_EQ(t.device(), dev());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_KILN_ERROR(t.size(3), "kiln::Tensor::size: dim 3 is out of range for a "
                               "tensor of rank 3");
  EXPECT_KILN_ERROR(t.size(-4), "dim -4 is out of range");
  Tensor s = zeros({}, f32, dev());
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<float>(), 0.0f);
}

TEST_P(TensorOn, TransposeSliceExpandValuesAndStrides) {
  Tensor t = iota(3, 4);
  Tensor tt = t.transpose(0, 1);
  EXPECT_EQ(tt.sizes(), (Dims{4, 3}));
  EXPECT_EQ(tt.strides(), (Dims{1, 4}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.storage(), t.storage());
  EXPECT_EQ(kt::values(tt), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));

  Tensor s = t.slice(1, 1, 4, 2); // columns 1 and 3
  EXPECT_EQ(s.sizes(), (Dims{3, 2}));
  EXPECT_EQ(s.strides(), (Dims{4, 2}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(kt::values(s), (std::vector<double>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(kt::values(t.slice(0, -2, 100)),
            (std::vector<double>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(t.slice(0, 2, 1).numel(), 0);
  EXPECT_KILN_ERROR(t.slice(0, 0, 3, 0), "step must be positive");

  Tensor row = t.slice(0, 1, 2); // [1, 4]
  Tensor e = row.expand({3, -1});
  EXPECT_EQ(e.sizes(), (Dims{3, 4}));
  EXPECT_EQ(e.strides(), (Dims{0, 1}));
  EXPECT_FALSE(e.is_contiguous());
  EXPECT_EQ(kt::values(e), (std::vector<double>{4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7}));
  Tensor e3 = row.expand({2, 3, 4});
  EXPECT_EQ(e3.strides(), (Dims{0, 0, 1}));
  EXPECT_KILN_ERROR(t.expand({3, 5}), "kiln::Tensor::expand: cannot expand shape "
                                      "[3, 4] to [3, 5]");
  EXPECT_KILN_ERROR(t.expand({4}), "cannot expand shape [3, 4] to [4]");

  // permute: dim i of the result is dim order[i].
  Tensor p = t.unsqueeze(0).permute({2, 0, 1}); // [4, 1, 3]
  EXPECT_EQ(p.sizes(), (Dims{4, 1, 3}));
  EXPECT_EQ(p.storage(), t.storage());
  EXPECT_EQ(kt::values(p), kt::values(tt));
  EXPECT_EQ(t.permute({-1, 0}).strides(), (Dims{1, 4}));
  EXPECT_KILN_ERROR(t.permute({0, 0}), "dim 0 appears twice");
  EXPECT_KILN_ERROR(t.permute({0}), "names 1 dims of a tensor of rank 2");
}

TEST_P(TensorOn, ViewReshapeUnsqueezeSqueeze) {
  Tensor t = iota(3, 4);
  Tensor v = t.view({2, -1, 2});
  EXPECT_EQ(v.sizes(), (Dims{2, 3, 2}));
  EXPECT_EQ(v.strides(), (Dims{6, 2, 1}));
  EXPECT_EQ(v.storage(), t.storage());
  EXPECT_EQ(kt::values(v), kt::values(t));
  EXPECT_KILN_ERROR(t.view({4, 5}), "kiln::Tensor::view: shape [4, 5] is invalid "
                                    "for a tensor of 12 elements");
  EXPECT_KILN_ERROR(t.view({-1, -1}), "only one dimension can be -1");
  EXPECT_KILN_ERROR(t.view({5, -1}), "shape [5, -1] is invalid for a tensor of 12");

  // A transposed tensor cannot be flattened without a copy.
  Tensor tt = t.transpose(0, 1);
  EXPECT_KILN_ERROR(tt.view({12}), "without a copy (use reshape)");
  // ...but split dims can be, and slices keep their strides.
  Tensor split = tt.view({2, 2, 3});
  EXPECT_EQ(split.strides(), (Dims{2, 1, 4}));
  EXPECT_EQ(kt::values(split), kt::values(tt));
  Tensor r = tt.reshape({12});
  EXPECT_NE(r.storage(), t.storage()); // copied
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_EQ(kt::values(r), kt::values(tt));
  Tensor r2 = t.reshape({4, 3});
  EXPECT_EQ(r2.storage(), t.storage()); // a view

  Tensor u = t.unsqueeze(1);
  EXPECT_EQ(u.sizes(), (Dims{3, 1, 4}));
  EXPECT_EQ(u.strides(), (Dims{4, 4, 1}));
  EXPECT_TRUE(u.is_contiguous());
  Tensor ue = t.unsqueeze(-1);
  EXPECT_EQ(ue.sizes(), (Dims{3, 4, 1}));
  EXPECT_EQ(ue.strides(), (Dims{4, 1, 1}));
  EXPECT_EQ(u.squeeze(1).sizes(), (Dims{3, 4}));
  EXPECT_EQ(u.squeeze(0).sizes(), (Dims{3, 1, 4})); // size 3: unchanged
  EXPECT_EQ(kt::values(u.squeeze(-2)), kt::values(t));
  Tensor r8 = zeros({1, 1, 1, 1, 1, 1, 1, 1}, f32, dev());
  EXPECT_KILN_ERROR(r8.unsqueeze(0), "cannot gain a dim (maximum rank 8)");
  EXPECT_KILN_ERROR(t.unsqueeze(3), "dim 3 is out of range");
}

TEST_P(TensorOn, ContiguityFlags) {
  EXPECT_TRUE(zeros({0, 3}, f32, dev()).is_contiguous());
  Tensor t = iota(4, 1);
  // Size-1 dims may have any stride.
  EXPECT_TRUE(t.transpose(0, 1).is_contiguous());
  EXPECT_TRUE(iota(1, 5).expand({1, 5}).is_contiguous());
  EXPECT_FALSE(iota(1, 5).expand({2, 5}).is_contiguous());
  EXPECT_TRUE(iota(4, 6).slice(0, 1, 3).is_contiguous());
  EXPECT_FALSE(iota(4, 6).slice(1, 1, 3).is_contiguous());
  Tensor c = iota(4, 6).transpose(0, 1).contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (Dims{4, 1}));
}

TEST_P(TensorOn, ViewsShareStorageAndKeepItAlive) {
  Tensor v;
  {
    Tensor t = iota(2, 3);
    EXPECT_EQ(t.storage()->refs.load(), 1);
    v = t.transpose(0, 1);
    EXPECT_EQ(t.storage()->refs.load(), 2);
    Tensor copy = v;
    EXPECT_EQ(t.storage()->refs.load(), 3);
    Tensor moved = std::move(copy);
    EXPECT_FALSE(copy.defined());
    EXPECT_EQ(t.storage()->refs.load(), 3);
    Tensor assigned = zeros({1}, f32, dev());
    assigned = moved; // drops the zeros, shares t's storage
    EXPECT_EQ(t.storage()->refs.load(), 4);
    const Tensor &alias = assigned;
    assigned = alias; // self-assignment keeps the reference
    EXPECT_EQ(t.storage()->refs.load(), 4);
    EXPECT_EQ(kt::values(assigned), kt::values(v));
    assigned = Tensor();
    EXPECT_EQ(t.storage()->refs.load(), 3);
  }
  EXPECT_EQ(v.storage()->refs.load(), 1);
  EXPECT_EQ(kt::values(v), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Writing through a view changes the base.
  Tensor base = zeros({2, 3}, f32, dev());
  Tensor col = base.slice(1, 1, 2);
  col += 5.0;
  EXPECT_EQ(kt::values(base), (std::vector<double>{0, 5, 0, 0, 5, 0}));
}

TEST_P(TensorOn, Factories) {
  for (DType dt : kt::all_dtypes()) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor z = zeros({5, 7}, dt, dev());
    EXPECT_EQ(z.dtype(), dt);
    EXPECT_EQ(z.device(), dev());
    EXPECT_EQ(kt::values(z), std::vector<double>(35, 0.0));
    EXPECT_EQ(kt::values(ones({3}, dt, dev())), std::vector<double>(3, 1.0));
    double v = dt == b8 ? 1.0 : is_integral(dt) ? -7.0 : -2.5;
    EXPECT_EQ(kt::values(full({100003}, v, dt, dev())),
              std::vector<double>(100003, v));
    EXPECT_EQ(empty({4, 0}, dt, dev()).numel(), 0);
  }
  EXPECT_EQ(kt::values(arange(5, i64, dev())), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(kt::values(arange(1.0, 2.0, 0.25, f64, dev())),
            (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(kt::values(arange(3.0, 0.0, -1.0, f32, dev())),
            (std::vector<double>{3, 2, 1}));
  EXPECT_EQ(arange(0, f32, dev()).numel(), 0);
  EXPECT_KILN_ERROR(arange(0.0, 1.0, 0.0), "step nonzero");
  EXPECT_KILN_ERROR(arange(0.0, 1.0, -1.0), "goes away from end");
  EXPECT_KILN_ERROR(zeros({2, -1}), "kiln::zeros: negative size -1 in shape [2, -1]");
}

TEST_P(TensorOn, FromVectorToVectorItem) {
  Tensor f = from_vector(std::vector<float>{1.5f, -2.0f, 3.25f}, {3}, dev());
  EXPECT_EQ(f.dtype(), f32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_EQ(f.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(f.to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(from_vector(std::vector<double>{0.1}, {1}, dev()).dtype(), f64);
  EXPECT_EQ(from_vector(std::vector<double>{0.1}, {1}, dev()).item<double>(), 0.1);
  Tensor i = from_vector(std::vector<int64_t>{1LL << 40, -3}, {2}, dev());
  EXPECT_EQ(i.dtype(), i64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1LL << 40, -3}));
  Tensor i32t = from_vector(std::vector<int32_t>{7, 8, 9, 10}, {2, 2}, dev());
  EXPECT_EQ(i32t.dtype(), i32);
  EXPECT_EQ(i32t.transpose(0, 1).to_vector<int32_t>(),
            (std::vector<int32_t>{7, 9, 8, 10}));
  Tensor b = from_vector(std::vector<uint8_t>{0, 1, 2}, {3}, dev());
  EXPECT_EQ(b.dtype(), b8);
  EXPECT_EQ(b.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1}));
  Tensor bb = from_vector(std::vector<bool>{true, false}, {2}, dev());
  EXPECT_EQ(bb.dtype(), b8);
  EXPECT_EQ(bb.to_vector<double>(), (std::vector<double>{1, 0}));
  EXPECT_TRUE(bb.slice(0, 0, 1).item<bool>());
  EXPECT_EQ(from_vector(std::vector<float>{4.0f}).item<int64_t>(), 4);
  EXPECT_KILN_ERROR(f.item<float>(), "kiln::Tensor::item: the tensor has 3 "
                                     "elements, expected 1");
  EXPECT_KILN_ERROR(from_vector(std::vector<float>(6), {2, 4}, dev()),
                    "kiln::from_vector: 6 values do not fill shape [2, 4] (8 "
                    "elements)");
  EXPECT_KILN_ERROR(Tensor().to_vector<float>(), "undefined");
}

// set_fill_uninitialized: every new tensor, an op's output too, starts as
// NaN / -12345 / true; off, nothing is written (not checked: memory may hold
// anything).
TEST_P(TensorOn, FillUninitializedPoisonsNewTensors) {
  kiln::set_fill_uninitialized(true);
  for (DType dt : {f32, f64, f16, bf16}) {
    for (double v : empty({3, 5}, dt, dev()).to_vector<double>())
      EXPECT_TRUE(std::isnan(v)) << dtype_name(dt);
  }
  for (DType dt : {i32, i64})
    EXPECT_EQ(empty({4}, dt, dev()).to_vector<double>(), std::vector<double>(4, -12345.0));
  EXPECT_EQ(empty({4}, b8, dev()).to_vector<double>(), std::vector<double>(4, 1.0));
  // an op's output is filled before the op writes it: a slice of it that
  // the op writes reads back right, and zeros stay zeros
  Tensor z = zeros({257}, f32, dev());
  reset_stats();
  Tensor one = z + 1.0;
  EXPECT_EQ(stats().kernel_launches, 1u); // the add, not the fill
  EXPECT_EQ(one.to_vector<double>(), std::vector<double>(257, 1.0));
  kiln::set_fill_uninitialized(false);
  EXPECT_FALSE(kiln::fill_uninitialized());
}

TEST_P(TensorOn, CopiesBetweenDtypesLayoutsAndDevices) {
  Tensor t = from_vector(std::vector<double>{-1.75, 0.0, 2.5, 3.99, -0.5, 7.0},
                         {2, 3}, dev());
  EXPECT_EQ(kt::values(t.to(i32)), (std::vector<double>{-1, 0, 2, 3, 0, 7}));
  EXPECT_EQ(kt::values(t.to(b8)), (std::vector<double>{1, 0, 1, 1, 1, 1}));
  EXPECT_EQ(kt::values(t.to(f16)), (std::vector<double>{-1.75, 0, 2.5, 3.990234375, -0.5, 7}));
  EXPECT_EQ(t.to(f64).storage(), t.storage()); // same dtype: the same tensor

  Tensor c = t.clone();
  EXPECT_NE(c.storage(), t.storage());
  c += 1.0;
  EXPECT_EQ(kt::values(t)[0], -1.75);

  // copy_: broadcasting, converting, into a strided destination.
  Tensor dst = zeros({3, 2}, f16, dev());
  dst.transpose(0, 1).copy_(from_vector(std::vector<float>{1, 2, 3}, {3}, dev()));
  EXPECT_EQ(kt::values(dst), (std::vector<double>{1, 1, 2, 2, 3, 3}));
  EXPECT_KILN_ERROR(dst.copy_(zeros({4}, f32, dev())),
                    "source shape [4] does not broadcast to [3, 2]");
  EXPECT_KILN_ERROR(dst.expand({2, 3, 2}).copy_(zeros({3, 2}, f32, dev())),
                    "several of its elements share one memory location");
  // Overlapping source and destination: as if the source were read first.
  Tensor o = from_vector(std::vector<float>{1, 2, 3, 4, 5}, {5}, dev());
  o.slice(0, 1, 5).copy_(o.slice(0, 0, 4));
  EXPECT_EQ(kt::values(o), (std::vector<double>{1, 1, 2, 3, 4}));

  // Across devices (the CPU twin copies CPU to CPU).
  Tensor h = from_vector(iota_values(12), {3, 4});
  Tensor d = h.transpose(0, 1).to(dev());
  EXPECT_EQ(d.device(), dev());
  if (dev().is_cuda()) {
    EXPECT_TRUE(d.is_contiguous()); // to() another device makes it contiguous
  }
  EXPECT_EQ(kt::values(d), kt::values(h.transpose(0, 1)));
  Tensor back = zeros({4, 3}, i64);
  back.copy_(d);
  EXPECT_EQ(kt::values(back), kt::values(d));
  Tensor into = zeros({4, 3}, bf16, dev());
  into.copy_(h.transpose(0, 1));
  EXPECT_EQ(kt::values(into), kt::values(d));
}

TEST_P(TensorOn, RandomIsDeterministicPerSeedAndFreshPerCall) {
  manual_seed(123);
  Tensor a = randn({1000}, f32, dev());
  Tensor b = randn({1000}, f32, dev());
  manual_seed(123);
  Tensor a2 = randn({1000}, f32, dev());
  EXPECT_EQ(kt::values(a), kt::values(a2));
  EXPECT_NE(kt::values(a), kt::values(b));
  // The same seed gives the same numbers on the CPU and the GPU, whatever
  // the thread count.
  manual_seed(9);
  std::vector<double> ref = kt::values(rand({70001}, f64, Device::cpu()));
  int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  manual_seed(9);
  std::vector<double> one = kt::values(rand({70001}, f64, dev()));
  omp_set_num_threads(threads);
  EXPECT_EQ(ref, one);

  manual_seed(5);
  std::vector<double> n = kt::values(randn({200000}, f64, dev()));
  double mean = 0, sq = 0;
  for (double x : n) {
    ASSERT_TRUE(std::isfinite(x));
    mean += x;
    sq += x * x;
  }
  mean /= n.size();
  double var = sq / n.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.02);
  for (DType dt : {f32, f16, bf16, f64}) {
    std::vector<double> u = kt::values(rand({100000}, dt, dev()));
    double lo = 1, hi = 0, sum = 0;
    for (double x : u) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    EXPECT_GE(lo, 0.0) << dtype_name(dt);
    EXPECT_LT(hi, 1.0) << dtype_name(dt);
    EXPECT_NEAR(sum / u.size(), 0.5, 0.01) << dtype_name(dt);
  }
  EXPECT_KILN_ERROR(randn({2}, i32, dev()), "kiln::randn: dtype i32 is not a "
                                            "floating type");
}

INSTANTIATE_TEST_SUITE_P(Devices, TensorOn, KT_DEVICES);

// Without a GPU, asking for one is a clear error (this runs everywhere:
// with a GPU it asks for a device index that does not exist).
TEST(CudaDevices, MissingGpuIsAnError) {
  int n = cuda_device_count();
  EXPECT_EQ(cuda_available(), n > 0);
  Device missing = Device::cuda(n > 0 ? n : 0);
  EXPECT_KILN_ERROR(empty({2}, f32, missing), "no CUDA GPU");
  EXPECT_KILN_ERROR(zeros({2}, f32, missing), "kiln::zeros: no CUDA GPU");
  EXPECT_KILN_ERROR(randn({2}, f32, missing), "kiln::randn: no CUDA GPU");
  EXPECT_KILN_ERROR(ones({2}).to(missing), "no CUDA GPU");
  if (n == 0)
    EXPECT_NO_THROW(synchronize()); // nothing to wait for
  else
    EXPECT_NO_THROW(synchronize(Device::cuda(0)));
}

} // namespace
