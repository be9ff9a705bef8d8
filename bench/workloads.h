// The benchmark workloads, as a Kiln user writes them. Each is a
// [[kiln::compile]] function; built without the plugin they are eager.
#pragma once

#include <kiln/kiln.h>

#include <cmath>

using kiln::Tensor;

[[kiln::compile]] Tensor sin_plus_cos(const Tensor &x, const Tensor &y) {
  return kiln::sin(x) + kiln::cos(y);
}

[[kiln::compile]] Tensor sin2_cos2(const Tensor &x) {
  return kiln::pow(kiln::sin(x), 2) + kiln::pow(kiln::cos(x), 2);
}

[[kiln::compile]] Tensor seed_model(const Tensor &c, const Tensor &x) {
  Tensor x1 = c + x;
  Tensor x2 = c - x;
  return x1 * x2;
}

[[kiln::compile]] Tensor gelu_tanh(const Tensor &x) {
  Tensor inner = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + kiln::tanh(inner));
}

[[kiln::compile]] Tensor sin_cos_loop(Tensor x) {
  for (int i = 0; i < 3; ++i)
    x = kiln::sin(x) + kiln::cos(x);
  return x;
}

[[kiln::compile]] Tensor where_sum(const Tensor &x, double t) {
  return kiln::where(kiln::sum(x) > t, x * 2, x);
}

// A whole tensor's variance: one pass of Welford's update (the welford
// pass), split over blocks.
[[kiln::compile]] Tensor var_all(const Tensor &x) { return kiln::var(x); }

[[kiln::compile]] Tensor softmax_rows(const Tensor &x) {
  return kiln::softmax(x, -1);
}

[[kiln::compile]] Tensor log_softmax_rows(const Tensor &x) {
  return kiln::log_softmax(x, -1);
}

[[kiln::compile]] Tensor layer_norm_rows(const Tensor &x, const Tensor &w,
                                         const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}

[[kiln::compile]] Tensor rms_norm_rows(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-6);
}

// RMS norm as model code writes it (issue 18): f32 statistics of a bf16
// activation, the result cast back before the weight.
[[kiln::compile]] Tensor rms_norm_mixed(const Tensor &x, const Tensor &w) {
  Tensor xf = x.to(kiln::f32);
  Tensor r = xf * kiln::rsqrt(kiln::mean(xf * xf, -1, true) + 1e-6);
  return r.to(x.dtype()) * w;
}

// An Adam step as optimizers write it (issue 18 items 7 and 9): m, v and p
// updated in place, each reading a different set of tensors. One kernel
// reads p, m, v, g and writes p, m, v in place: 28 B per f32 parameter.
[[kiln::compile]] void adam_step(Tensor &p, Tensor &m, Tensor &v,
                                 const Tensor &g, double lr, double b1,
                                 double b2, double eps, int64_t step) {
  m *= b1;
  m += g * (1 - b1);
  v *= b2;
  v += g * g * (1 - b2);
  double bc1 = 1 - std::pow(b1, double(step));
  double bc2 = 1 - std::pow(b2, double(step));
  p -= (m / bc1) / (kiln::sqrt(v / bc2) + eps) * lr;
}

// Attention's masked softmax (issue 18 item 5): a causal [T, T] mask
// beside [B, H, T, T] scores, one row kernel reading the mask in place.
[[kiln::compile]] Tensor masked_softmax(const Tensor &s, const Tensor &mask,
                                        double scale) {
  return kiln::softmax(kiln::where(mask, s * scale, -1e9), -1);
}

[[kiln::compile]] Tensor layer_norm_gelu(const Tensor &x, const Tensor &w,
                                         const Tensor &b) {
  return kiln::gelu(kiln::layer_norm(x, w, b, 1e-5), "tanh");
}

// The row ops as users also write them, from their parts: the capture and
// the scheduler should reach the same one-kernel plans as the library calls.
[[kiln::compile]] Tensor softmax_composed(const Tensor &x) {
  Tensor e = kiln::exp(x - kiln::amax(x, -1, true));
  return e / kiln::sum(e, -1, true);
}

// A per-channel bias, then a head split and a softmax over each head's
// features: the view and the transpose move onto x and onto the bias
// broadcast to x's shape (sink-views), so one row kernel reads x and b
// through them; nothing is written before it.
[[kiln::compile]] Tensor bias_heads_softmax(const Tensor &x, const Tensor &b,
                                            int64_t H) {
  const int64_t B = x.size(0), T = x.size(1);
  return kiln::softmax((x + b).view({B, T, H, -1}).transpose(1, 2), -1);
}

// A loss over rows of logits (cross entropy against uniform targets): row
// reductions, then the mean of the per-row values (two kernels).
[[kiln::compile]] Tensor lse_loss(const Tensor &x) {
  return kiln::mean(kiln::logsumexp(x, -1) - kiln::mean(x, -1));
}

[[kiln::compile]] Tensor layer_norm_composed(const Tensor &x, const Tensor &w,
                                             const Tensor &b) {
  Tensor mu = kiln::mean(x, -1, true);
  Tensor d = x - mu;
  Tensor var = kiln::mean(d * d, -1, true);
  return d * kiln::rsqrt(var + 1e-5) * w + b;
}

// Matrix products (issue 13): library GEMMs in the plan, the bias,
// activation and residual as cuBLASLt's epilogue; a row op before one is
// a row kernel writing its input.
[[kiln::compile]] Tensor linear_bias_gelu(const Tensor &x, const Tensor &w,
                                          const Tensor &b) {
  return kiln::gelu(kiln::linear(x, w, b), "tanh");
}

[[kiln::compile]] Tensor matmul_plain(const Tensor &a, const Tensor &b) {
  return kiln::matmul(a, b);
}

[[kiln::compile]] Tensor norm_gelu_matmul(const Tensor &x, const Tensor &g,
                                          const Tensor &b, const Tensor &w) {
  return kiln::matmul(kiln::gelu(kiln::layer_norm(x, g, b, 1e-5), "tanh"), w);
}

// Self-attention as model code writes it, no attention call: the qkv
// projection, heads split by views, scores through a transposed view,
// softmax, the heads merged by a reshape, the output projection. The
// compiler's fuse-attention pass makes softmax(q @ k^T * s) @ v the fused
// attention kernel.
[[kiln::compile]] Tensor self_attention(const Tensor &x, const Tensor &wqkv,
                                        const Tensor &wo, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  Tensor qkv = kiln::linear(x, wqkv);
  Tensor q = qkv.slice(-1, 0, C).view({B, T, H, -1}).transpose(1, 2);
  Tensor k = qkv.slice(-1, C, 2 * C).view({B, T, H, -1}).transpose(1, 2);
  Tensor v = qkv.slice(-1, 2 * C, 3 * C).view({B, T, H, -1}).transpose(1, 2);
  Tensor p = kiln::softmax(kiln::matmul(q, k.transpose(-2, -1)) * 0.125, -1);
  Tensor o = kiln::matmul(p, v).transpose(1, 2).reshape({B, T, C});
  return kiln::linear(o, wo);
}

// Scaled dot-product attention: one fused kernel (no scores in memory).
[[kiln::compile]] Tensor attention(const Tensor &q, const Tensor &k,
                                   const Tensor &v) {
  return kiln::scaled_dot_product_attention(q, k, v);
}
[[kiln::compile]] Tensor attention_causal(const Tensor &q, const Tensor &k,
                                          const Tensor &v) {
  return kiln::scaled_dot_product_attention(q, k, v, Tensor(), true);
}

[[kiln::compile]] Tensor mlp_block(const Tensor &x, const Tensor &w1,
                                   const Tensor &b1, const Tensor &w2,
                                   const Tensor &b2) {
  Tensor h = kiln::gelu(kiln::linear(x, w1, b1), "tanh");
  return x + kiln::linear(h, w2, b2);
}

// Small calls, where launches, not bytes or FLOPs, take the time (issue
// 14, CUDA graphs), each once as compiled by default and once replayed as
// a CUDA graph (mode=reduce-overhead), at 32x1024 f32:
// - a chain of layer norm, eight pointwise ops and softmax (eager: a
//   kernel per op; Kiln: one row kernel);
// - a small model of 8 kernels: two blocks of layer norm and a
//   1024 -> 64 -> 1024 MLP (GELU between, a residual after), then softmax
//   and column statistics.
#define KILN_SMALL_CHAIN_BODY                                                  \
  Tensor h = kiln::layer_norm(x, g, b, 1e-5);                                  \
  Tensor a = kiln::gelu(h * 1.702, "tanh") + 0.1 * kiln::sin(h);               \
  Tensor z = a * kiln::sigmoid(h) - 0.5 * kiln::tanh(a);                       \
  return kiln::softmax(z, -1);
[[kiln::compile]] Tensor small_chain(const Tensor &x, const Tensor &g,
                                     const Tensor &b) {
  KILN_SMALL_CHAIN_BODY
}
[[kiln::compile("mode=reduce-overhead")]] Tensor small_chain_graphed(
    const Tensor &x, const Tensor &g, const Tensor &b) {
  KILN_SMALL_CHAIN_BODY
}
#define KILN_SMALL_MODEL_BODY                                                  \
  Tensor h = kiln::layer_norm(x, g, b, 1e-5);                                  \
  Tensor o = kiln::linear(kiln::gelu(kiln::linear(h, w1), "tanh"), w2) + x;    \
  Tensor h2 = kiln::layer_norm(o, g, b, 1e-5);                                 \
  Tensor o2 = kiln::linear(kiln::gelu(kiln::linear(h2, w1), "tanh"), w2) + o;  \
  Tensor s = kiln::softmax(o2 * 0.5, -1);                                      \
  return s - kiln::mean(s, 0, true) + kiln::amax(o2, 0, true);
[[kiln::compile]] Tensor small_model(const Tensor &x, const Tensor &g,
                                     const Tensor &b, const Tensor &w1,
                                     const Tensor &w2) {
  KILN_SMALL_MODEL_BODY
}
[[kiln::compile("mode=reduce-overhead")]] Tensor small_model_graphed(
    const Tensor &x, const Tensor &g, const Tensor &b, const Tensor &w1,
    const Tensor &w2) {
  KILN_SMALL_MODEL_BODY
}
