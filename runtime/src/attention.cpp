// Eager scaled dot-product attention (kiln/attention.h): torch's shape rules
// and checks, then one kernel (attention_impl.h) over 4-D strided operands.
#include "attention_impl.h"
#include "autograd_impl.h"
#include "detail.h"

#include <kiln/attention.h>
#include <kiln/autograd.h>
#include <kiln/generated.h>
#include <kiln/join.h>
#include <kiln/matmul.h>
#include <kiln/ops.h>
#include <kiln/rt.h>

#include <cmath>
#include <string>
#include <vector>

namespace kiln {

using detail::fail;

namespace {

constexpr const char *kFn = "kiln::scaled_dot_product_attention";

// Why these shapes do not fit attention ("" when they do, `out` then the
// result's shape and `scores` the [..., Hq, L, S] shape a mask broadcasts
// to).
std::string shape_error(const Dims &q, const Dims &k, const Dims &v,
                        const Dims *mask, bool causal, Dims &out,
                        Dims &scores) {
  const int r = q.rank();
  if (r < 2)
    return "query has shape " + q.str() +
           ": attention takes [..., L, E] operands (rank 2 or more)";
  if (k.rank() != r || v.rank() != r)
    return "query, key and value have shapes " + q.str() + ", " + k.str() +
           " and " + v.str() + ": they must have one rank";
  if (k[r - 1] != q[r - 1])
    return "query " + q.str() + " and key " + k.str() +
           " differ in their last dim (the embedding E)";
  if (v[r - 2] != k[r - 2])
    return "key " + k.str() + " and value " + v.str() +
           " differ in their length (dim -2)";
  for (int d = 0; d + 3 < r; ++d)
    if (k[d] != q[d] || v[d] != q[d])
      return "query, key and value have shapes " + q.str() + ", " + k.str() +
             " and " + v.str() + ": their batch dims must be equal";
  if (r >= 3) {
    const int64_t hq = q[r - 3], hk = k[r - 3];
    if (v[r - 3] != hk)
      return "key " + k.str() + " and value " + v.str() +
             " differ in their number of heads (dim -3)";
    if (hk == 0 ? hq != 0 : hq % hk != 0)
      return "query has " + std::to_string(hq) + " heads and key/value " +
             std::to_string(hk) +
             ": the query's heads must be a multiple of the key's "
             "(grouped-query attention)";
  }
  if (mask && causal)
    return "an explicit attn_mask and is_causal=true were both given (as "
           "torch, only one)";
  out = Dims(std::span<const int64_t>(q.begin(), size_t(r - 1)));
  scores = out;
  out.push_back(v[r - 1]);
  scores.push_back(k[r - 2]);
  if (mask) {
    if (!rt::broadcasts_to(*mask, scores))
      return "attn_mask of shape " + mask->str() +
             " does not broadcast to the scores' shape " + scores.str();
  }
  return "";
}

// Strides [batch, head, row, col] of t (rank r >= 2) with its batch dims
// (all but the last three) as one; false when no one stride reaches them.
bool strides4(const Tensor &t, int64_t s[4]) {
  const int r = t.dim();
  s[3] = t.strides()[r - 1];
  s[2] = t.strides()[r - 2];
  s[1] = r >= 3 ? t.strides()[r - 3] : 0;
  s[0] = 0;
  int inner = -1; // the innermost batch dim of size > 1 seen so far
  for (int d = r - 4; d >= 0; --d) {
    if (t.sizes()[d] == 1)
      continue;
    if (inner < 0)
      s[0] = t.strides()[d];
    else if (t.strides()[d] != t.strides()[inner] * t.sizes()[inner])
      return false;
    inner = d;
  }
  return true;
}

// The result of attention with query q: laid out as q where q's head dim
// is its innermost (PyTorch's fused kernels do the same): heads split from
// [B, L, H, D] memory give an output in [B, L, H, Dv] memory, whose heads
// merge back as a view; else contiguous.
Tensor attention_out(const Tensor &q, const Dims &out_shape) {
  Tensor out = detail::empty_for(kFn, out_shape, q.dtype(), q.device());
  if (out.numel() != 0 && q.strides()[q.dim() - 1] == 1 && !q.is_contiguous()) {
    Tensor ordered = gen::empty_ordered(out_shape, q.dtype(), q.device(),
                                        {q.layout()});
    int64_t s[4];
    if (ordered.strides()[ordered.dim() - 1] == 1 && strides4(ordered, s))
      out = ordered;
  }
  return out;
}

} // namespace

static Tensor attention_eager(const Tensor &q, const Tensor &k,
                              const Tensor &v, const Tensor &attn_mask,
                              bool is_causal, std::optional<double> scale) {
  rt::NvtxRange range("scaled_dot_product_attention");
  for (const auto &[name, t] :
       {std::pair{"query", &q}, std::pair{"key", &k}, std::pair{"value", &v}}) {
    if (!t->defined())
      fail("%s: %s is an undefined tensor", kFn, name);
    if (!is_floating(t->dtype()))
      fail("%s: %s has dtype %s: attention takes f32, f16, bf16 or f64", kFn,
           name, dtype_name(t->dtype()));
    if (t->dtype() != q.dtype())
      fail("%s: query has dtype %s and %s %s: they must have one dtype", kFn,
           dtype_name(q.dtype()), name, dtype_name(t->dtype()));
    if (t->device() != q.device())
      fail("%s: query is on %s and %s on %s: they must be on one device",
           kFn, q.device().str().c_str(), name, t->device().str().c_str());
  }
  const bool masked = attn_mask.defined();
  if (masked) {
    if (attn_mask.dtype() != DType::b8 && attn_mask.dtype() != q.dtype())
      fail("%s: attn_mask has dtype %s: it must be b8 or the query's dtype "
           "(%s)",
           kFn, dtype_name(attn_mask.dtype()), dtype_name(q.dtype()));
    if (attn_mask.device() != q.device())
      fail("%s: query is on %s and attn_mask on %s: they must be on one "
           "device",
           kFn, q.device().str().c_str(), attn_mask.device().str().c_str());
  }
  Dims out_shape, scores;
  std::string why = shape_error(q.sizes(), k.sizes(), v.sizes(),
                                masked ? &attn_mask.sizes() : nullptr,
                                is_causal, out_shape, scores);
  if (!why.empty())
    fail("%s: %s", kFn, why.c_str());
  Tensor out = attention_out(q, out_shape);
  if (out.numel() == 0)
    return out;

  detail::AttnArgs a;
  const int r = q.dim();
  a.dtype = q.dtype();
  a.device = q.device();
  a.Hq = r >= 3 ? q.size(-3) : 1;
  a.Hkv = r >= 3 ? k.size(-3) : 1;
  a.L = q.size(-2);
  a.S = k.size(-2);
  a.D = q.size(-1);
  a.Dv = v.size(-1);
  a.B = out.numel() / (a.Hq * a.L * a.Dv);
  // Operands whose batch dims no one stride reaches are copied first.
  Tensor qq = q, kk = k, vv = v, mm;
  if (!strides4(qq, a.q_stride))
    qq = q.contiguous(), strides4(qq, a.q_stride);
  if (!strides4(kk, a.k_stride))
    kk = k.contiguous(), strides4(kk, a.k_stride);
  if (!strides4(vv, a.v_stride))
    vv = v.contiguous(), strides4(vv, a.v_stride);
  if (masked) {
    mm = attn_mask.expand(scores);
    if (!strides4(mm, a.m_stride))
      mm = mm.contiguous(), strides4(mm, a.m_stride);
    a.mask = mm.data_ptr();
    a.mask_bool = mm.dtype() == DType::b8;
  }
  a.q = qq.data_ptr();
  a.k = kk.data_ptr();
  a.v = vv.data_ptr();
  a.out = out.data_ptr();
  if (!strides4(out, a.o_stride)) // contiguous: one stride reaches them
    fail("%s: internal error: the output's batch dims do not collapse", kFn);
  a.causal = is_causal;
  a.scale = scale ? *scale : 1.0 / std::sqrt(double(a.D));
  if (a.device.is_cuda())
    detail::cuda_attention(a);
  else
    detail::cpu_attention(a);
  return out;
}

// --- autograd: attention's derivative, from the probabilities recomputed
// with eager ops (the S x S matrix is materialised: eager backward only) ---

namespace {
// [..., Hkv, S, E] -> [..., Hq, S, E]: key/value head h / (Hq / Hkv) for
// query head h.
Tensor repeat_heads(const Tensor &t, int64_t hq) {
  const int r = t.dim();
  const int64_t hkv = t.size(r - 3);
  if (hkv == hq)
    return t;
  Dims grown = t.unsqueeze(r - 2).sizes();
  grown[r - 2] = hq / hkv;
  Dims merged = t.sizes();
  merged[r - 3] = hq;
  return t.unsqueeze(r - 2).expand(grown).reshape(merged);
}
// The reverse: sums the query heads that share a key/value head.
Tensor sum_heads(const Tensor &t, int64_t hkv) {
  const int r = t.dim();
  const int64_t hq = t.size(r - 3);
  if (hkv == hq)
    return t;
  Dims split = t.sizes();
  split[r - 3] = hkv;
  split.resize(r + 1);
  for (int d = r; d > r - 2; --d)
    split[d] = t.size(d - 1);
  split[r - 2] = hq / hkv;
  return kiln::sum(t.reshape(split), r - 2, false);
}
} // namespace

Tensor scaled_dot_product_attention(const Tensor &q, const Tensor &k,
                                    const Tensor &v, const Tensor &attn_mask,
                                    bool is_causal,
                                    std::optional<double> scale) {
  autograd::Recorder rec("scaled_dot_product_attention",
                         {&q, &k, &v, &attn_mask});
  Tensor out = attention_eager(q, k, v, attn_mask, is_causal, scale);
  if (!rec)
    return out;
  const double sc =
      scale ? *scale : 1.0 / std::sqrt(double(q.size(q.dim() - 1)));
  rec.finish(
      out, {q, k, v, attn_mask},
      [is_causal, sc](const Tensor &g, const std::vector<Tensor> &sv,
                      const std::vector<bool> &need) {
        const Tensor &q = sv[0], &k = sv[1], &v = sv[2], &mask = sv[3];
        const int r = q.dim();
        const int64_t hq = q.size(r - 3), hkv = k.size(r - 3);
        Tensor kx = repeat_heads(k, hq), vx = repeat_heads(v, hq);
        Tensor s = kiln::matmul(q, kx.transpose(r - 2, r - 1)) * sc;
        if (is_causal) {
          const int64_t L = q.size(r - 2), S = k.size(r - 2);
          Tensor i = kiln::arange(L, DType::i64, q.device()).unsqueeze(1);
          Tensor j = kiln::arange(S, DType::i64, q.device()).unsqueeze(0);
          s = kiln::where(j <= i, s, -INFINITY);
        } else if (mask.defined()) {
          s = mask.dtype() == DType::b8 ? kiln::where(mask, s, -INFINITY)
                                        : s + mask;
        }
        Tensor p = kiln::softmax(s, -1);
        p = kiln::where(p == p, p, 0.0); // rows with every key masked: 0
        Tensor dp = kiln::matmul(g, vx.transpose(r - 2, r - 1));
        Tensor ds = p * (dp - kiln::sum(dp * p, -1, true));
        std::vector<Tensor> out(4);
        if (need[0])
          out[0] = kiln::matmul(ds, kx) * sc;
        if (need[1])
          out[1] = sum_heads(kiln::matmul(ds.transpose(r - 2, r - 1), q) * sc,
                             hkv);
        if (need[2])
          out[2] = sum_heads(kiln::matmul(p.transpose(r - 2, r - 1), g), hkv);
        if (need[3])
          out[3] = ds; // an additive mask's: summed to its shape
        return out;
      });
  return out;
}

} // namespace kiln

namespace kiln::gen {

bool attention_shape(const Dims &q, const Dims &k, const Dims &v,
                     const Dims *mask, bool is_causal, Dims &out) {
  Dims scores;
  return shape_error(q, k, v, mask, is_causal, out, scores).empty();
}

namespace {

// The decode kernels' operands (kiln::detail::DecodeArgs) for these
// tensors: nullptr, or why they do not apply (then the eager expression
// runs; KILN_LOGS=kernels prints it).
const char *decode_args(const Tensor &q, const std::vector<Tensor> &k,
                        const std::vector<Tensor> &v, const Tensor &k_cat,
                        const Tensor &v_cat, std::optional<double> scale,
                        kiln::detail::DecodeArgs &a, Dims &out_shape) {
  const size_t n = k.size();
  if (!q.defined() || !q.device().is_cuda() || n < 1 ||
      n > size_t(kiln::detail::kMaxKvPieces) || v.size() != n || q.dim() < 3)
    return "not CUDA, or not 1 to 4 pieces of rank 3 or more";
  if (kiln::is_grad_enabled() && q.requires_grad())
    return "autograd records";
  const int r = q.dim();
  std::vector<Dims> ks, vs;
  a.start[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const Tensor *t : {&k[i], &v[i]})
      if (!t->defined() || t->dtype() != q.dtype() ||
          t->device() != q.device() || t->dim() != r ||
          (kiln::is_grad_enabled() && t->requires_grad()))
        return "a piece of another dtype, device or rank, or recorded by autograd";
    if (k[i].size(r - 2) != v[i].size(r - 2))
      return "the key and value pieces differ in length";
    ks.push_back(k[i].sizes());
    vs.push_back(v[i].sizes());
    a.start[i + 1] = a.start[i] + k[i].size(r - 2);
  }
  Dims kd, vd, scores;
  if (!cat_shape(ks, -2, kd) || !cat_shape(vs, -2, vd) ||
      !shape_error(q.sizes(), kd, vd, nullptr, false, out_shape, scores).empty())
    return "the shapes do not fit";
  for (const auto &[t, d] : {std::pair{&k_cat, &kd}, std::pair{&v_cat, &vd}})
    if (t->defined() && (t->sizes() != *d || t->dtype() != q.dtype() ||
                         t->device() != q.device()))
      return "a cat to write of another shape";
  int64_t s4[4];
  auto three = [&](const Tensor &t, int64_t *dst) {
    if (!strides4(t, s4) || s4[3] != 1)
      return false;
    std::copy(s4, s4 + 3, dst);
    return true;
  };
  if (!three(q, a.q_stride))
    return "the query's strides";
  for (size_t i = 0; i < n; ++i) {
    if (!three(k[i], a.k_stride[i]) || !three(v[i], a.v_stride[i]))
      return "a piece's strides";
    a.k[i] = k[i].data_ptr();
    a.v[i] = v[i].data_ptr();
  }
  if (k_cat.defined()) {
    if (!three(k_cat, a.ko_stride))
      return "the key cat's strides";
    a.k_out = k_cat.data_ptr();
  }
  if (v_cat.defined()) {
    if (!three(v_cat, a.vo_stride))
      return "the value cat's strides";
    a.v_out = v_cat.data_ptr();
  }
  a.pieces = int(n);
  a.dtype = q.dtype();
  a.device = q.device();
  a.Hq = q.size(r - 3);
  a.Hkv = kd[r - 3];
  a.L = q.size(r - 2);
  a.S = kd[r - 2];
  a.D = q.size(r - 1);
  a.Dv = vd[r - 1];
  a.B = 1;
  for (int d = 0; d + 3 < r; ++d)
    a.B *= q.size(d);
  a.q = q.data_ptr();
  a.scale = scale ? *scale : 1.0 / std::sqrt(double(a.D));
  return nullptr;
}

} // namespace

Tensor attention_pieces(const Tensor &q, const std::vector<Tensor> &k,
                        const std::vector<Tensor> &v, const Tensor &attn_mask,
                        bool is_causal, std::optional<double> scale,
                        const Tensor &k_cat, const Tensor &v_cat,
                        int64_t k_dim, int64_t v_dim) {
  // The key dim of q's rank, counted from the end or the front.
  auto key_dim = [&](int64_t d) {
    return q.defined() && (d == -2 || d == int64_t(q.dim()) - 2);
  };
  if (!attn_mask.defined() && !is_causal && key_dim(k_dim) && key_dim(v_dim)) {
    kiln::detail::DecodeArgs a;
    Dims out_shape;
    const char *why = decode_args(q, k, v, k_cat, v_cat, scale, a, out_shape);
    if (!why) {
      Tensor out = attention_out(q, out_shape);
      if (out.numel() == 0 && !k_cat.defined() && !v_cat.defined())
        return out;
      int64_t s4[4];
      if (out.numel() != 0 && strides4(out, s4)) {
        std::copy(s4, s4 + 3, a.o_stride);
        a.out = out.data_ptr();
        rt::NvtxRange range("scaled_dot_product_attention");
        if (kiln::detail::cuda_decode_attention(a))
          return out;
        why = "the decode kernels do not take the dtype, head dims, query "
              "rows per key head or alignment";
      }
    }
    if (why && q.defined() && q.device().is_cuda() &&
        rt::log_enabled(rt::kLogKernels))
      rt::log(rt::kLogKernels, "attention over %zu key pieces: %s: the pieces "
              "are joined first", k.size(), why);
  }
  auto join = [](const std::vector<Tensor> &pieces, const Tensor &into,
                 int64_t dim) {
    if (!into.defined()) // one piece: attention reads it as it is
      return pieces.size() == 1 ? pieces[0] : kiln::cat(pieces, dim);
    std::vector<Dims> shapes;
    for (const Tensor &t : pieces)
      shapes.push_back(t.sizes());
    cat_copy(into, pieces, shapes, dim);
    return into;
  };
  return scaled_dot_product_attention(q, join(k, k_cat, k_dim),
                                      join(v, v_cat, v_dim), attn_mask,
                                      is_causal, scale);
}

} // namespace kiln::gen
