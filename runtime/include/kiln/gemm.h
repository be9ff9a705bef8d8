// kiln/gemm.h - the runtime's one GEMM entry, for the eager ops
// (kiln/matmul.h) and for the code the compiler generates around fused
// GEMMs. Raw pointers, row-major terms, no Tensor: what a generated launcher
// has in hand after its guards.
//
// For each batch entry b in [0, batch):
//   D_b = act(alpha * op(A_b) @ op(B_b) + beta * C_b + bias)
// op(A_b) is m x k, op(B_b) is k x n, C_b and D_b are m x n, bias has n
// elements (one per output column, broadcast over rows and batch). Matrices
// are row-major with a leading dimension (the distance between rows):
// element (i, j) of a non-transposed A is A[i * lda + j]; with trans_a, A is
// stored as a k x m row-major matrix and element (i, j) of op(A) is
// A[j * lda + i] (cblas's CblasRowMajor convention). X_b starts at
// X + b * stride_x (elements); a stride of 0 broadcasts one matrix over the
// batch.
//
// Precision: f16/bf16 inputs accumulate in f32 and round once to D's dtype;
// f32 keeps f32 (no TF32 unless kiln::set_allow_tf32(true) or
// KILN_ALLOW_TF32=1); f64 computes in f64.
//
// Epilogues (each with or without a bias), and where they run:
//   None      CUDA: cuBLASLt EPILOGUE_DEFAULT, or EPILOGUE_BIAS.
//   Relu      CUDA: cuBLASLt EPILOGUE_RELU / RELU_BIAS.
//   GeluTanh  CUDA: cuBLASLt EPILOGUE_GELU / GELU_BIAS: cuBLASLt's GELU is
//             the tanh approximation, gelu(x, "tanh") in Kiln's op table;
//             f64 outputs take the epilogue kernel (cuBLASLt's f64 GELU is
//             about 1e-11 relative off the formula).
//   Gelu      the exact (erf) form, so never cuBLASLt's GELU. CUDA: cuBLASLt
//             EPILOGUE_BIAS / DEFAULT, then the epilogue kernel applies
//             erf-GELU in place (one more launch).
// CUDA: where cuBLASLt has no algorithm with the epilogue, or the bias's
// dtype is not D's (cuBLASLt wants them equal), the bias and activation go
// to the epilogue kernel too. CPU: BLAS computes alpha * A @ B (and
// beta * C, when D has the compute type and C is D), then one loop per
// output block, while it is in cache, adds the rest, applies the
// activation and converts to D's dtype. The activations are kiln/scalar.h's
// formulas, as in the op table.
#pragma once

#include <kiln/dtype.h>
#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>

KILN_API_BEGIN
namespace kiln::rt {

enum class Epilogue : uint8_t { None, Relu, Gelu, GeluTanh };
const char *epilogue_name(Epilogue e); // "none", "relu", "gelu", "gelu_tanh"

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;

  const void *a = nullptr; // op(A): m x k
  int64_t lda = 0, stride_a = 0;
  bool trans_a = false;
  const void *b = nullptr; // op(B): k x n
  int64_t ldb = 0, stride_b = 0;
  bool trans_b = false;
  DType ab_dtype = DType::f32; // A and B: f32, f16, bf16 or f64

  // beta * C: C has D's dtype; ignored (not read: NaN does not propagate)
  // when beta == 0 or c is null. May be D itself (same ld and stride).
  const void *c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  void *d = nullptr; // the output, m x n
  int64_t ldd = 0, stride_d = 0;
  // D's dtype: A's, or f32 for f16/bf16 inputs.
  DType d_dtype = DType::f32;

  double alpha = 1, beta = 0;

  const void *bias = nullptr;    // n elements, contiguous; null: none
  DType bias_dtype = DType::f32; // any floating dtype
  Epilogue epilogue = Epilogue::None;
};

// Runs the GEMM on `dev`: on the CPU through OpenBLAS (split over the
// runtime's OpenMP threads), on CUDA through cuBLASLt on the device's
// stream. Checks its arguments (kiln::Error naming what is wrong). Counts
// one kernel launch per library call and per extra epilogue kernel; an
// empty output (m, n or batch 0) launches nothing; k == 0 writes
// act(beta * C + bias) (zeros for a plain product).
void gemm(const Device &dev, const GemmArgs &args);

} // namespace kiln::rt
KILN_API_END
