// Matrix products (kiln/matmul.h, kiln/gemm.h) against a float64 reference
// computed here with naive loops, on the CPU (OpenBLAS) and CUDA (cuBLASLt;
// the twins skip visibly without a GPU). Outputs start poisoned (NaN), so an
// element a path forgets to write fails.
//
// Tolerance for an output element whose reference is r, with
// mag = |alpha| * sum_p |a_ip b_pj| + |beta c_ij| + |bias_j|:
//   atol + rtol * |r| + (4 sqrt(k) u_acc + u_out) * mag
// atol and rtol are torch.testing.assert_close's defaults for the output
// dtype (torch/testing/_comparison.py: f32 1.3e-6/1e-5, f16 1e-3/1e-5, bf16
// 1.6e-2/1e-5, f64 1e-7/1e-7). The mag term bounds the accumulation error:
// summing k products in a precision of unit roundoff u_acc (f32 for f32,
// f16 and bf16 inputs; f64 for f64) errs by at most k u_acc mag (Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1) and, with
// rounding errors of random sign, by about sqrt(k) u_acc mag (Higham and
// Mary, SIAM J. Sci. Comput. 41(5), 2019); 4 sqrt(k) is a safe multiple of
// the latter for these sizes. u_out covers one rounding of an intermediate
// (a GEMM output rounded before the bias or activation is applied). The
// bound still fails a product that accumulates in f16/bf16 or rounds f32
// inputs to TF32 (errors near 2^-11 or 2^-8 of mag).
#include "runtime_test_util.h"

#include <kiln/gemm.h>
#include <kiln/matmul.h>

#include <algorithm>
#include <cmath>
#include <thread>

using namespace kiln;
using namespace kt;

namespace {

// --- the float64 reference ---

struct Ref {
  Dims shape;
  std::vector<double> v, mag;
  int64_t k = 0;
};

std::vector<int64_t> shape_of(const Dims &d) { return d.vec(); }

// Index into a tensor of shape `src` (right-aligned, broadcast) of element
// `i` of shape `dst`, both row-major.
int64_t broadcast_index(const std::vector<int64_t> &dst,
                        const std::vector<int64_t> &src, int64_t i) {
  int64_t idx = 0, mul = 1;
  for (int d = int(dst.size()) - 1, s = int(src.size()) - 1; d >= 0; --d, --s) {
    int64_t c = i % dst[d];
    i /= dst[d];
    if (s >= 0) {
      if (src[s] != 1)
        idx += c * mul;
      mul *= src[s];
    }
  }
  return idx;
}

// torch.matmul's shape rules, written out independently of the runtime.
Ref ref_matmul(const Tensor &a, const Tensor &b) {
  std::vector<double> av = values(a), bv = values(b);
  std::vector<int64_t> as = shape_of(a.sizes()), bs = shape_of(b.sizes());
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1)
    as.insert(as.begin(), 1);
  if (b1)
    bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  std::vector<int64_t> ab(as.begin(), as.end() - 2),
      bb(bs.begin(), bs.end() - 2);
  size_t r = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), r - ab.size(), 1);
  bb.insert(bb.begin(), r - bb.size(), 1);
  std::vector<int64_t> batch(r);
  int64_t nbatch = 1;
  for (size_t i = 0; i < r; ++i) {
    batch[i] = ab[i] == 1 ? bb[i] : ab[i];
    nbatch *= batch[i];
  }
  Ref out;
  out.k = k;
  out.v.assign(size_t(nbatch * m * n), 0.0);
  out.mag.assign(out.v.size(), 0.0);
  for (int64_t e = 0; e < nbatch; ++e) {
    int64_t ea = broadcast_index(batch, ab, e),
            eb = broadcast_index(batch, bb, e);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, g = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = av[size_t((ea * m + i) * k + p)] *
                     bv[size_t((eb * k + p) * n + j)];
          s += x;
          g += std::fabs(x);
        }
        out.v[size_t((e * m + i) * n + j)] = s;
        out.mag[size_t((e * m + i) * n + j)] = g;
      }
  }
  for (int64_t s : batch)
    out.shape.push_back(s);
  if (!a1)
    out.shape.push_back(m);
  if (!b1)
    out.shape.push_back(n);
  return out;
}

// r = alpha * r + beta * c (c broadcast to r's shape).
void add_scaled(Ref &r, double alpha, const Tensor &c, double beta) {
  std::vector<double> cv = c.defined() ? values(c) : std::vector<double>();
  std::vector<int64_t> dst = shape_of(r.shape),
                       src = c.defined() ? shape_of(c.sizes())
                                         : std::vector<int64_t>();
  for (size_t i = 0; i < r.v.size(); ++i) {
    r.v[i] *= alpha;
    r.mag[i] *= std::fabs(alpha);
    if (c.defined() && beta != 0) {
      double x = beta * cv[size_t(broadcast_index(dst, src, int64_t(i)))];
      r.v[i] += x;
      r.mag[i] += std::fabs(x);
    }
  }
}

void apply_act(Ref &r, rt::Epilogue e) {
  for (double &x : r.v)
    switch (e) {
    case rt::Epilogue::Relu:
      x = x < 0 ? 0 : x;
      break;
    case rt::Epilogue::Gelu:
      x = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      break;
    case rt::Epilogue::GeluTanh:
      x = 0.5 * x *
          (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      break;
    default:
      break;
    }
}

struct Tol {
  double rtol, atol, u_acc, u_out;
};
Tol tol_for(DType t) {
  switch (t) {
  case DType::f64:
    return {1e-7, 1e-7, 0x1p-53, 0x1p-53};
  case DType::f16:
    return {1e-3, 1e-5, 0x1p-24, 0x1p-11};
  case DType::bf16:
    return {1.6e-2, 1e-5, 0x1p-24, 0x1p-8};
  default:
    return {1.3e-6, 1e-5, 0x1p-24, 0x1p-24};
  }
}

void expect_matches(const Tensor &out, const Ref &r, const std::string &what) {
  ASSERT_TRUE(out.defined()) << what;
  ASSERT_EQ(out.sizes(), r.shape) << what;
  std::vector<double> v = values(out);
  Tol t = tol_for(out.dtype());
  double acc = 4 * std::sqrt(double(std::max<int64_t>(r.k, 1))) * t.u_acc;
  int bad = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    // 1.2: the activations' slopes stay below it (gelu's peaks at 1.13).
    double tol = 1.2 * (t.atol + t.rtol * std::fabs(r.v[i]) +
                        (acc + t.u_out) * r.mag[i]);
    if (!(std::fabs(v[i] - r.v[i]) <= tol) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << v[i]
                    << ", the float64 reference " << r.v[i] << " (tolerance "
                    << tol << ")";
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << v.size()
                    << " elements out of tolerance";
}

std::string label(const Tensor &a, const Tensor &b) {
  return dtype_name(a.dtype()) + std::string(" ") + a.sizes().str() + " @ " +
         b.sizes().str();
}

const DType kFloats[] = {f32, f16, bf16, f64};

uint64_t launches() { return stats().kernel_launches; }

class Matmul : public DeviceTest {
protected:
  void SetUp() override {
    DeviceTest::SetUp();
    set_fill_uninitialized(true);
    manual_seed(
        uint64_t(::testing::UnitTest::GetInstance()->random_seed()) * 7919 +
        std::hash<std::string>()(
            ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override { set_fill_uninitialized(false); }
  Tensor randn_(Dims s, DType t = f32) { return randn(s, t, dev()); }
};

// --- shapes, dtypes, layouts ---

TEST_P(Matmul, TwoDimEveryDtypeOddShapes) {
  const int64_t shapes[][3] = {{1, 1, 1},     {7, 1, 33},    {33, 7, 1},
                               {1, 4097, 7},  {4097, 7, 33}, {33, 33, 33},
                               {64, 128, 96}, {7, 33, 4097}};
  for (DType t : kFloats)
    for (auto &s : shapes) {
      Tensor a = randn_({s[0], s[1]}, t), b = randn_({s[1], s[2]}, t);
      Tensor c = matmul(a, b);
      EXPECT_EQ(c.dtype(), t);
      EXPECT_EQ(c.device(), dev());
      expect_matches(c, ref_matmul(a, b), label(a, b));
    }
}

TEST_P(Matmul, TransposedAndSlicedOperandsNeedNoCopy) {
  for (DType t : kFloats) {
    // Transposed views: the library reads them as stored (one launch).
    Tensor at = randn_({33, 7}, t).transpose(0, 1); // 7 x 33, strides (1, 7)
    Tensor bt = randn_({5, 33}, t).transpose(0, 1); // 33 x 5
    reset_stats();
    Tensor c = matmul(at, bt);
    EXPECT_EQ(launches(), 1u) << "transposed operands were copied";
    expect_matches(c, ref_matmul(at, bt), "transposed " + label(at, bt));
    // Slices: leading dimensions past the row length, offset starts.
    Tensor big = randn_({50, 70}, t);
    Tensor as = big.slice(0, 3, 10).slice(1, 5, 38); // 7 x 33, ld 70
    Tensor bs = big.slice(0, 11, 44).slice(1, 1, 6); // 33 x 5, ld 70
    reset_stats();
    c = matmul(as, bs);
    EXPECT_EQ(launches(), 1u) << "sliced operands were copied";
    expect_matches(c, ref_matmul(as, bs), "sliced " + label(as, bs));
    // Sliced and transposed at once.
    Tensor ast = big.slice(0, 2, 35).slice(1, 4, 11).transpose(0, 1);
    reset_stats();
    c = matmul(ast, bs);
    EXPECT_EQ(launches(), 1u);
    expect_matches(c, ref_matmul(ast, bs), "sliced transposed");
    // Neither stride 1: copied to contiguous first (one more launch).
    Tensor every2 =
        big.slice(1, 0, 66, 2).slice(0, 0, 7); // 7 x 33, strides (70, 2)
    reset_stats();
    c = matmul(every2, bs);
    EXPECT_EQ(launches(), 2u) << "a copy, then the product";
    expect_matches(c, ref_matmul(every2, bs), "stride-2 columns");
  }
}

TEST_P(Matmul, VectorOperands) {
  for (DType t : kFloats) {
    Tensor x = randn_({33}, t), y = randn_({33}, t);
    Tensor d = matmul(x, y);
    EXPECT_EQ(d.dim(), 0) << "a dot product is 0-d";
    expect_matches(d, ref_matmul(x, y), "dot");
    // Strided vectors (every other element) need no copy.
    Tensor xs = randn_({66}, t).slice(0, 0, 66, 2);
    reset_stats();
    d = matmul(xs, y);
    EXPECT_EQ(launches(), 1u);
    expect_matches(d, ref_matmul(xs, y), "strided dot");
    Tensor m = randn_({33, 7}, t), mt = randn_({5, 33}, t);
    expect_matches(matmul(x, m), ref_matmul(x, m), "1-D @ 2-D");
    expect_matches(matmul(mt, xs), ref_matmul(mt, xs), "2-D @ strided 1-D");
    Tensor b3 = randn_({4, 33, 6}, t), a3 = randn_({4, 5, 33}, t);
    expect_matches(matmul(x, b3), ref_matmul(x, b3), "1-D @ 3-D");
    expect_matches(matmul(a3, y), ref_matmul(a3, y), "3-D @ 1-D");
    EXPECT_EQ(matmul(x, b3).sizes(), (Dims{4, 6}));
    EXPECT_EQ(matmul(a3, y).sizes(), (Dims{4, 5}));
  }
}

TEST_P(Matmul, BatchedWithBroadcasting) {
  for (DType t : kFloats) {
    Tensor a = randn_({2, 1, 3, 7, 33}, t), b = randn_({4, 1, 33, 5}, t);
    Tensor c = matmul(a, b);
    EXPECT_EQ(c.sizes(), (Dims{2, 4, 3, 7, 5}));
    expect_matches(c, ref_matmul(a, b), "broadcast batch " + label(a, b));
    // [B, m, k] @ [k, n]: one GEMM of B * m rows.
    Tensor x = randn_({3, 33, 7}, t), w = randn_({7, 5}, t);
    reset_stats();
    c = matmul(x, w);
    EXPECT_EQ(launches(), 1u);
    expect_matches(c, ref_matmul(x, w), "folded " + label(x, w));
    // [m, k] @ [B, k, n]: one strided-batched GEMM, A's batch stride 0.
    Tensor a2 = randn_({7, 33}, t), b3 = randn_({3, 33, 5}, t);
    reset_stats();
    c = matmul(a2, b3);
    EXPECT_EQ(launches(), 1u);
    expect_matches(c, ref_matmul(a2, b3), "broadcast A " + label(a2, b3));
    // Batch dims that no single stride reaches: one call per outer entry.
    Tensor p = randn_({4, 3, 7, 33}, t).transpose(0, 1); // [3, 4, 7, 33]
    Tensor q = randn_({3, 4, 33, 5}, t);
    reset_stats();
    c = matmul(p, q);
    EXPECT_EQ(launches(), 3u);
    expect_matches(c, ref_matmul(p, q), "permuted batch");
    // bmm
    Tensor ba = randn_({5, 7, 33}, t), bb = randn_({5, 33, 1}, t);
    expect_matches(bmm(ba, bb), ref_matmul(ba, bb), "bmm");
    expect_matches(bmm(ba.transpose(1, 2).contiguous().transpose(1, 2), bb),
                   ref_matmul(ba, bb), "bmm transposed");
  }
}

TEST_P(Matmul, EmptyDims) {
  for (DType t : kFloats) {
    reset_stats();
    EXPECT_EQ(matmul(randn_({0, 7}, t), randn_({7, 5}, t)).sizes(),
              (Dims{0, 5}));
    EXPECT_EQ(matmul(randn_({7, 3}, t), randn_({3, 0}, t)).sizes(),
              (Dims{7, 0}));
    EXPECT_EQ(matmul(randn_({0, 7, 3}, t), randn_({3, 5}, t)).sizes(),
              (Dims{0, 7, 5}));
    EXPECT_EQ(launches(), 0u) << "an empty result launches nothing";
    // k == 0: zeros, not the poison.
    Tensor z = matmul(randn_({7, 0}, t), randn_({0, 5}, t));
    EXPECT_EQ(values(z), std::vector<double>(35, 0.0));
    Tensor zd = matmul(randn_({0}, t), randn_({0}, t));
    EXPECT_EQ(values(zd), std::vector<double>{0.0});
    Tensor zb = matmul(randn_({3, 7, 0}, t), randn_({0, 5}, t));
    EXPECT_EQ(values(zb), std::vector<double>(105, 0.0));
    // k == 0 with an addend: beta * c (plus the bias, for linear).
    Tensor c = randn_({7, 5}, t);
    Tensor r = addmm(c, randn_({7, 0}, t), randn_({0, 5}, t), 0.5, 2);
    Ref ref{c.sizes(), std::vector<double>(35, 0.0),
            std::vector<double>(35, 0.0), 0};
    add_scaled(ref, 2, c, 0.5);
    expect_matches(r, ref, "addmm k == 0");
    Tensor bias = randn_({5}, t);
    Tensor l = linear(randn_({7, 0}, t), randn_({5, 0}, t), bias);
    ref = {Dims{7, 5}, std::vector<double>(35, 0.0),
           std::vector<double>(35, 0.0), 0};
    add_scaled(ref, 1, bias, 1);
    expect_matches(l, ref, "linear k == 0");
  }
}

TEST_P(Matmul, Linear) {
  for (DType t : kFloats) {
    Tensor x = randn_({2, 3, 33}, t), w = randn_({7, 33}, t),
           b = randn_({7}, t);
    Ref ref = ref_matmul(x, w.transpose(0, 1));
    reset_stats();
    Tensor y = linear(x, w);
    if (dev().is_cpu())
      EXPECT_EQ(launches(), 1u) << "w^T read in place, rows folded";
    expect_matches(y, ref, "linear without bias");
    add_scaled(ref, 1, b, 1);
    reset_stats();
    y = linear(x, w, b);
    if (dev().is_cpu())
      EXPECT_EQ(launches(), 1u) << "the bias is the GEMM's epilogue";
    expect_matches(y, ref, "linear with bias");
    // A bias of another broadcastable shape is added through beta * C.
    Tensor b2 = randn_({3, 1}, t);
    ref = ref_matmul(x, w.transpose(0, 1));
    add_scaled(ref, 1, b2, 1);
    expect_matches(linear(x, w, b2), ref, "linear with a [3, 1] bias");
    // A strided bias is packed first.
    Tensor bs = randn_({14}, t).slice(0, 0, 14, 2);
    ref = ref_matmul(x, w.transpose(0, 1));
    add_scaled(ref, 1, bs, 1);
    expect_matches(linear(x, w, bs), ref, "linear with a strided bias");
    // 1-D input, 1-D weight.
    Tensor x1 = randn_({33}, t), w1 = randn_({33}, t);
    ref = ref_matmul(x1, w.transpose(0, 1));
    add_scaled(ref, 1, b, 1);
    expect_matches(linear(x1, w, b), ref, "linear of a vector");
    Tensor y1 = linear(x, w1);
    EXPECT_EQ(y1.sizes(), (Dims{2, 3}));
    expect_matches(y1, ref_matmul(x, w1), "linear with a 1-D weight");
    // A transposed (not contiguous) input.
    Tensor xt = randn_({33, 5}, t).transpose(0, 1);
    ref = ref_matmul(xt, w.transpose(0, 1));
    add_scaled(ref, 1, b, 1);
    reset_stats();
    expect_matches(linear(xt, w, b), ref, "linear of a transposed input");
    if (dev().is_cpu())
      EXPECT_EQ(launches(), 1u);
  }
}

TEST_P(Matmul, Addmm) {
  for (DType t : kFloats) {
    Tensor a = randn_({7, 33}, t), b = randn_({33, 5}, t);
    for (Dims cs : {Dims{5}, Dims{1, 5}, Dims{7, 1}, Dims{7, 5}, Dims{}}) {
      Tensor c = randn_(cs, t);
      for (auto [beta, alpha] :
           {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{-1.0, 0.25}}) {
        Ref ref = ref_matmul(a, b);
        add_scaled(ref, alpha, c, beta);
        expect_matches(addmm(c, a, b, beta, alpha), ref,
                       "addmm c " + cs.str() + " beta " + std::to_string(beta));
      }
    }
    // beta == 0: c is not read (NaN in it does not propagate).
    Tensor nan_c = full({7, 5}, NAN, t, dev());
    Ref ref = ref_matmul(a, b);
    add_scaled(ref, 3, Tensor(), 0);
    expect_matches(addmm(nan_c, a, b, 0, 3), ref, "addmm beta 0");
  }
}

// --- gen::product: a compiled function's product with its epilogue ---

TEST_P(Matmul, CompiledProductFusesItsEpilogue) {
  using gen::Product;
  using rt::Epilogue;
  for (DType t : kFloats)
    for (Epilogue e : {Epilogue::None, Epilogue::Relu, Epilogue::GeluTanh}) {
      Tensor x = randn_({2, 9, 33}, t), w = randn_({7, 33}, t);
      Tensor b = randn_({7}, t), r = randn_({2, 9, 7}, t), rb = randn_({9, 1}, t);
      Ref ref = ref_matmul(x, w.transpose(0, 1));
      add_scaled(ref, 1, b, 1);
      add_scaled(ref, 1, r, 1);
      apply_act(ref, e);
      reset_stats();
      Tensor y = gen::product(Product::Linear, x, w, b, r, e);
      if (dev().is_cpu())
        EXPECT_EQ(launches(), 1u) << "one GEMM reading the residual as C";
      expect_matches(y, ref, std::string("linear + b + r, ") + rt::epilogue_name(e));
      // A residual in another layout is copied into the result first.
      Tensor rt_ = randn_({7, 9, 2}, t).permute({2, 1, 0});
      ref = ref_matmul(x, w.transpose(0, 1));
      add_scaled(ref, 1, b, 1);
      add_scaled(ref, 1, rt_, 1);
      apply_act(ref, e);
      reset_stats();
      y = gen::product(Product::Linear, x, w, b, rt_, e);
      if (dev().is_cpu())
        EXPECT_EQ(launches(), 2u) << "the residual's copy, then one GEMM";
      expect_matches(y, ref, std::string("linear + b + permuted r, ") +
                                 rt::epilogue_name(e));
      // Two addends neither of which is a column bias: added first.
      ref = ref_matmul(x, w.transpose(0, 1));
      add_scaled(ref, 1, rb, 1);
      add_scaled(ref, 1, r, 1);
      apply_act(ref, e);
      expect_matches(gen::product(Product::Linear, x, w, rb, r, e), ref,
                     std::string("linear + [9, 1] + r, ") + rt::epilogue_name(e));
      Tensor a = randn_({3, 1, 5, 33}, t), bm = randn_({4, 33, 6}, t);
      Tensor cb = randn_({6}, t);
      ref = ref_matmul(a, bm);
      add_scaled(ref, 1, cb, 1);
      apply_act(ref, e);
      expect_matches(gen::product(Product::Matmul, a, bm, cb, Tensor(), e), ref,
                     std::string("batched matmul + bias, ") + rt::epilogue_name(e));
    }
}

TEST(CompiledProduct, ShapeIsFalseWhereEagerRaisesOrTheResultGrows) {
  using gen::Product;
  Dims out;
  ASSERT_TRUE(gen::product_shape(Product::Matmul, {2, 1, 5, 3}, {4, 3, 6}, {}, out));
  EXPECT_EQ(out, (Dims{2, 4, 5, 6}));
  ASSERT_TRUE(gen::product_shape(Product::Matmul, {5, 3}, {3}, {}, out));
  EXPECT_EQ(out, (Dims{5}));
  ASSERT_TRUE(gen::product_shape(Product::Matmul, {3}, {3}, {}, out));
  EXPECT_EQ(out, (Dims{}));
  ASSERT_TRUE(gen::product_shape(Product::Linear, {2, 9, 33}, {7, 33}, {}, out));
  EXPECT_EQ(out, (Dims{2, 9, 7}));
  ASSERT_TRUE(gen::product_shape(Product::Linear, {9, 33}, {33}, {}, out));
  EXPECT_EQ(out, (Dims{9}));
  Dims bias{7}, col{9, 1}, bigger{3, 9, 7};
  EXPECT_TRUE(gen::product_shape(Product::Linear, {9, 33}, {7, 33}, {&bias, &col}, out));
  EXPECT_FALSE(gen::product_shape(Product::Linear, {9, 33}, {7, 33}, {&bigger}, out))
      << "an addend that makes the result larger";
  EXPECT_FALSE(gen::product_shape(Product::Matmul, {5, 3}, {4, 6}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Matmul, {2, 5, 3}, {3, 3, 6}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Matmul, {}, {3}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Linear, {9, 33}, {7, 32}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Linear, {9, 33}, {2, 7, 33}, {}, out));
  // bmm: 3-D, one batch, no broadcasting (matmul would broadcast these).
  ASSERT_TRUE(gen::product_shape(Product::Bmm, {4, 5, 3}, {4, 3, 6}, {}, out));
  EXPECT_EQ(out, (Dims{4, 5, 6}));
  EXPECT_FALSE(gen::product_shape(Product::Bmm, {1, 5, 3}, {4, 3, 6}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Bmm, {4, 5, 3}, {3, 6}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Bmm, {2, 4, 5, 3}, {2, 4, 3, 6}, {}, out));
  EXPECT_FALSE(gen::product_shape(Product::Bmm, {4, 5, 3}, {4, 2, 6}, {}, out));
}

// Attention written as two products: what eager's products take, which is
// less than the attention kernel takes (fewer key heads; bmm's ranks).
TEST(CompiledProduct, AttentionProductsTakeWhatEagersProductsTake) {
  using gen::Product;
  // q [B, H, L, E], k and v [B, Hk, S, E]: heads equal or 1 for matmul.
  EXPECT_TRUE(gen::attention_products_shape(Product::Matmul, {2, 4, 5, 8},
                                            {2, 4, 7, 8}, {2, 4, 7, 8}));
  EXPECT_TRUE(gen::attention_products_shape(Product::Matmul, {2, 4, 5, 8},
                                            {2, 1, 7, 8}, {2, 1, 7, 6}));
  EXPECT_FALSE(gen::attention_products_shape(Product::Matmul, {2, 4, 5, 8},
                                             {2, 2, 7, 8}, {2, 2, 7, 8}));
  EXPECT_FALSE(gen::attention_products_shape(Product::Matmul, {2, 4, 5, 8},
                                             {2, 4, 7, 9}, {2, 4, 7, 8}));
  EXPECT_FALSE(gen::attention_products_shape(Product::Matmul, {2, 4, 5, 8},
                                             {2, 4, 7, 8}, {2, 4, 6, 8}));
  EXPECT_FALSE(gen::attention_products_shape(Product::Matmul, {8}, {8}, {8}));
  // bmm: 3-D, one batch.
  EXPECT_TRUE(gen::attention_products_shape(Product::Bmm, {6, 5, 8}, {6, 7, 8},
                                            {6, 7, 3}));
  EXPECT_FALSE(gen::attention_products_shape(Product::Bmm, {6, 5, 8}, {1, 7, 8},
                                             {1, 7, 3}));
  EXPECT_FALSE(gen::attention_products_shape(Product::Bmm, {1, 6, 5, 8},
                                             {1, 6, 7, 8}, {1, 6, 7, 3}));
  // The op-by-op backend raises eager's errors, and nothing where they fit.
  Tensor q = kiln::zeros({2, 4, 5, 8}), k = kiln::zeros({2, 2, 7, 8}),
         k1 = kiln::zeros({2, 1, 7, 8});
  EXPECT_NO_THROW(gen::check_attention_products(Product::Matmul, q, k1, k1));
  EXPECT_THROW(gen::check_attention_products(Product::Matmul, q, k, k), Error);
  EXPECT_THROW(gen::check_attention_products(Product::Bmm, q, k1, k1), Error);
  Tensor q3 = kiln::zeros({6, 5, 8}), k3 = kiln::zeros({6, 7, 8}),
         v3 = kiln::zeros({6, 6, 8});
  EXPECT_THROW(gen::check_attention_products(Product::Bmm, q3, k3, v3), Error);
}

// --- rt::gemm directly: epilogues, separate C, f32 output of half inputs ---

TEST_P(Matmul, GemmEntryEpiloguesAndOutputs) {
  using rt::Epilogue;
  const int64_t m = 33, n = 7, k = 65;
  for (DType t : kFloats)
    for (Epilogue e :
         {Epilogue::None, Epilogue::Relu, Epilogue::Gelu, Epilogue::GeluTanh})
      for (DType bias_t : {t, f32})
        for (bool f32_out : {false, true}) {
          if (f32_out && t != f16 && t != bf16)
            continue;
          DType out_t = f32_out ? f32 : t;
          Tensor a = randn_({m, k}, t), bt = randn_({n, k}, t); // B = bt^T
          Tensor c = randn_({m, n}, out_t), bias = randn_({n}, bias_t);
          Tensor d = empty({m, n}, out_t, dev());
          rt::GemmArgs g;
          g.m = m;
          g.n = n;
          g.k = k;
          g.a = a.data_ptr();
          g.lda = k;
          g.b = bt.data_ptr();
          g.ldb = k;
          g.trans_b = true;
          g.ab_dtype = t;
          g.c = c.data_ptr();
          g.ldc = n;
          g.d = d.data_ptr();
          g.ldd = n;
          g.d_dtype = out_t;
          g.alpha = 0.5;
          g.beta = -2;
          g.bias = bias.data_ptr();
          g.bias_dtype = bias_t;
          g.epilogue = e;
          rt::gemm(dev(), g);
          Ref ref = ref_matmul(a, bt.transpose(0, 1));
          add_scaled(ref, 0.5, c, -2);
          add_scaled(ref, 1, bias, 1);
          apply_act(ref, e);
          expect_matches(d, ref,
                         std::string("gemm ") + dtype_name(t) + "->" +
                             dtype_name(out_t) + " bias " + dtype_name(bias_t) +
                             " " + rt::epilogue_name(e));
        }
}

TEST_P(Matmul, GemmEntryChecksItsArguments) {
  Tensor a = randn_({4, 3}), b = randn_({3, 5}), d = empty({4, 5}, f32, dev());
  rt::GemmArgs g;
  g.m = 4;
  g.n = 5;
  g.k = 3;
  g.a = a.data_ptr();
  g.lda = 3;
  g.b = b.data_ptr();
  g.ldb = 5;
  g.d = d.data_ptr();
  g.ldd = 5;
  rt::gemm(dev(), g); // fine as it is
  auto bad = [&](auto change, const char *text) {
    rt::GemmArgs h = g;
    change(h);
    EXPECT_KILN_ERROR(rt::gemm(dev(), h), text);
  };
  bad([](rt::GemmArgs &h) { h.k = -1; }, "negative size");
  bad([](rt::GemmArgs &h) { h.ab_dtype = i32; },
      "A and B of dtype i32: matrix products take f32, f16, bf16 or f64");
  bad([](rt::GemmArgs &h) { h.d_dtype = f16; },
      "D of dtype f16 with A and B of f32");
  bad([](rt::GemmArgs &h) { h.lda = 2; },
      "leading dimension 2 of A is below its 3 columns");
  bad([](rt::GemmArgs &h) { h.trans_a = true; },
      "leading dimension 3 of A is below its 4 columns");
  bad([](rt::GemmArgs &h) { h.d = nullptr; }, "D is null for a 4 x 5 matrix");
  bad(
      [](rt::GemmArgs &h) {
        h.batch = 2;
        h.stride_d = 10;
      },
      "batch stride 10 of D is below one matrix's extent 20");
  bad(
      [](rt::GemmArgs &h) {
        h.c = h.d;
        h.beta = 1;
        h.ldc = 6;
      },
      "leading dimension 6 vs 5");
  bad(
      [](rt::GemmArgs &h) {
        h.bias = h.a;
        h.bias_dtype = i64;
      },
      "bias of dtype i64");
  bad([](rt::GemmArgs &h) { h.epilogue = rt::Epilogue(9); },
      "unknown epilogue 9");
}

// --- errors of the eager ops ---

TEST_P(Matmul, ErrorsSayWhatIsWrong) {
  Tensor a = randn_({2, 3}), b = randn_({4, 5});
  EXPECT_KILN_ERROR(matmul(Tensor(), b),
                    "kiln::matmul: a is an undefined tensor");
  EXPECT_KILN_ERROR(matmul(a, b),
                    "kiln::matmul: shapes [2, 3] and [4, 5] cannot be "
                    "multiplied: a's last dim (3) must equal b's "
                    "second-to-last dim (4)");
  EXPECT_KILN_ERROR(matmul(a, randn_({4})), "b's size (4)");
  EXPECT_KILN_ERROR(matmul(randn_({3}), randn_({4})),
                    "1-D operands of sizes 3 and 4: a dot product needs equal "
                    "sizes");
  EXPECT_KILN_ERROR(matmul(randn_({}), b),
                    "both operands need at least one dim, got shapes [] and");
  EXPECT_KILN_ERROR(matmul(randn_({2, 2, 3}), randn_({3, 3, 4})),
                    "batch dims [2] and [3] (of shapes [2, 2, 3] and [3, 3, "
                    "4]) do not broadcast");
  for (DType t : {i32, i64, b8})
    EXPECT_KILN_ERROR(matmul(ones({2, 2}, t, dev()), ones({2, 2}, t, dev())),
                      std::string("a has dtype ") + dtype_name(t) +
                          ": matrix products take f32, f16, bf16 or f64 "
                          "(integer and bool products are not supported");
  EXPECT_KILN_ERROR(matmul(a, randn_({3, 2}, f16)),
                    "a has dtype f32 and b has f16: both must have one dtype");

  EXPECT_KILN_ERROR(
      bmm(a, randn_({3, 2})),
      "kiln::bmm: expected 3-D tensors, got shapes [2, 3] and [3, 2]");
  EXPECT_KILN_ERROR(bmm(randn_({2, 2, 3}), randn_({3, 3, 4})),
                    "batch sizes 2 and 3 differ");
  EXPECT_KILN_ERROR(bmm(randn_({2, 2, 3}), randn_({2, 4, 4})),
                    "a's last dim (3) must equal b's second dim (4)");

  EXPECT_KILN_ERROR(addmm(randn_({5}), randn_({2, 2, 3}), randn_({3, 5})),
                    "kiln::addmm: a and b must be 2-D");
  EXPECT_KILN_ERROR(addmm(randn_({5}), a, b),
                    "a's last dim (3) must equal b's first dim (4)");
  EXPECT_KILN_ERROR(
      addmm(randn_({3}), a, randn_({3, 5})),
      "c of shape [3] does not broadcast to the result's shape [2, 5]");
  EXPECT_KILN_ERROR(addmm(randn_({5}, f64), a, randn_({3, 5})),
                    "c has dtype f64 and the operands f32");
  EXPECT_KILN_ERROR(addmm(Tensor(), a, randn_({3, 5})),
                    "c is an undefined tensor");

  EXPECT_KILN_ERROR(linear(randn_({}), randn_({2, 3})),
                    "kiln::linear: x must have at least one dim");
  EXPECT_KILN_ERROR(linear(a, randn_({2, 2, 3})),
                    "w must be [out, in] or [in], got shape [2, 2, 3]");
  EXPECT_KILN_ERROR(linear(a, randn_({5, 4})),
                    "x of shape [2, 3] and w of shape [5, 4] do not fit: x's "
                    "last dim (3) must equal w's last dim (4)");
  EXPECT_KILN_ERROR(
      linear(a, randn_({5, 3}), randn_({4})),
      "b of shape [4] does not broadcast to the result's shape [2, 5]");
  EXPECT_KILN_ERROR(linear(a, randn_({5, 3}), randn_({5}, bf16)),
                    "b has dtype bf16 and the operands f32");
  EXPECT_KILN_ERROR(linear(a.to(i64), randn_({5, 3}).to(i64)),
                    "x has dtype i64: matrix products take");
}

// --- threads: first calls (library load, handle, algorithm cache) race ---

TEST_P(Matmul, ManyThreadsAtOnce) {
  std::vector<Tensor> as, bs;
  for (int i = 0; i < 8; ++i) {
    as.push_back(randn_({17 + i, 40}, i % 2 ? bf16 : f32));
    bs.push_back(randn_({40, 9 + i}, i % 2 ? bf16 : f32));
  }
  std::vector<Tensor> outs(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 5; ++rep)
        outs[i] = matmul(as[i], bs[i]);
    });
  for (auto &th : threads)
    th.join();
  for (int i = 0; i < 8; ++i)
    expect_matches(outs[i], ref_matmul(as[i], bs[i]),
                   "thread " + std::to_string(i));
}

INSTANTIATE_TEST_SUITE_P(Devices, Matmul, KT_DEVICES);

// CPU products called at once from several threads, and batched products
// split over the runtime's threads, give the one right answer: Debian's
// serial OpenBLAS is not reentrant (two concurrent GEMMs can share a
// packing buffer), which made about one batched f64 product in twenty
// wrong before libkiln_blas serialised its calls.
TEST(MatmulCpu, ConcurrentProductsAgree) {
  manual_seed(3);
  Tensor q = randn({2, 130, 128}, f64), k = randn({2, 200, 128}, f64);
  Tensor kt = k.transpose(-2, -1);
  Tensor first = matmul(q, kt);
  expect_matches(first, ref_matmul(q, kt), "batched, B transposed");
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        Tensor c = matmul(q, kt);
        const double d = amax(abs(c - first)).item<double>();
        wrong[size_t(t)] += d != 0;
      }
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(wrong[size_t(t)], 0) << "thread " << t;
  int serial_wrong = 0; // the runtime's own threads, one call at a time
  for (int i = 0; i < 100; ++i)
    serial_wrong += amax(abs(matmul(q, kt) - first)).item<double>() != 0;
  EXPECT_EQ(serial_wrong, 0);
}

// --- CPU only: the work is split over the OpenMP threads ---

TEST(MatmulCpu, LargeProductsSplitAcrossThreadsAndLogIt) {
  set_fill_uninitialized(true);
  manual_seed(11);
  Tensor a = randn({4097, 33}), b = randn({33, 65});
  unsigned saved = rt::g_log_mask;
  rt::g_log_mask = rt::kLogKernels;
  ::testing::internal::CaptureStderr();
  Tensor c = matmul(a, b);
  std::string log = ::testing::internal::GetCapturedStderr();
  rt::g_log_mask = saved;
  EXPECT_NE(log.find("cpu gemm f32->f32 m=4097 n=65 k=33 batch=1"),
            std::string::npos)
      << log;
  expect_matches(c, ref_matmul(a, b), "4097 x 33 @ 33 x 65");
  // Inside a caller's parallel region the product runs on that thread.
  std::vector<Tensor> outs(4);
#pragma omp parallel for num_threads(4)
  for (int i = 0; i < 4; ++i)
    outs[i] = matmul(a, b);
  for (auto &o : outs)
    expect_matches(o, ref_matmul(a, b), "inside omp parallel");
  set_fill_uninitialized(false);
}

// --- CUDA only ---

class MatmulCuda : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cuda_available())
      GTEST_SKIP() << "no CUDA GPU: skipped";
    set_fill_uninitialized(true);
  }
  void TearDown() override {
    set_fill_uninitialized(false);
    set_allow_tf32(rt::env_flag("KILN_ALLOW_TF32")); // as at start-up
  }
  Device d = Device::cuda(0);
};

// (1 + 2^-12) needs 12 mantissa bits: f32 keeps it, TF32 (10 bits) rounds it
// to 1. 64 such products sum to 64 + 2^-6 exactly in f32, to 64 in TF32.
TEST_F(MatmulCuda, Tf32IsOffByDefault) {
  if (rt::env_flag("KILN_ALLOW_TF32"))
    GTEST_SKIP() << "KILN_ALLOW_TF32 is set in the environment";
  EXPECT_FALSE(allow_tf32());
  Tensor a = full({64, 64}, 1.0 + 0x1p-12, f32, d), b = ones({64, 64}, f32, d);
  std::vector<double> v = values(matmul(a, b));
  EXPECT_EQ(v.front(), 64.015625) << "an f32 product lost precision (TF32?)";
  EXPECT_EQ(v.back(), 64.015625);
  // The opt-in: the inputs may go through TF32 (the result is then within
  // TF32's rounding); turning it off again gives f32's answer again.
  set_allow_tf32(true);
  double tf32 = values(matmul(a, b)).front();
  EXPECT_NEAR(tf32, 64.015625, 64 * 0x1p-11);
  std::printf("[ info ] with allow_tf32: %.9g (f32: 64.015625, TF32: 64)\n",
              tf32);
  set_allow_tf32(false);
  EXPECT_EQ(values(matmul(a, b)).front(), 64.015625);
}

// KILN_ALLOW_TF32=1 turns the opt-in on at start-up
// (scripts/gpu-matmul-check.sh runs this test so).
TEST_F(MatmulCuda, Tf32FromTheEnvironment) {
  if (!rt::env_flag("KILN_ALLOW_TF32"))
    GTEST_SKIP() << "run with KILN_ALLOW_TF32=1";
  EXPECT_TRUE(allow_tf32());
  Tensor a = full({64, 64}, 1.0 + 0x1p-12, f32, d), b = ones({64, 64}, f32, d);
  double v = values(matmul(a, b)).front();
  EXPECT_NEAR(v, 64.015625, 64 * 0x1p-11);
  std::printf("[ info ] KILN_ALLOW_TF32=1: %.9g (f32: 64.015625, TF32: 64)\n",
              v);
}

TEST_F(MatmulCuda, OperandsOnDifferentDevicesAreRefused) {
  Tensor a = randn({2, 3}), b = randn({3, 2}, f32, d);
  EXPECT_KILN_ERROR(matmul(a, b),
                    "kiln::matmul: a is on cpu and b on cuda:0: both must be "
                    "on one device");
  EXPECT_KILN_ERROR(
      linear(randn({2, 3}, f32, d), randn({4, 3}, f32, d), randn({4})),
      "b is on cpu and the operands on cuda:0");
}

// After the first call of a shape, calls take no new CUDA memory beyond
// their outputs (handle, workspace and algorithm are reused).
TEST_F(MatmulCuda, SteadyStateTakesOnlyTheOutput) {
  Tensor a = randn({256, 128}, bf16, d), w = randn({64, 128}, bf16, d),
         b = randn({64}, bf16, d);
  linear(a, w, b);
  synchronize(d);
  size_t before = cuda_memory_allocated();
  for (int i = 0; i < 10; ++i) {
    Tensor y = linear(a, w, b);
    EXPECT_EQ(cuda_memory_allocated() - before, size_t(256 * 64 * 2));
  }
  EXPECT_EQ(cuda_memory_allocated(), before);
}

} // namespace
