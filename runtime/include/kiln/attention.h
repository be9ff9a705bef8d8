// kiln/attention.h - scaled dot-product attention, eager on the CPU and
// CUDA, with torch.nn.functional.scaled_dot_product_attention's semantics.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <optional>
#include <vector>

KILN_API_BEGIN
namespace kiln {

// softmax(q @ k^T * scale + bias) @ v, one fused kernel: the L x S scores
// are never in memory (a flash-attention kernel on CUDA, rows of online
// softmax on the CPU).
//   q [..., Hq, L, E], k [..., Hkv, S, E], v [..., Hkv, S, Ev] -> out
//   [..., Hq, L, Ev]: q, k and v of one floating dtype, on one device, of
//   one rank >= 3 with equal batch dims ...; Hq a multiple of Hkv
//   (grouped-query attention: query head h reads key/value head
//   h / (Hq / Hkv), as torch's enable_gqa=True).
//   attn_mask: undefined (none); b8 (true takes part, as torch); or of q's
//   dtype, added to the scores. It broadcasts to [..., Hq, L, S].
//   is_causal: query i attends to keys j <= i (top-left aligned, as torch);
//   raises when attn_mask is also given (as torch).
//   scale: 1 / sqrt(E) when not given.
// A query row whose keys are all masked out is 0 (torch's math backend and
// its flash kernels agree on that). f16/bf16 accumulate in f32; no TF32.
Tensor scaled_dot_product_attention(const Tensor &q, const Tensor &k,
                                    const Tensor &v,
                                    const Tensor &attn_mask = Tensor(),
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// Which implementation runs CUDA attention (torch.backends.cuda's
// enable_*_sdp switches play this part in PyTorch):
//   Auto  - cuDNN's fused flash attention where it takes the case (f16/bf16,
//           no attn_mask, head dims up to 128 in multiples of 8, unit last
//           strides and 16-byte aligned rows and heads) and cuDNN 9 can be
//           loaded; Kiln's kernels for the rest. The default.
//   Kiln  - Kiln's kernels only.
//   Cudnn - cuDNN, and an error saying why for a case it does not take.
// KILN_ATTENTION=auto|kiln|cudnn sets the process's starting value. The
// library is looked for at $KILN_CUDNN (a path to libcudnn.so.9), beside
// the CUDA toolkit Kiln was built with, then on the library search path.
enum class AttentionBackend { Auto, Kiln, Cudnn };
void set_attention_backend(AttentionBackend b);
AttentionBackend attention_backend();
// Whether cuDNN could be loaded for attention (false in a CPU-only build).
bool cudnn_attention_available();

} // namespace kiln

// For the code the plugin generates: a compiled function's attention
// kernel is the eager op's (kiln::scaled_dot_product_attention).
namespace kiln::gen {

// The shape of scaled_dot_product_attention's result for operands of these
// shapes (mask nullptr: none): false exactly where the eager op would raise
// on the shapes or on a mask given with is_causal (the host code checks
// before any launch; dtypes and devices are the variant's guards).
bool attention_shape(const Dims &q, const Dims &k, const Dims &v,
                     const Dims *mask, bool is_causal, Dims &out);

// scaled_dot_product_attention(q, cat(k, k_dim), cat(v, v_dim), attn_mask,
// is_causal, scale), for a compiled function whose keys and values are
// concatenations (a key/value cache and the new token's key and value):
// where the cats are along the key dim (-2) and the decode kernels take the
// case (CUDA; f32, f16 or bf16; no mask, not causal; head dims 64 or 128
// alike for q, k and v; up to 8 query rows per key/value head; the key and
// value pieces of equal lengths, at most 4; 16-byte aligned rows), each
// piece is read where it is and the cats are never in memory. k_cat / v_cat, when defined (of the
// cats' shapes and dtype), receive the cats as well: the kernels write
// what they read, so the pieces are read once. Anything else computes the
// cats (into k_cat / v_cat when given) and calls the eager op, so the
// result and its errors are the eager expression's.
Tensor attention_pieces(const Tensor &q, const std::vector<Tensor> &k,
                        const std::vector<Tensor> &v,
                        const Tensor &attn_mask = Tensor(),
                        bool is_causal = false,
                        std::optional<double> scale = std::nullopt,
                        const Tensor &k_cat = Tensor(),
                        const Tensor &v_cat = Tensor(), int64_t k_dim = -2,
                        int64_t v_dim = -2);

} // namespace kiln::gen
KILN_API_END
