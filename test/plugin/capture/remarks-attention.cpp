// Attention in remarks: the function's kernels (one is the fused attention
// kernel), at the call's line what it does and its mask; scale and
// is_causal forms that compile, and the one that is a located break.
// RUN: %kiln_cxx -fsyntax-only %kiln_remarks %s 2>&1 | FileCheck %s
#include <kiln/kiln.h>

using kiln::Tensor;

// The optional mask makes two specialisations (m defined or not); used only
// as the mask, it may be b8 or the variant's dtype.
[[kiln::compile]] Tensor masked(const Tensor &q, const Tensor &k, const Tensor &v,
                                const Tensor &m) {
  // CHECK: remarks-attention.cpp:[[@LINE+5]]:3: remark: kiln: compiled 'masked (region 1, specialisation 1)': 2 ops captured, fused into 2 kernels (one is an attention kernel)
  // CHECK: remarks-attention.cpp:[[@LINE+4]]:10: remark: kiln: attention (softmax(q @ k^T * scale + mask) @ v) is one fused kernel (a flash-attention kernel on CUDA; on the CPU, rows of online softmax): the scores are not written to memory; mask: 'm' (b8: false masks a key out; or of q's dtype: added to the scores)
  // CHECK: remark: kiln: guard: 'm' is b8 or f32 like 'q' (an attention mask) (f32 variant)
  // CHECK: remarks-attention.cpp:[[@LINE+2]]:3: remark: kiln: compiled 'masked (region 1, specialisation 2)'
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:10: remark: kiln: attention (softmax(q @ k^T * scale + mask) @ v) is one fused kernel {{.*}}; mask: none
  return kiln::scaled_dot_product_attention(q, k, v, m) + 1.0;
}

// Heads split by views, causal, a run-time scale: one kernel, no copy.
// CHECK: remarks-attention.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'heads': 3 ops captured, fused into 1 kernel (an attention kernel) {{.*}}, 2 layout ops made on the host
[[kiln::compile]] Tensor heads(const Tensor &x, int64_t H, double s) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = x.view({B, T, H, -1}).transpose(1, 2);
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:10: remark: kiln: attention (softmax(q @ k^T * scale + mask) @ v) is one fused kernel
  return kiln::scaled_dot_product_attention(q, q, q, Tensor(), true, s);
}

// A bool mask from a comparison; is_causal a run-time bool.
// CHECK: remarks-attention.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'bool_mask': 2 ops captured, fused into 2 kernels (one is an attention kernel)
[[kiln::compile]] Tensor bool_mask(const Tensor &q, const Tensor &u, bool c) {
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:10: remark: kiln: attention (softmax(q @ k^T * scale + mask) @ v) is one fused kernel {{.*}}; mask: %{{[0-9]+}} (line [[@LINE+1]]) (bool)
  return kiln::scaled_dot_product_attention(q, q, q, u > 0.5, c);
}

// A std::optional<double> variable as the scale is a located break.
[[kiln::compile]] Tensor opt_scale(const Tensor &q, std::optional<double> s) {
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:71: warning: kiln: cannot compile 'opt_scale': attention's scale must be a number or std::nullopt (a std::optional<double> variable is not supported yet); 'opt_scale' runs eagerly
  return kiln::scaled_dot_product_attention(q, q, q, Tensor(), false, s);
}

// Attention written as ops is recognised (fuse-attention): one kernel, the
// remark at the line of the product with v.
// CHECK: remarks-attention.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'by_hand': 6 ops captured, 1 op after decomposition and simplification, fused into 1 kernel (an attention kernel)
[[kiln::compile]] Tensor by_hand(const Tensor &q, const Tensor &k, const Tensor &v,
                                 const Tensor &m) {
  Tensor s = kiln::matmul(q, k.transpose(-2, -1)) * 0.125;
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:10: remark: kiln: attention (softmax(q @ k^T * scale + mask) @ v) is one fused kernel {{.*}}; mask: 'm' (added to the scores)
  return kiln::matmul(kiln::softmax(s + m, -1), v);
}

// Decoding against a key/value cache: the cats of cache and new key/value
// along the key dim are read in pieces by the attention (no copy); a
// returned one is written by the attention kernel.
// CHECK: remarks-attention.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'decode': 3 ops captured, fused into 1 kernel (an attention kernel)
[[kiln::compile]] Tensor decode(const Tensor &q, const Tensor &kc, const Tensor &vc,
                                const Tensor &k, const Tensor &v, Tensor &keys) {
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:10: remark: kiln: cat of 'kc', 'k': attention reads the tensors where they are (one pass over the keys and values on CUDA), so the result, an output, is written by the attention kernel as it reads them (no copy of its own)
  keys = kiln::cat({kc, k}, -2);
  // CHECK: remarks-attention.cpp:[[@LINE+1]]:54: remark: kiln: cat of 'vc', 'v': attention reads the tensors where they are (one pass over the keys and values on CUDA), so the result is never in memory (no copy)
  return kiln::scaled_dot_product_attention(q, keys, kiln::cat({vc, v}, -2));
}
