// Eager scaled dot-product attention (kiln/attention.h): torch's shape rules
// and checks, then one kernel (attention_impl.h) over 4-D strided operands.
#include "attention_impl.h"
#include "detail.h"

#include <kiln/attention.h>
#include <kiln/generated.h>
#include <kiln/rt.h>

#include <cmath>
#include <string>

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
    Dims b;
    if (!rt::broadcast_shapes({mask, &scores}, b) || !(b == scores))
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

} // namespace

Tensor scaled_dot_product_attention(const Tensor &q, const Tensor &k,
                                    const Tensor &v, const Tensor &attn_mask,
                                    bool is_causal,
                                    std::optional<double> scale) {
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
  Tensor out = detail::empty_for(kFn, out_shape, q.dtype(), q.device());
  if (out.numel() == 0)
    return out;
  // Laid out as q where q's head dim is its innermost (PyTorch's fused
  // kernels do the same): heads split from [B, L, H, D] memory give an
  // output in [B, L, H, Dv] memory, whose heads merge back as a view.
  if (q.strides()[q.dim() - 1] == 1 && !q.is_contiguous()) {
    Tensor ordered = gen::empty_ordered(out_shape, q.dtype(), q.device(),
                                        {q.layout()});
    int64_t s[4];
    if (ordered.strides()[ordered.dim() - 1] == 1 && strides4(ordered, s))
      out = ordered;
  }

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

} // namespace kiln

namespace kiln::gen {

bool attention_shape(const Dims &q, const Dims &k, const Dims &v,
                     const Dims *mask, bool is_causal, Dims &out) {
  Dims scores;
  return shape_error(q, k, v, mask, is_causal, out, scores).empty();
}

} // namespace kiln::gen
