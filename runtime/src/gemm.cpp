// rt::gemm: the argument checks both devices share, then the CPU
// (gemm_cpu.cpp, OpenBLAS) or CUDA (cuda/gemm_cublaslt.cu, cuBLASLt) half.
// Also the TF32 switch of kiln/matmul.h.
#include "cuda_backend.h"
#include "detail.h"
#include "gemm_impl.h"

#include <kiln/gemm.h>
#include <kiln/matmul.h>

#include <algorithm>
#include <atomic>

namespace kiln {

static std::atomic<bool> g_allow_tf32{rt::env_flag("KILN_ALLOW_TF32")};
void set_allow_tf32(bool on) { g_allow_tf32.store(on); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

static std::atomic<bool> g_gemm_autotune{rt::env_flag("KILN_GEMM_AUTOTUNE")};
static thread_local bool t_autotune_scope = false;
void set_gemm_autotune(bool on) { g_gemm_autotune.store(on); }
bool gemm_autotune() { return g_gemm_autotune.load(std::memory_order_relaxed); }

gen::AutotuneScope::AutotuneScope() : was_(t_autotune_scope) {
  t_autotune_scope = true;
}
gen::AutotuneScope::~AutotuneScope() { t_autotune_scope = was_; }

namespace detail {
bool autotune_now() { return t_autotune_scope || gemm_autotune(); }
} // namespace detail

} // namespace kiln

namespace kiln::rt {

const char *epilogue_name(Epilogue e) {
  switch (e) {
  case Epilogue::None:
    return "none";
  case Epilogue::Relu:
    return "relu";
  case Epilogue::Gelu:
    return "gelu";
  case Epilogue::GeluTanh:
    return "gelu_tanh";
  }
  return "?";
}

void gemm(const Device &dev, const GemmArgs &g) {
  detail::check_gemm_args(g, "kiln::rt::gemm");
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return;
  if (dev.is_cpu())
    detail::cpu_gemm(g);
  else
    detail::cuda_gemm(g, dev);
}

} // namespace kiln::rt

namespace kiln::detail {

using rt::Epilogue;

static bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

// A stored matrix of `rows` x `cols`: its leading dimension and batch
// stride leave its rows (and, batched, its matrices) apart.
static void check_matrix(const char *fn, const char *name, const void *p,
                         int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                         int64_t batch, bool written) {
  if (rows > 0 && cols > 0 && !p)
    fail("%s: %s is null for a %lld x %lld matrix", fn, name, (long long)rows,
         (long long)cols);
  if (ld < std::max<int64_t>(1, cols))
    fail("%s: leading dimension %lld of %s is below its %lld columns (at "
         "least max(1, columns))",
         fn, (long long)ld, name, (long long)cols);
  if (stride < 0)
    fail("%s: negative batch stride %lld of %s", fn, (long long)stride, name);
  // An output's batch entries must not overlap (an input may repeat one
  // matrix with stride 0).
  int64_t span = rows > 0 ? (rows - 1) * ld + cols : 0;
  if (written && batch > 1 && span > 0 && stride < span)
    fail("%s: batch stride %lld of %s is below one matrix's extent %lld "
         "(%lld x %lld, leading dimension %lld): batch entries overlap",
         fn, (long long)stride, name, (long long)span, (long long)rows,
         (long long)cols, (long long)ld);
}

void check_gemm_args(const rt::GemmArgs &g, const char *fn) {
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0)
    fail("%s: negative size (m %lld, n %lld, k %lld, batch %lld)", fn,
         (long long)g.m, (long long)g.n, (long long)g.k, (long long)g.batch);
  if (!is_floating(g.ab_dtype))
    fail("%s: A and B of dtype %s: matrix products take f32, f16, bf16 or "
         "f64",
         fn, dtype_name(g.ab_dtype));
  if (g.d_dtype != g.ab_dtype &&
      !(is_half(g.ab_dtype) && g.d_dtype == DType::f32))
    fail("%s: D of dtype %s with A and B of %s: D must have their dtype (or "
         "f32 for f16 and bf16 inputs)",
         fn, dtype_name(g.d_dtype), dtype_name(g.ab_dtype));
  if (g.bias && !is_floating(g.bias_dtype))
    fail("%s: bias of dtype %s: it must be a floating dtype", fn,
         dtype_name(g.bias_dtype));
  if (unsigned(g.epilogue) > unsigned(Epilogue::GeluTanh))
    fail("%s: unknown epilogue %u", fn, unsigned(g.epilogue));
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return; // nothing is read or written
  check_matrix(fn, "D", g.d, g.m, g.n, g.ldd, g.stride_d, g.batch, true);
  if (g.k > 0) {
    check_matrix(fn, "A", g.a, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k,
                 g.lda, g.stride_a, g.batch, false);
    check_matrix(fn, "B", g.b, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n,
                 g.ldb, g.stride_b, g.batch, false);
  }
  if (g.c && g.beta != 0) {
    check_matrix(fn, "C", g.c, g.m, g.n, g.ldc, g.stride_c, g.batch, false);
    if (g.c == g.d && (g.ldc != g.ldd || g.stride_c != g.stride_d))
      fail("%s: C is D with another layout (leading dimension %lld vs %lld, "
           "batch stride %lld vs %lld): C may only be D itself",
           fn, (long long)g.ldc, (long long)g.ldd, (long long)g.stride_c,
           (long long)g.stride_d);
  }
}

} // namespace kiln::detail
