// kiln/matmul.h - matrix products, eager on the CPU (OpenBLAS) and CUDA
// (cuBLASLt), with PyTorch's semantics.
//
// dtypes f32, f16, bf16 and f64; both operands of one dtype, on one device;
// the result has their dtype. f16/bf16 accumulate in f32. Integer and bool
// tensors are refused (kiln::Error), as torch refuses them on CUDA.
// Transposed and sliced operands are used in place where BLAS can read them
// (a matrix whose last or second-to-last stride is 1, with a leading
// dimension); other layouts are copied to contiguous first.
#pragma once

#include <kiln/export.h>
#include <kiln/gemm.h>
#include <kiln/tensor.h>

#include <initializer_list>

KILN_API_BEGIN
namespace kiln {

// torch.matmul: 1-D . 1-D is a dot product (a 0-d result); 2-D @ 2-D; a 1-D
// operand gets a dim prepended (left) or appended (right) that the result
// drops; N-D operands are batches of matrices whose batch dims broadcast.
Tensor matmul(const Tensor &a, const Tensor &b);

// torch.nn.functional.linear: x @ w^T + b. x is [..., in], w is [out, in]
// (or [in]: the out dim is dropped); bias b is [out] or any shape that
// broadcasts to the result; an undefined Tensor() for no bias.
Tensor linear(const Tensor &x, const Tensor &w, const Tensor &b = Tensor());

// torch.bmm: [B, m, k] @ [B, k, n] -> [B, m, n], no broadcasting.
Tensor bmm(const Tensor &a, const Tensor &b);

// torch.addmm: beta * c + alpha * (a @ b) for 2-D a and b; c broadcasts to
// [m, n]. With beta == 0, c is not read (NaN and inf in it do not
// propagate), as in torch.
Tensor addmm(const Tensor &c, const Tensor &a, const Tensor &b, double beta = 1,
             double alpha = 1);

// f32 products on CUDA use TF32 tensor cores (10-bit mantissa inputs, f32
// accumulation) only when allowed: off by default, like torch's
// torch.backends.cuda.matmul.allow_tf32 = False. KILN_ALLOW_TF32=1 in the
// environment turns it on at start-up. No effect on the CPU, f16, bf16 or
// f64.
void set_allow_tf32(bool on);
bool allow_tf32();

// GEMM autotuning, torch.compile's max-autotune for products: at the first
// CUDA product of a kind (shape, dtypes, layouts, alignments, epilogue),
// cuBLASLt's heuristic proposes up to 16 algorithms, each is timed on the
// call's own operands (writing a scratch output, so nothing the call reads
// changes; 5 rounds over all of them, each of about 5 ms of back-to-back
// calls, the median round kept), and the fastest is kept, where it beats
// the heuristic's first choice by more than 2 %, for the process and
// written to an on-disk cache keyed by the device's name, cuBLASLt's version and the
// kind: later processes read the choice instead of timing again. The
// file: $KILN_AUTOTUNE_CACHE, else $XDG_CACHE_HOME/kiln/gemm-autotune.txt,
// else ~/.cache/kiln/gemm-autotune.txt. Off by default (the heuristic's
// first algorithm); on for every product with set_gemm_autotune(true) or
// KILN_GEMM_AUTOTUNE=1 at start-up, and for the products of a function
// compiled with "mode=max-autotune" (kiln::gen::AutotuneScope). The
// algorithms differ in speed, not in their precision contract (f16/bf16
// products accumulate in f32 in every one). No effect on the CPU (one BLAS
// routine) or inside a CUDA graph capture (no timing there: a kind not
// tuned before takes the heuristic's choice).
void set_gemm_autotune(bool on);
bool gemm_autotune();

} // namespace kiln

// For the code the plugin generates: a compiled function's product kernel,
// a GEMM with its epilogue fused.
namespace kiln::gen {

// The fast path of a function compiled with "mode=max-autotune" holds one
// while it runs: the products it launches on this thread are autotuned
// (kiln::set_gemm_autotune).
struct AutotuneScope {
  AutotuneScope();
  ~AutotuneScope();
  AutotuneScope(const AutotuneScope &) = delete;
  AutotuneScope &operator=(const AutotuneScope &) = delete;

private:
  bool was_;
};

// torch.matmul, F.linear, torch.bmm (3-D operands, one batch, no
// broadcasting: product_shape refuses what bmm's eager checks refuse).
enum class Product : uint8_t { Matmul, Linear, Bmm };

// The shape of matmul(a, b), bmm(a, b) or linear(a, b) (a @ b^T), for operands of
// shapes a and b, when every addend broadcasts to it: false where eager
// would raise on the shapes, or where an addend would make the result
// larger (the host code checks before any launch).
bool product_shape(Product p, const Dims &a, const Dims &b,
                   std::initializer_list<const Dims *> addends, Dims &out);

// Attention written as two products, p(q, k^T) then p(scores, v) (matmul's
// rules or bmm's), which the compiler made one attention kernel: whether
// eager's two products take these shapes. The attention kernel takes more
// (key heads dividing the query's where matmul wants them equal or 1; for
// bmm, ranks other than 3), so the host code checks this too.
bool attention_products_shape(Product p, const Dims &q, const Dims &k,
                              const Dims &v);
// Raises what eager's two products raise on these operands; returns where
// attention_products_shape holds (the compiler's op-by-op backend).
void check_attention_products(Product p, const Tensor &q, const Tensor &k,
                              const Tensor &v);

// act(p(a, b) + bias + addend) (bias and addend may be undefined), as one
// library call where the layouts allow: an addend of one value per output
// column is the GEMM's bias, another one is added as beta * C, read in
// place when it has the result's shape and is contiguous (a residual),
// else copied into the result first; act is cuBLASLt's epilogue (rt::gemm
// says where each one runs). Raises as the eager op does on bad operands.
Tensor product(Product p, const Tensor &a, const Tensor &b, const Tensor &bias,
               const Tensor &addend, rt::Epilogue act);

} // namespace kiln::gen
KILN_API_END
