// A LLaMA-style decoder block in plain C++ on kiln::Tensor, written the way
// PyTorch model code writes it (Hugging Face's LlamaDecoderLayer): RMS norm,
// q/k/v projections split into heads by views, rotary position embedding
// (rotate_half: the halves of the head dim, joined by cat), causal
// attention with grouped-query heads, the output projection and residual,
// RMS norm, the SwiGLU MLP and residual. Without the plugin it is an eager
// program; with it each forward is captured and compiled.
//
// Shared by examples/llama (the example: compiled against eager and against
// PyTorch on identical weights) and bench/ (timed against torch.compile).
#pragma once

#include <kiln/kiln.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace llama {

using kiln::Tensor;

struct Config {
  int64_t hidden = 4096, heads = 32, kv_heads = 32, mlp = 11008;
  double eps = 1e-5, rope_theta = 10000.0;
  int64_t head_dim() const { return hidden / heads; }
};

// [-x2, x1] for x = [x1, x2] split in halves along the last dim (of size d).
inline Tensor rotate_half(const Tensor &x, int64_t d) {
  Tensor x1 = x.slice(-1, 0, d / 2);
  Tensor x2 = x.slice(-1, d / 2, d);
  return kiln::cat({-x2, x1}, -1);
}

// Rotary position embedding of t [B, heads, T, d] by cos/sin [T, d].
inline Tensor rope(const Tensor &t, const Tensor &cos, const Tensor &sin,
                   int64_t d) {
  return t * cos + rotate_half(t, d) * sin;
}

// h [B, T, C] projected by w and split into n heads of d: [B, n, T, d].
// (Sizes are passed in: a compiled function reads the sizes of its own
// arguments, not yet those of the tensors it computes.)
inline Tensor heads(const Tensor &h, const Tensor &w, int64_t B, int64_t T,
                    int64_t n, int64_t d) {
  return kiln::linear(h, w).view({B, T, n, d}).transpose(1, 2);
}

// The forwards are compiled for bf16 and f32 (other dtypes run eagerly):
// each dtype is a copy of the block's kernels in the binary.
struct Block {
  Config cfg;
  Tensor attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down;

  // The merged heads o [B, T, C] projected, the residual, RMS norm, the
  // SwiGLU MLP and its residual.
  // (These helpers come before the forwards: the plugin inlines a member
  // defined earlier in the class.)
  Tensor finish(const Tensor &x, const Tensor &o) const {
    Tensor r = x + kiln::linear(o, wo);
    Tensor m = kiln::rms_norm(r, mlp_norm, cfg.eps);
    Tensor g = kiln::silu(kiln::linear(m, w_gate)) * kiln::linear(m, w_up);
    return r + kiln::linear(g, w_down);
  }

  // RMS norm, then q, k and v [B, heads, T, D], q and k rotated.
  struct QKV {
    Tensor q, k, v;
  };
  QKV project(const Tensor &x, const Tensor &cos, const Tensor &sin, int64_t B,
              int64_t T, int64_t C) const {
    const int64_t H = cfg.heads, Hkv = cfg.kv_heads, D = C / H;
    Tensor h = kiln::rms_norm(x, attn_norm, cfg.eps);
    return {rope(heads(h, wq, B, T, H, D), cos, sin, D),
            rope(heads(h, wk, B, T, Hkv, D), cos, sin, D),
            heads(h, wv, B, T, Hkv, D)};
  }

  // Prefill: x [B, T, C] at positions 0..T-1; cos/sin [T, head_dim]. Causal
  // attention over the T tokens.
  [[kiln::compile("dtypes=bf16,f32")]]
  Tensor prefill(const Tensor &x, const Tensor &cos, const Tensor &sin) const {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    QKV a = project(x, cos, sin, B, T, C);
    Tensor o = kiln::scaled_dot_product_attention(a.q, a.k, a.v, Tensor(), true);
    return finish(x, o.transpose(1, 2).reshape({B, T, C}));
  }

  // Decode: x [B, 1, C], the new token at position S; k_cache and v_cache
  // [B, Hkv, S, head_dim] of the earlier tokens; cos/sin [1, head_dim] for
  // position S. The new key and value are appended (cat) and the token
  // attends to all S + 1.
  [[kiln::compile("dtypes=bf16,f32")]]
  Tensor decode(const Tensor &x, const Tensor &k_cache, const Tensor &v_cache,
                const Tensor &cos, const Tensor &sin) const {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    QKV a = project(x, cos, sin, B, T, C);
    Tensor keys = kiln::cat({k_cache, a.k}, 2);
    Tensor values = kiln::cat({v_cache, a.v}, 2);
    Tensor o = kiln::scaled_dot_product_attention(a.q, keys, values);
    return finish(x, o.transpose(1, 2).reshape({B, T, C}));
  }

  // Decode over a cache updated in place (a static cache, as serving code
  // keeps one): k_cache and v_cache [B, Hkv, capacity, head_dim] hold the
  // earlier tokens at positions 0..S-1; the new token's key and value are
  // written at position S (copy_ into a slice of each), and the token
  // attends to positions 0..S of the cache. One compiled region: the
  // copies run between the kernels that make k and v and the attention
  // that reads the cache.
  [[kiln::compile("dtypes=bf16,f32")]]
  Tensor decode_cached(const Tensor &x, const Tensor &k_cache,
                       const Tensor &v_cache, const Tensor &cos,
                       const Tensor &sin, int64_t S) const {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    QKV a = project(x, cos, sin, B, T, C);
    k_cache.slice(2, S, S + 1).copy_(a.k);
    v_cache.slice(2, S, S + 1).copy_(a.v);
    Tensor o = kiln::scaled_dot_product_attention(
        a.q, k_cache.slice(2, 0, S + 1), v_cache.slice(2, 0, S + 1));
    return finish(x, o.transpose(1, 2).reshape({B, T, C}));
  }
};

// The rotary tables for positions [from, from + n): cos and sin of
// position * theta^(-2i/D), each frequency twice (the halves), as HF's
// LlamaRotaryEmbedding; computed in float64, stored as `dt`.
inline void rope_tables(const Config &c, int64_t from, int64_t n, kiln::DType dt,
                        kiln::Device dev, Tensor &cos, Tensor &sin) {
  const int64_t D = c.head_dim();
  std::vector<double> cv(size_t(n * D)), sv(size_t(n * D));
  for (int64_t p = 0; p < n; ++p)
    for (int64_t i = 0; i < D; ++i) {
      const double inv = std::pow(c.rope_theta, -double(2 * (i % (D / 2))) / double(D));
      const double a = double(from + p) * inv;
      cv[size_t(p * D + i)] = std::cos(a);
      sv[size_t(p * D + i)] = std::sin(a);
    }
  cos = kiln::from_vector(cv, kiln::Dims{n, D}).to(dt).to(dev);
  sin = kiln::from_vector(sv, kiln::Dims{n, D}).to(dt).to(dev);
}

// Weights from a seed (normal, scaled by 1/sqrt(fan-in); the norms' gains
// near 1), in `dt` on `dev`.
inline Block make_block(const Config &c, uint64_t seed, kiln::DType dt,
                        kiln::Device dev) {
  kiln::manual_seed(seed);
  auto w = [&](int64_t out, int64_t in) {
    return (kiln::randn({out, in}, kiln::f32, dev) * (1.0 / std::sqrt(double(in))))
        .to(dt);
  };
  auto gain = [&](int64_t n) {
    return (kiln::randn({n}, kiln::f32, dev) * 0.1 + 1.0).to(dt);
  };
  const int64_t D = c.head_dim();
  Block b;
  b.cfg = c;
  b.attn_norm = gain(c.hidden);
  b.wq = w(c.heads * D, c.hidden);
  b.wk = w(c.kv_heads * D, c.hidden);
  b.wv = w(c.kv_heads * D, c.hidden);
  b.wo = w(c.hidden, c.heads * D);
  b.mlp_norm = gain(c.hidden);
  b.w_gate = w(c.mlp, c.hidden);
  b.w_up = w(c.mlp, c.hidden);
  b.w_down = w(c.hidden, c.mlp);
  return b;
}

} // namespace llama
