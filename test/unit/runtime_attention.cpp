// Eager scaled dot-product attention (kiln/attention.h) against a float64
// reference computed here with naive loops, on the CPU and CUDA (the twins
// skip visibly without a GPU): ranks 2 to 5, batch dims no one stride
// reaches, grouped-query heads, a value head dim unlike the query's, masks
// broadcast from fewer dims, one launch per call, and eager's messages.
#include "runtime_test_util.h"

#include <kiln/attention.h>

#include <cmath>
#include <limits>
#include <optional>

using namespace kiln;
using namespace kt;

namespace {

// out[..., h, i, :] for operands of any rank >= 2 (batch dims equal), the
// mask broadcast to the scores (undefined: none).
Tensor reference(const Tensor &q0, const Tensor &k0, const Tensor &v0,
                 const Tensor &m0, bool causal, std::optional<double> scale) {
  auto f = [](const Tensor &t) {
    return t.to(Device::cpu()).to(f64).contiguous();
  };
  Tensor q = f(q0), k = f(k0), v = f(v0);
  const int r = q.dim();
  const int64_t L = q.size(-2), S = k.size(-2), E = q.size(-1),
                Ev = v.size(-1), Hq = r >= 3 ? q.size(-3) : 1,
                Hk = r >= 3 ? k.size(-3) : 1;
  const int64_t B = q.numel() / (Hq * L * E);
  Dims out_shape(q.sizes());
  out_shape[r - 1] = Ev;
  Dims scores(q.sizes());
  scores[r - 1] = S;
  Tensor m, madd;
  if (m0.defined()) {
    m = m0.to(Device::cpu()).expand(scores).contiguous();
    if (m.dtype() != b8)
      madd = m.to(f64).contiguous();
  }
  Tensor out = zeros(out_shape, f64);
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(E));
  const double ninf = -std::numeric_limits<double>::infinity();
  const double *qp = q.data<double>(), *kp = k.data<double>(),
               *vp = v.data<double>();
  double *op = out.data<double>();
  std::vector<double> s(static_cast<size_t>(S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < L; ++i) {
        const int64_t hk = h / (Hq / Hk);
        double mx = ninf;
        for (int64_t j = 0; j < S; ++j) {
          double d = 0;
          for (int64_t e = 0; e < E; ++e)
            d += qp[((b * Hq + h) * L + i) * E + e] *
                 kp[((b * Hk + hk) * S + j) * E + e];
          s[j] = d * sc;
          const int64_t mi = ((b * Hq + h) * L + i) * S + j;
          if (m.defined())
            s[j] = m.dtype() == b8 ? (m.data<bool>()[mi] ? s[j] : ninf)
                                   : s[j] + madd.data<double>()[mi];
          if (causal && j > i)
            s[j] = ninf;
          mx = std::max(mx, s[j]);
        }
        if (mx == ninf)
          continue; // every key masked out: 0
        double sum = 0;
        for (int64_t j = 0; j < S; ++j)
          sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < S; ++j)
          for (int64_t e = 0; e < Ev; ++e)
            op[((b * Hq + h) * L + i) * Ev + e] +=
                s[j] / sum * vp[((b * Hk + hk) * S + j) * Ev + e];
      }
  return out;
}

class Attention : public DeviceTest {
protected:
  Tensor randn_(Dims s, DType t = f32) {
    return randn(s, f32).to(t).to(dev());
  }
  // Within the dtype's tolerance of the reference (relative to its largest
  // magnitude): f16/bf16 probabilities are rounded for the second product.
  void expect_close(const Tensor &got, const Tensor &want,
                    const std::string &what) {
    ASSERT_EQ(got.sizes(), want.sizes()) << what;
    const double tol = got.dtype() == f64   ? 1e-10
                       : got.dtype() == f32 ? 2e-5
                                            : 2e-2;
    Tensor g = got.to(Device::cpu()).to(f64);
    const double scale = std::max(1.0, amax(abs(want)).item<double>());
    EXPECT_LE(amax(abs(g - want)).item<double>() / scale, tol)
        << what << " [" << dtype_name(got.dtype()) << "]";
  }
};

TEST_P(Attention, RanksLayoutsAndHeads) {
  manual_seed(1);
  for (DType t : {f32, f64, bf16, f16}) {
    // Rank 2 (one head), rank 3 (heads), rank 5 (two batch dims).
    Tensor q2 = randn_({9, 16}, t), k2 = randn_({12, 16}, t);
    expect_close(scaled_dot_product_attention(q2, k2, k2),
                 reference(q2, k2, k2, Tensor(), false, std::nullopt), "rank 2");
    Tensor q3 = randn_({3, 9, 16}, t), k3 = randn_({3, 12, 16}, t);
    expect_close(scaled_dot_product_attention(q3, k3, k3, Tensor(), true),
                 reference(q3, k3, k3, Tensor(), true, std::nullopt),
                 "rank 3, causal");
    // Batch dims no one stride reaches (a permuted batch) are copied.
    Tensor q5 = randn_({3, 2, 4, 7, 32}, t).transpose(0, 1); // [2, 3, 4, 7, 32]
    Tensor k5 = randn_({2, 3, 4, 10, 32}, t), v5 = randn_({2, 3, 4, 10, 32}, t);
    Tensor m5 = randn_({3, 1, 1, 10}, t); // broadcast over 5 dims
    expect_close(scaled_dot_product_attention(q5, k5, v5, m5, false, 0.3),
                 reference(q5, k5, v5, m5, false, 0.3), "rank 5, permuted batch");
    // Grouped-query heads (6 over 2), v's head dim unlike q's.
    Tensor qg = randn_({2, 6, 11, 40}, t), kg = randn_({2, 2, 13, 40}, t),
           vg = randn_({2, 2, 13, 24}, t);
    Tensor bm = (randn({11, 13}) > -0.5).to(dev());
    Tensor r = scaled_dot_product_attention(qg, kg, vg, bm);
    EXPECT_EQ(r.sizes(), (Dims{2, 6, 11, 24}));
    expect_close(r, reference(qg, kg, vg, bm, false, std::nullopt),
                 "grouped-query heads, bool mask, Ev != E");
    // Heads split from [B, L, H, D] memory: the output is laid out as q,
    // [B, L, H, Dv] in memory, so merging its heads back is a view.
    Tensor qh = randn_({2, 9, 4, 32}, t).transpose(1, 2),
           kh = randn_({2, 12, 4, 32}, t).transpose(1, 2),
           vh = randn_({2, 12, 4, 16}, t).transpose(1, 2);
    Tensor oh = scaled_dot_product_attention(qh, kh, vh, Tensor(), true);
    EXPECT_TRUE(oh.transpose(1, 2).is_contiguous()) << dtype_name(t);
    expect_close(oh, reference(qh, kh, vh, Tensor(), true, std::nullopt),
                 "heads split by a transpose");
    // No keys: 0.
    Tensor k0 = randn_({2, 6, 0, 40}, t), v0 = randn_({2, 6, 0, 24}, t);
    Tensor z = scaled_dot_product_attention(qg, k0, v0).to(Device::cpu()).to(f64);
    EXPECT_EQ(amax(abs(z)).item<double>(), 0.0);
  }
}

TEST_P(Attention, OneLaunchPerCall) {
  Tensor q = randn_({2, 4, 64, 64}, bf16), k = randn_({2, 4, 80, 64}, bf16);
  reset_stats();
  Tensor o = scaled_dot_product_attention(q, k, k, Tensor(), true);
  EXPECT_EQ(stats().kernel_launches, 1u);
  expect_close(o, reference(q, k, k, Tensor(), true, std::nullopt), "flash shape");
}

TEST_P(Attention, RefusesWhatTorchRefuses) {
  Tensor q = randn_({2, 4, 8, 16}), k = randn_({2, 4, 9, 16});
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, k, k, randn_({8, 9}), true),
                    "an explicit attn_mask and is_causal=true were both given");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, randn_({2, 4, 9, 8}), k),
                    "differ in their last dim (the embedding E)");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, randn_({2, 3, 9, 16}),
                                                 randn_({2, 3, 9, 16})),
                    "the query's heads must be a multiple of the key's");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, k, randn_({2, 4, 7, 16})),
                    "differ in their length (dim -2)");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, k, k, randn_({3, 9})),
                    "does not broadcast to the scores' shape");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, k, k, randn_({8, 9}, f64)),
                    "attn_mask has dtype f64: it must be b8 or the query's dtype");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, k.to(bf16), k),
                    "they must have one dtype");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q.to(i32), k, k),
                    "attention takes f32, f16, bf16 or f64");
}

// CUDA f16/bf16, where two implementations exist: cuDNN's fused attention
// and Kiln's kernel, each forced in turn (the Cudnn backend raises on a case
// cuDNN does not take, so a pass proves it ran), against the reference, on
// the layouts model code makes: heads as a transposed view of [B, L, H, D]
// (a linear's output), grouped-query heads, L != S, and decode's L = 1.
TEST_P(Attention, CudnnAndKilnKernels) {
  if (!dev().is_cuda())
    GTEST_SKIP() << "one implementation on the CPU";
  if (!cudnn_attention_available())
    GTEST_SKIP() << "cuDNN 9 cannot be loaded here (KILN_CUDNN names it): "
                    "only Kiln's kernels run";
  struct Restore {
    ~Restore() { set_attention_backend(AttentionBackend::Auto); }
  } restore;
  struct Case {
    int64_t B, Hq, Hkv, L, S, D;
    bool causal, heads_view;
  };
  manual_seed(3);
  for (DType t : {bf16, f16})
    for (Case c : {Case{2, 4, 4, 128, 128, 64, false, false},
                   Case{2, 4, 4, 100, 100, 64, true, false},
                   Case{1, 8, 2, 77, 77, 128, true, true},
                   Case{2, 4, 2, 33, 90, 64, false, true},
                   Case{3, 8, 8, 1, 200, 128, false, false},
                   Case{1, 4, 1, 16, 300, 96, true, true}}) {
      const auto make = [&](int64_t H, int64_t N, int64_t D) {
        return c.heads_view ? randn_({c.B, N, H, D}, t).transpose(1, 2)
                            : randn_({c.B, H, N, D}, t);
      };
      Tensor q = make(c.Hq, c.L, c.D), k = make(c.Hkv, c.S, c.D),
             v = make(c.Hkv, c.S, c.D);
      Tensor want = reference(q, k, v, Tensor(), c.causal, std::nullopt);
      const std::string what =
          "B=" + std::to_string(c.B) + " Hq=" + std::to_string(c.Hq) +
          " Hkv=" + std::to_string(c.Hkv) + " L=" + std::to_string(c.L) +
          " S=" + std::to_string(c.S) + " D=" + std::to_string(c.D) +
          (c.causal ? " causal" : "") + (c.heads_view ? " heads view" : "");
      for (AttentionBackend b : {AttentionBackend::Kiln, AttentionBackend::Cudnn}) {
        set_attention_backend(b);
        reset_stats();
        Tensor o = scaled_dot_product_attention(q, k, v, Tensor(), c.causal);
        EXPECT_EQ(stats().kernel_launches, 1u) << what;
        expect_close(o, want,
                     what + (b == AttentionBackend::Kiln ? " [kiln]" : " [cudnn]"));
        // Written in q's layout: the heads merge back as a view.
        if (c.heads_view)
          EXPECT_TRUE(o.transpose(1, 2).is_contiguous()) << what;
      }
    }
  // What cuDNN does not take runs Kiln's kernel under Auto and is an error
  // under Cudnn: a mask, f32.
  Tensor q = randn_({1, 2, 16, 64}, bf16), m = randn_({16, 16}, bf16);
  set_attention_backend(AttentionBackend::Auto);
  expect_close(scaled_dot_product_attention(q, q, q, m),
               reference(q, q, q, m, false, std::nullopt), "mask under Auto");
  set_attention_backend(AttentionBackend::Cudnn);
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q, q, q, m),
                    "the attention backend is cuDNN, which does not take this "
                    "case: an attn_mask is given");
  EXPECT_KILN_ERROR(scaled_dot_product_attention(q.to(f32), q.to(f32), q.to(f32)),
                    "does not take this case: the dtype is not f16 or bf16");
}

// kiln::gen::attention_pieces: attention over cats of key and value pieces
// along the key dim (a cache and the new token's key and value), against
// the reference over the cats, with the cats themselves written when asked
// (bit for bit kiln::cat's). On CUDA the decode kernels take the cases
// they can (one launch, no copy of the pieces); the rest, and every case
// on the CPU, are the eager expression's.
TEST_P(Attention, Pieces) {
  struct Case {
    int64_t B, Hq, Hkv, L, D;
    std::vector<int64_t> lengths; // of the pieces along the key dim
    bool heads_view, decode;      // decode: the CUDA kernels take it
  };
  manual_seed(7);
  for (DType t : {bf16, f16, f32, f64})
    for (const Case &c : {Case{2, 4, 4, 1, 128, {300, 1}, false, true},
                          Case{3, 8, 2, 1, 64, {0, 517, 2}, true, true},
                          Case{1, 4, 2, 3, 128, {45, 3}, true, true},
                          Case{2, 2, 2, 1, 64, {1000}, false, true},
                          Case{1, 2, 1, 1, 128, {0, 0}, false, true},
                          Case{1, 6, 1, 2, 64, {20, 2}, false, false},
                          Case{2, 2, 2, 1, 40, {33, 1}, false, false}}) {
      const auto make = [&](int64_t H, int64_t N) {
        return c.heads_view ? randn_({c.B, N, H, c.D}, t).transpose(1, 2)
                            : randn_({c.B, H, N, c.D}, t);
      };
      Tensor q = make(c.Hq, c.L);
      std::vector<Tensor> ks, vs;
      for (int64_t n : c.lengths) {
        ks.push_back(make(c.Hkv, n));
        vs.push_back(make(c.Hkv, n));
      }
      Tensor kc = cat(ks, -2), vc = cat(vs, -2);
      Tensor want = reference(q, kc, vc, Tensor(), false, std::nullopt);
      std::string what = "B=" + std::to_string(c.B) + " Hq=" +
                         std::to_string(c.Hq) + " Hkv=" + std::to_string(c.Hkv) +
                         " L=" + std::to_string(c.L) + " D=" + std::to_string(c.D) +
                         " pieces=" + std::to_string(c.lengths.size()) + " S=" +
                         std::to_string(kc.size(2));
      const bool decode = c.decode && dev().is_cuda() && t != f64;
      reset_stats();
      Tensor o = gen::attention_pieces(q, ks, vs);
      if (decode) // one launch: no copy of the pieces
        EXPECT_EQ(stats().kernel_launches, 1u) << what;
      expect_close(o, want, what);
      if (c.heads_view)
        EXPECT_TRUE(o.transpose(1, 2).is_contiguous()) << what;
      // The cats written too, and a scale.
      Tensor kw = full(kc.sizes(), 7.0, t, dev()), vw = full(vc.sizes(), 7.0, t, dev());
      reset_stats();
      Tensor o2 = gen::attention_pieces(q, ks, vs, Tensor(), false, 0.2, kw, vw);
      if (decode)
        EXPECT_EQ(stats().kernel_launches, 1u) << what << ", cats kept";
      expect_close(o2, reference(q, kc, vc, Tensor(), false, 0.2), what + ", cats kept");
      if (kc.numel() != 0) {
        EXPECT_EQ(amax(abs(kw.to(f64) - kc.to(f64))).item<double>(), 0.0) << what;
        EXPECT_EQ(amax(abs(vw.to(f64) - vc.to(f64))).item<double>(), 0.0) << what;
      }
    }
  // The cats' dims as written: 2 of rank 4 is the key dim (the decode
  // kernels on CUDA); 1 (heads) is not: the pieces are joined along it.
  {
    Tensor q = randn_({1, 4, 1, 64}, bf16), a = randn_({1, 2, 9, 64}, bf16),
           b = randn_({1, 2, 9, 64}, bf16);
    reset_stats();
    Tensor o = gen::attention_pieces(q, {a, b}, {b, a}, Tensor(), false,
                                     std::nullopt, Tensor(), Tensor(), 2, 2);
    if (dev().is_cuda())
      EXPECT_EQ(stats().kernel_launches, 1u) << "dim 2";
    expect_close(o, reference(q, cat({a, b}, 2), cat({b, a}, 2), Tensor(), false, std::nullopt),
                 "dim 2");
    expect_close(gen::attention_pieces(q, {a, b}, {b, a}, Tensor(), false,
                                       std::nullopt, Tensor(), Tensor(), 1, 1),
                 reference(q, cat({a, b}, 1), cat({b, a}, 1), Tensor(), false, std::nullopt),
                 "dim 1");
  }
  // A mask or causal attention: the eager expression (its result, its
  // errors).
  Tensor q = randn_({1, 2, 4, 64}, bf16), k1 = randn_({1, 2, 5, 64}, bf16),
         k2 = randn_({1, 2, 3, 64}, bf16), m = randn_({4, 8}, bf16);
  Tensor kc = cat({k1, k2}, -2);
  expect_close(gen::attention_pieces(q, {k1, k2}, {k1, k2}, m),
               reference(q, kc, kc, m, false, std::nullopt), "mask");
  expect_close(gen::attention_pieces(q, {k1, k2}, {k1, k2}, Tensor(), true),
               reference(q, kc, kc, Tensor(), true, std::nullopt), "causal");
  EXPECT_KILN_ERROR(gen::attention_pieces(q, {k1, randn_({1, 3, 3, 64}, bf16)}, {k1, k2}),
                    "kiln::cat");
}

INSTANTIATE_TEST_SUITE_P(Devices, Attention, KT_DEVICES);

} // namespace
