// gemm_impl.h - the two halves of rt::gemm (kiln/gemm.h) and what they
// share. Both get arguments check_gemm_args accepted, with a non-empty
// output (m, n and batch > 0).
#pragma once

#include <kiln/gemm.h>
#include <kiln/scalar.h>

namespace kiln::detail {

// Whether a product launched now is autotuned: kiln::set_gemm_autotune,
// or a kiln::gen::AutotuneScope held on this thread.
bool autotune_now();

// Throws kiln::Error naming `fn` and the offending argument.
void check_gemm_args(const rt::GemmArgs &g, const char *fn);

// OpenBLAS, spread over the runtime's OpenMP threads (gemm_cpu.cpp).
void cpu_gemm(const rt::GemmArgs &g);
// cuBLASLt on the device's stream (cuda/gemm_cublaslt.cu; in a CPU-only
// build, no_cuda/cuda_absent.cpp says there is no GPU).
void cuda_gemm(const rt::GemmArgs &g, Device dev);

// The epilogue's activation, on the compute type (float or double): the op
// table's formulas (kiln/scalar.h), so a fused GEMM epilogue agrees with
// kiln::relu / kiln::gelu run after it.
template <class T> KILN_HD inline T apply_epilogue(rt::Epilogue e, T v) {
  switch (e) {
  case rt::Epilogue::Relu:
    return scalar::relu(v);
  case rt::Epilogue::Gelu:
    return scalar::gelu(v);
  case rt::Epilogue::GeluTanh:
    return scalar::gelu_tanh(v);
  default:
    return v;
  }
}

} // namespace kiln::detail
