// attention_impl.h - the two halves of kiln::scaled_dot_product_attention
// (kiln/attention.h) and what they share. attention.cpp checks the
// operands, broadcasts the mask, flattens the batch dims and hands each
// half one AttnArgs; the halves compute
//
//   out[b, h, i, :] = sum_j p[j] * v[b, h / G, j, :],
//   p = softmax_j(scale * q[b, h, i, :] . k[b, h / G, j, :] + bias[b, h, i, j])
//
// (G = Hq / Hkv query heads share one key/value head), where bias is 0, the
// additive mask, or -inf where a bool mask is false or (causal) j > i. A
// row whose every bias is -inf is 0 (PyTorch's math backend's safe softmax
// and its flash kernels agree on that). NaN in q, k, v or an additive mask
// propagates to the rows it takes part in (a masked-out key's score is -inf
// whatever k holds). f16/bf16/f32 compute in f32, f64 in f64.
#pragma once

#include <kiln/dtype.h>
#include <kiln/tensor.h>

#include <cstdint>

namespace kiln::detail {

struct AttnArgs {
  DType dtype = DType::f32; // q, k, v and out
  int64_t B = 0;            // flattened batch dims (>= 1 when called)
  int64_t Hq = 0, Hkv = 0;  // heads; Hq % Hkv == 0
  int64_t L = 0, S = 0;     // query and key/value lengths (L >= 1)
  int64_t D = 0, Dv = 0;    // q/k head dim, v/out head dim
  // Element pointers and strides in elements, dims [batch, head, row, col]
  // (row: L for q, S for k and v). Any strides (0 included) are allowed.
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t q_stride[4] = {}, k_stride[4] = {}, v_stride[4] = {};
  // The result [B, Hq, L, Dv], not aliasing the operands: its strides
  // (o_stride[3] == 1), contiguous or laid out as q (heads split from
  // [B, L, Hq, D] memory give [B, L, Hq, Dv] memory, as PyTorch's fused
  // kernels do: merging the heads back is then a view).
  void *out = nullptr;
  int64_t o_stride[4] = {};
  // The mask, broadcast to [B, Hq, L, S] (strides, 0 where broadcast), or
  // nullptr. mask_bool: b8, true takes part; else additive, of `dtype`.
  const void *mask = nullptr;
  bool mask_bool = false;
  int64_t m_stride[4] = {};
  bool causal = false; // j > i is masked out (top-left aligned, as torch)
  double scale = 1.0;
  Device device;
};

// Attention whose keys and values are the pieces of a cat along the key
// dim (kiln::gen::attention_pieces): key j of the cat is row j - start[i]
// of piece i, start[i] <= j < start[i + 1]; the key and value pieces split
// the keys alike. No mask, not causal. Strides are [batch, head, row] in
// elements (the column stride is 1). k_out/v_out, when not null, receive
// the cats themselves ([B, Hkv, S, D] at ko_stride/vo_stride).
constexpr int kMaxKvPieces = 4;
constexpr int kMaxDecodeRows = 8; // query rows per key/value head (G * L)
struct DecodeArgs {
  DType dtype = DType::f32;
  int64_t B = 0, Hq = 0, Hkv = 0, L = 0, S = 0, D = 0, Dv = 0;
  const void *q = nullptr;
  int64_t q_stride[3] = {};
  int pieces = 0;
  const void *k[kMaxKvPieces] = {}, *v[kMaxKvPieces] = {};
  int64_t k_stride[kMaxKvPieces][3] = {}, v_stride[kMaxKvPieces][3] = {};
  int64_t start[kMaxKvPieces + 1] = {};
  void *k_out = nullptr, *v_out = nullptr;
  int64_t ko_stride[3] = {}, vo_stride[3] = {};
  void *out = nullptr;
  int64_t o_stride[3] = {};
  double scale = 1.0;
  Device device;
};

// OpenMP over rows on the CPU (attention_cpu.cpp).
void cpu_attention(const AttnArgs &a);
// One launch on the device's current stream (cuda/attention.cu; in a
// CPU-only build, no_cuda/cuda_absent.cpp says there is no GPU).
void cuda_attention(const AttnArgs &a);
// cuDNN's fused attention (cuda/attention_cudnn.cu), which cuda_attention
// tries first: false when it does not take the case (dtype, mask, strides,
// head dims, no engine, cuDNN absent or the backend is Kiln), and then
// nothing was queued.
bool cudnn_attention(const AttnArgs &a);
// Whether every (batch, head, row) start of an operand is 16-byte
// aligned: `base` is, and each of the strides st[0..2] ([batch, head,
// row], in elements) of a dim of more than one element is a multiple of
// the e elements in 16 bytes. (The caller checks the column stride and
// the row's length.)
inline bool rows_aligned16(const void *base, const int64_t *st, int64_t B,
                           int64_t H, int64_t rows, int64_t e) {
  const int64_t n[3] = {B, H, rows};
  for (int d = 0; d < 3; ++d)
    if (n[d] > 1 && st[d] % e != 0)
      return false;
  return reinterpret_cast<uintptr_t>(base) % 16 == 0;
}

// The split-key decode kernel (cuda/attention_decode.cu), one launch:
// false when they do not take the case (dtype, head dims other than 64 and
// 128, more than kMaxDecodeRows query rows a key/value head, unaligned
// rows; a CPU-only build), and then nothing was queued.
bool cuda_decode_attention(const DecodeArgs &a);

} // namespace kiln::detail
