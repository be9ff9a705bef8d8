// The cases of test/plugin/capture/exec-attention*.cpp: scaled dot-product
// attention (kiln/attention.h) inside compiled functions: one fused kernel
// (the runtime's), its operands views or values other kernels wrote. Each
// case runs compiled and eager, and its result is compared with a float64
// reference written as the math (q @ k^T * scale + bias, softmax, @ v): the
// compiled call runs the eager op's kernel, so the reference is what checks
// the kernel itself.
#pragma once

#include "capture_compare.h"

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

using kiln::Tensor;

COMPILE Tensor sdpa(const Tensor &q, const Tensor &k, const Tensor &v) {
  return kiln::scaled_dot_product_attention(q, k, v);
}

COMPILE Tensor sdpa_causal(const Tensor &q, const Tensor &k, const Tensor &v) {
  return kiln::scaled_dot_product_attention(q, k, v, Tensor(), true);
}

// A mask of either kind (bool or additive: an argument used only as the
// mask may be b8 or the variant's dtype), or none: the compiled code is
// specialised on m.defined(), chosen per call by a guard.
COMPILE Tensor sdpa_masked(const Tensor &q, const Tensor &k, const Tensor &v,
                           const Tensor &m) {
  return kiln::scaled_dot_product_attention(q, k, v, m);
}

// A bool mask made in the function (a comparison kernel writes it).
COMPILE Tensor sdpa_bool(const Tensor &q, const Tensor &k, const Tensor &v,
                         const Tensor &u) {
  return kiln::scaled_dot_product_attention(q, k, v, u > 0.5);
}

// A scale given at run time, and one given as a literal.
COMPILE Tensor sdpa_scaled(const Tensor &q, const Tensor &k, const Tensor &v,
                           double s) {
  return kiln::scaled_dot_product_attention(q, k, v, Tensor(), false, s) +
         kiln::scaled_dot_product_attention(q, k, v, Tensor(), false, 0.25);
}

// Work around it: q scaled by a pointwise kernel, the attention, then a
// residual add: three kernels.
COMPILE Tensor sdpa_around(const Tensor &q, const Tensor &k, const Tensor &v,
                           const Tensor &r) {
  Tensor o = kiln::scaled_dot_product_attention(q * 1.5, k, v, Tensor(), true);
  return o + r;
}

// Self-attention as model code writes it, with grouped-query heads: q, k
// and v projected, split into heads by views (the attention reads them
// through their strides), causal attention, heads merged, projected.
COMPILE Tensor gqa_block(const Tensor &x, const Tensor &wq, const Tensor &wk,
                         const Tensor &wv, const Tensor &wo, int64_t H,
                         int64_t Hkv) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = kiln::linear(x, wq).view({B, T, H, -1}).transpose(1, 2);
  Tensor k = kiln::linear(x, wk).view({B, T, Hkv, -1}).transpose(1, 2);
  Tensor v = kiln::linear(x, wv).view({B, T, Hkv, -1}).transpose(1, 2);
  Tensor o = kiln::scaled_dot_product_attention(q, k, v, Tensor(), true);
  return kiln::linear(o.transpose(1, 2).reshape({B, T, -1}), wo);
}

// Attention written as ops, as model code often does: the compiler finds
// the pattern and runs the fused kernel (one kernel, no scores in memory).
COMPILE Tensor by_hand(const Tensor &q, const Tensor &k, const Tensor &v,
                       const Tensor &m) {
  Tensor s = kiln::matmul(q, k.transpose(-2, -1)) *
             (1.0 / std::sqrt(double(q.size(-1))));
  return kiln::matmul(kiln::softmax(s + m, -1), v);
}
COMPILE Tensor by_hand_bool(const Tensor &q, const Tensor &k, const Tensor &v,
                            const Tensor &u, double d) {
  Tensor s = kiln::matmul(q, k.transpose(-1, -2)) / d;
  return kiln::matmul(kiln::softmax(kiln::where(u > 0.5, s, -INFINITY), -1), v);
}

// The scale on q before the product, and the softmax in f32 of 16-bit
// scores, the probabilities back in q's dtype (LLaMA's
// `softmax(scores.float(), -1).type_as(q)`): the same fused kernel.
COMPILE Tensor by_hand_q_scaled(const Tensor &q, const Tensor &k,
                                const Tensor &v, const Tensor &m) {
  Tensor s = kiln::matmul(q * (1.0 / std::sqrt(double(q.size(-1)))),
                          k.transpose(-2, -1));
  return kiln::matmul(kiln::softmax(s + m, -1), v);
}
// Written with bmm over [batch * heads, L, E]: the same fused kernel.
COMPILE Tensor by_hand_bmm(const Tensor &q, const Tensor &k, const Tensor &v,
                           double scale) {
  Tensor s = kiln::bmm(q, k.transpose(1, 2)) * scale;
  return kiln::bmm(kiln::softmax(s, -1), v);
}
// The scale on k instead, before the transpose or after it.
COMPILE Tensor by_hand_k_scaled(const Tensor &q, const Tensor &k,
                                const Tensor &v, const Tensor &m) {
  const double scale = 1.0 / std::sqrt(double(q.size(-1)));
  Tensor s = kiln::matmul(q, (k * scale).transpose(-2, -1));
  return kiln::matmul(kiln::softmax(s + m, -1), v);
}
COMPILE Tensor by_hand_kt_scaled(const Tensor &q, const Tensor &k,
                                 const Tensor &v, const Tensor &m) {
  Tensor s = kiln::matmul(q, k.transpose(-2, -1) / std::sqrt(double(q.size(-1))));
  return kiln::matmul(kiln::softmax(s + m, -1), v);
}
COMPILE Tensor by_hand_f32_softmax(const Tensor &q, const Tensor &k,
                                   const Tensor &v, const Tensor &m) {
  Tensor s = kiln::matmul(q, k.transpose(-2, -1)) *
                 (1.0 / std::sqrt(double(q.size(-1)))) +
             m;
  Tensor p = kiln::softmax(s.to(kiln::f32), -1).to(q.dtype());
  return kiln::matmul(p, v);
}

// Decoding a token against a key/value cache: the new key (scaled here: a
// kernel writes it) and value appended along the key dim, attention over
// all. Attention reads the cats in pieces: on CUDA the cache is read once
// and the cats are never in memory; returned, they are written by the
// attention kernel as it reads them. With a mask the cats stay copies.
COMPILE Tensor decode_step(const Tensor &q, const Tensor &kc, const Tensor &vc,
                           const Tensor &kn, const Tensor &vn) {
  Tensor keys = kiln::cat({kc, kn * 0.5}, -2);
  Tensor values = kiln::cat({vc, vn}, 2);
  return kiln::scaled_dot_product_attention(q, keys, values);
}
COMPILE std::tuple<Tensor, Tensor, Tensor>
decode_keep(const Tensor &q, const Tensor &kc, const Tensor &vc,
            const Tensor &kn, const Tensor &vn) {
  Tensor keys = kiln::cat({kc, kn * 0.5}, -2);
  Tensor values = kiln::cat({vc, vn}, -2);
  return {kiln::scaled_dot_product_attention(q, keys, values), keys, values};
}
COMPILE Tensor decode_masked(const Tensor &q, const Tensor &kc,
                             const Tensor &vc, const Tensor &kn,
                             const Tensor &vn, const Tensor &m) {
  Tensor keys = kiln::cat({kc, kn * 0.5}, -2);
  return kiln::scaled_dot_product_attention(q, keys, kiln::cat({vc, vn}, -2), m);
}

// Eager raises on a mask given with is_causal: so does the compiled call.
COMPILE Tensor sdpa_both(const Tensor &q, const Tensor &k, const Tensor &v,
                         const Tensor &m) {
  return kiln::scaled_dot_product_attention(q, k, v, m, true);
}

namespace attention_cases {

// The float64 reference, written as the math (eager ops, float64, CPU).
inline Tensor reference(Tensor q, Tensor k, Tensor v, Tensor mask, bool causal,
                        std::optional<double> scale) {
  auto f = [](const Tensor &t) {
    return t.to(kiln::Device::cpu()).to(kiln::f64);
  };
  q = f(q), k = f(k), v = f(v);
  const int r = q.dim();
  const int64_t hq = q.size(-3), hk = k.size(-3), L = q.size(-2),
                S = k.size(-2);
  if (hq != hk) { // each key/value head serves hq / hk query heads
    auto widen = [&](const Tensor &t) {
      kiln::Dims e(t.sizes()), s(t.sizes());
      e = kiln::Dims{};
      for (int d = 0; d < r; ++d) {
        if (d == r - 2)
          e.push_back(hq / hk);
        e.push_back(t.size(d));
      }
      s[r - 3] = hq;
      return t.unsqueeze(r - 2).expand(e).reshape(s);
    };
    k = widen(k), v = widen(v);
  }
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(q.size(-1)));
  Tensor s = kiln::matmul(q, k.transpose(-2, -1)) * sc;
  const double ninf = -std::numeric_limits<double>::infinity();
  if (mask.defined())
    s = mask.dtype() == kiln::DType::b8
            ? kiln::where(mask.to(kiln::Device::cpu()), s, ninf)
            : s + f(mask);
  if (causal) {
    std::vector<double> c(size_t(L * S));
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j)
        c[size_t(i * S + j)] = j > i ? ninf : 0.0;
    s = s + kiln::from_vector(c, kiln::Dims{L, S});
  }
  Tensor p = kiln::softmax(s, -1);
  p = kiln::where(p != p, 0.0, p); // a row with every key masked out: 0
  return kiln::matmul(p, v);
}

// How close the kernel must be to the float64 reference, relative to the
// largest |reference|: f16/bf16 round the probabilities for the second
// product, as flash kernels do.
inline double tolerance(kiln::DType dt) {
  switch (dt) {
  case kiln::DType::f64:
    return 1e-10;
  case kiln::DType::f32:
    return 2e-5;
  default:
    return 2e-2;
  }
}

} // namespace attention_cases

inline int run_attention(kiln::Device dev) {
  using V = std::vector<Tensor>;
  using attention_cases::reference;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto k = capture_compare::kernels;
  const std::nullopt_t none = std::nullopt;
  // Compiled against eager (counters, kernels), then the compiled result
  // against the float64 reference.
  auto check = [&](const std::string &name, kiln::DType dt,
                   const std::function<V()> &fn, int64_t kernels,
                   const Tensor &ref) {
    capture_compare::check(name, dt, fn, 1, 0, kernels, {ref});
    Tensor got = fn()[0].to(kiln::Device::cpu()).to(kiln::f64);
    const double d = kiln_compare::difference(got, ref);
    if (!(d <= attention_cases::tolerance(dt))) {
      ++capture_compare::g_mismatches;
      std::printf("MISMATCH %s [%s]: %g from the float64 reference\n",
                  name.c_str(), kiln::dtype_name(dt), d);
    }
  };
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64,
                         kiln::DType::bf16, kiln::DType::f16}) {
    // Shapes the tensor-core path takes (head dim 64 and 128) and others;
    // lengths that are not multiples of a tile; one query row.
    struct Shape {
      int64_t B, H, L, S, E;
    };
    for (Shape s : {Shape{2, 3, 70, 70, 64}, Shape{1, 2, 130, 200, 128},
                    Shape{2, 2, 33, 17, 40}, Shape{1, 4, 1, 77, 64},
                    Shape{3, 1, 5, 300, 16}}) {
      const std::string at = " [" + std::to_string(s.B) + "," +
                             std::to_string(s.H) + "," + std::to_string(s.L) +
                             "," + std::to_string(s.S) + "," +
                             std::to_string(s.E) + "]";
      Tensor q = input({s.B, s.H, s.L, s.E}, dt, 1),
             kk = input({s.B, s.H, s.S, s.E}, dt, 2),
             v = input({s.B, s.H, s.S, s.E}, dt, 3);
      check("sdpa" + at, dt, [&] { return V{sdpa(q, kk, v)}; }, k(1),
            reference(q, kk, v, Tensor(), false, none));
      check("sdpa_causal" + at, dt, [&] { return V{sdpa_causal(q, kk, v)}; },
            k(1), reference(q, kk, v, Tensor(), true, none));
      // A [L, S] bool mask (every row keeps key 0), a [B, 1, 1, S]
      // additive one, broadcast to the scores, and none.
      kiln::manual_seed(9);
      Tensor col = kiln::arange(s.S);
      Tensor u = (kiln::rand({s.L, s.S}) + kiln::where(col < 1, 1.0, 0.0))
                     .to(dt)
                     .to(dev);
      Tensor am = input({s.B, 1, 1, s.S}, dt, 10) * 2.0;
      check("sdpa_bool" + at, dt, [&] { return V{sdpa_bool(q, kk, v, u)}; },
            k(2), reference(q, kk, v, u > 0.5, false, none));
      // A bool mask argument: b8 passes the mask's dtype guard too.
      Tensor bm = u > 0.5;
      check("sdpa_masked bool" + at, dt,
            [&] { return V{sdpa_masked(q, kk, v, bm)}; }, k(1),
            reference(q, kk, v, bm, false, none));
      check("sdpa_masked additive" + at, dt,
            [&] { return V{sdpa_masked(q, kk, v, am)}; }, k(1),
            reference(q, kk, v, am, false, none));
      check("by_hand" + at, dt, [&] { return V{by_hand(q, kk, v, am)}; }, k(1),
            reference(q, kk, v, am, false, none));
      check("by_hand_q_scaled" + at, dt,
            [&] { return V{by_hand_q_scaled(q, kk, v, am)}; }, k(1),
            reference(q, kk, v, am, false, none));
      check("by_hand_k_scaled" + at, dt,
            [&] { return V{by_hand_k_scaled(q, kk, v, am)}; }, k(1),
            reference(q, kk, v, am, false, none));
      check("by_hand_kt_scaled" + at, dt,
            [&] { return V{by_hand_kt_scaled(q, kk, v, am)}; }, k(1),
            reference(q, kk, v, am, false, none));
      {
        Tensor q3 = q.reshape({s.B * s.H, s.L, s.E}),
               k3 = kk.reshape({s.B * s.H, s.S, s.E}),
               v3 = v.reshape({s.B * s.H, s.S, s.E});
        check("by_hand_bmm" + at, dt,
              [&] { return V{by_hand_bmm(q3, k3, v3, 0.125)}; }, k(1),
              reference(q3, k3, v3, Tensor(), false, 0.125));
      }
      // (An f64 q narrowed to f32 for the softmax stays as written.)
      if (dt != kiln::DType::f64)
        check("by_hand_f32_softmax" + at, dt,
              [&] { return V{by_hand_f32_softmax(q, kk, v, am)}; }, k(1),
              reference(q, kk, v, am, false, none));
      check("by_hand_bool" + at, dt,
            [&] { return V{by_hand_bool(q, kk, v, u, 3.0)}; }, k(2),
            reference(q, kk, v, u > 0.5, false, 1.0 / 3.0));
      check("sdpa_masked none" + at, dt,
            [&] { return V{sdpa_masked(q, kk, v, Tensor())}; }, k(1),
            reference(q, kk, v, Tensor(), false, none));
    }
    // Scales at run time and as a literal; work around the attention.
    Tensor q = input({2, 4, 37, 64}, dt, 11), kk = input({2, 4, 45, 64}, dt, 12),
           v = input({2, 4, 45, 64}, dt, 13), r = input({2, 4, 37, 64}, dt, 14);
    {
      Tensor ref = reference(q, kk, v, Tensor(), false, 0.1) +
                   reference(q, kk, v, Tensor(), false, 0.25);
      check("sdpa_scaled", dt, [&] { return V{sdpa_scaled(q, kk, v, 0.1)}; },
            k(3), ref);
      check("sdpa_around", dt, [&] { return V{sdpa_around(q, kk, v, r)}; }, k(3),
            reference(q * 1.5, kk, v, Tensor(), true, none) +
                r.to(kiln::Device::cpu()).to(kiln::f64));
    }
    // Grouped-query heads: 8 query heads over 2 key/value heads, q, k and
    // v views of the projections (head dim 64).
    {
      Tensor x = input({2, 40, 512}, dt, 15), wq = input({512, 512}, dt, 16) * 0.05,
             wk = input({128, 512}, dt, 17) * 0.05,
             wv = input({128, 512}, dt, 18) * 0.05,
             wo = input({512, 512}, dt, 19) * 0.05;
      auto c = [](const Tensor &t) {
        return t.to(kiln::Device::cpu()).to(kiln::f64);
      };
      Tensor xr = c(x);
      Tensor qr = kiln::linear(xr, c(wq)).view({2, 40, 8, 64}).transpose(1, 2),
             kr = kiln::linear(xr, c(wk)).view({2, 40, 2, 64}).transpose(1, 2),
             vr = kiln::linear(xr, c(wv)).view({2, 40, 2, 64}).transpose(1, 2);
      Tensor o = reference(qr, kr, vr, Tensor(), true, none);
      Tensor ref = kiln::linear(o.transpose(1, 2).reshape({2, 40, -1}), c(wo));
      check("gqa_block", dt,
            [&] { return V{gqa_block(x, wq, wk, wv, wo, 8, 2)}; }, k(-1), ref);
    }
  }
  // Decoding against a cache (grouped-query heads: 4 over 2; one query row,
  // then two): on CUDA the decode kernel's one launch after the kernel
  // scaling the new key (f64: the cats' copies and the attention kernel);
  // the CPU joins the pieces, then attends.
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64,
                         kiln::DType::bf16, kiln::DType::f16})
    for (int64_t L : {1, 2}) {
      const std::string at = " [L=" + std::to_string(L) + "]";
      Tensor q = input({2, 4, L, 64}, dt, 40), kc = input({2, 2, 37, 64}, dt, 41),
             vc = input({2, 2, 37, 64}, dt, 42), kn = input({2, 2, L, 64}, dt, 43),
             vn = input({2, 2, L, 64}, dt, 44), m = input({L, 37 + L}, dt, 45);
      auto c = [](const Tensor &t) {
        return t.to(kiln::Device::cpu()).to(kiln::f64);
      };
      Tensor keys = kiln::cat({c(kc), c(kn) * 0.5}, -2),
             values = kiln::cat({c(vc), c(vn)}, -2);
      const bool cuda = dev.is_cuda();
      const int64_t pieces = !cuda ? -1 : dt == kiln::DType::f64 ? k(4) : k(2);
      check("decode_step" + at, dt,
            [&] { return V{decode_step(q, kc, vc, kn, vn)}; }, pieces,
            reference(q, keys, values, Tensor(), false, none));
      capture_compare::check(
          "decode_keep" + at, dt,
          [&] {
            auto [o, kk, vv] = decode_keep(q, kc, vc, kn, vn);
            return V{o, kk, vv};
          },
          1, 0, pieces,
          {reference(q, keys, values, Tensor(), false, none), keys, values});
      check("decode_masked" + at, dt,
            [&] { return V{decode_masked(q, kc, vc, kn, vn, m)}; },
            cuda ? k(4) : -1, reference(q, keys, values, m, false, none));
    }
  // Attention written as ops over shapes matmul broadcasts and attention
  // does not (k and v without q's batch dim): the guard fails, the
  // original body runs (one fallback, eager's result). backend=eager runs
  // the captured ops as they are (no fusion, no guard to fail).
  {
    Tensor q = input({2, 3, 6, 16}, kiln::f32, 28), kk = input({3, 7, 16}, kiln::f32, 29),
           v = input({3, 7, 16}, kiln::f32, 30), m = input({6, 7}, kiln::f32, 31);
    const bool fused = k(1) == 1;
    capture_compare::check("by_hand, broadcast batch: falls back", kiln::f32,
                           [&] { return V{by_hand(q, kk, v, m)}; }, fused ? 0 : 1,
                           fused ? 1 : 0);
  }
  // A b8 tensor added to the scores (by_hand's m) is 0/1 added in eager,
  // not a mask: the compiled code takes only the variant's dtype there (the
  // guard fails, the original body runs).
  {
    Tensor q = input({2, 3, 6, 16}, kiln::f32, 33), kk = input({2, 3, 7, 16}, kiln::f32, 34),
           v = input({2, 3, 7, 16}, kiln::f32, 35);
    Tensor m = input({6, 7}, kiln::f32, 36) > 0.0;
    const bool fused = k(1) == 1;
    capture_compare::check("by_hand, a b8 addend: falls back", kiln::f32,
                           [&] { return V{by_hand(q, kk, v, m)}; }, fused ? 0 : 1,
                           fused ? 1 : 0);
  }
  // A query row whose keys are all masked out is 0, as torch.
  {
    Tensor q = input({1, 1, 3, 64}, kiln::f32, 20), kk = input({1, 1, 5, 64}, kiln::f32, 21),
           v = input({1, 1, 5, 64}, kiln::f32, 22);
    std::vector<double> m(15, 0.0);
    for (int j = 0; j < 5; ++j)
      m[size_t(5 + j)] = -std::numeric_limits<double>::infinity();
    Tensor am = kiln::from_vector(m, kiln::Dims{3, 5}).to(kiln::f32).to(dev);
    Tensor u = kiln::where(am == 0.0, 1.0, 0.0).to(kiln::f32);
    check("fully masked row (additive)", kiln::f32,
          [&] { return V{sdpa_masked(q, kk, v, am)}; }, k(1),
          reference(q, kk, v, am, false, none));
    check("fully masked row (bool)", kiln::f32,
          [&] { return V{sdpa_bool(q, kk, v, u)}; }, k(2),
          reference(q, kk, v, u > 0.5, false, none));
  }
  // What eager raises on raises compiled too (the guard fails first).
  {
    Tensor q = input({1, 2, 4, 16}, kiln::f32, 23), kk = input({1, 2, 6, 16}, kiln::f32, 24),
           bad = input({1, 2, 6, 8}, kiln::f32, 25),
           m = input({4, 6}, kiln::f32, 26);
    capture_compare::expect_raises("a mask with is_causal raises",
                                   [&] { return sdpa_both(q, kk, kk, m); });
    capture_compare::expect_raises("a mask of another float dtype raises", [&] {
      return sdpa_masked(q, kk, kk, input({4, 6}, kiln::f64, 32));
    });
    capture_compare::expect_raises("keys of another head dim raise",
                                   [&] { return sdpa(q, bad, bad); });
    capture_compare::expect_raises("3 query heads over 2 key heads raise", [&] {
      return sdpa(input({1, 3, 4, 16}, kiln::f32, 27), kk, kk);
    });
    // Written as matmuls, 4 query heads over 2 key heads do not broadcast
    // (eager raises) though grouped-query attention would take them: the
    // compiled call raises too. One key head broadcasts: compiled, fused.
    Tensor q4 = input({1, 4, 4, 16}, kiln::f32, 28);
    capture_compare::expect_raises("by_hand: 4 query heads over 2 key heads raise",
                                   [&] { return by_hand(q4, kk, kk, m); });
    capture_compare::expect_raises(
        "by_hand_q_scaled: 4 query heads over 2 key heads raise",
        [&] { return by_hand_q_scaled(q4, kk, kk, m); });
    Tensor k1 = input({1, 1, 6, 16}, kiln::f32, 29),
           v1 = input({1, 1, 6, 16}, kiln::f32, 30);
    // Written with bmm: 4-D operands raise, and so does one key batch for
    // two query batches (bmm does not broadcast; attention would).
    capture_compare::expect_raises("by_hand_bmm: 4-D operands raise",
                                   [&] { return by_hand_bmm(q4, k1, v1, 0.25); });
    capture_compare::expect_raises("by_hand_bmm: 1 key batch for 2 raises", [&] {
      Tensor k3 = input({1, 6, 16}, kiln::f32, 33);
      return by_hand_bmm(input({2, 4, 16}, kiln::f32, 34), k3, k3, 0.25);
    });
    check("by_hand, one key head for 4 query heads", kiln::f32,
          [&] { return V{by_hand(q4, k1, v1, m)}; }, k(1),
          reference(q4, k1, v1, m, false, none));
  }
  return capture_compare::summary();
}
