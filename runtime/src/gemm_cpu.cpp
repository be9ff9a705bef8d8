// The CPU half of rt::gemm: OpenBLAS's serial GEMMs (libkiln_blas.so, see
// cpu_blas.h), one output block per task, the tasks spread over the
// runtime's OpenMP threads when the archive is reentrant (else one task),
// each block's epilogue (bias, beta * C, the activation, the conversion to
// D's dtype) applied while it is in cache. f16 and bf16 operands are
// converted to f32 first (Debian's OpenBLAS has no half-precision GEMM: its
// cblas_sbgemm is not built), so they accumulate in f32 and D is rounded
// once.
#include "cpu_blas.h"
#include "detail.h"
#include "gemm_impl.h"
#include "kernel_types.h"

#include <kiln/stats.h>

#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

namespace kiln::detail {

// --- loading libkiln_blas.so ---

static const KilnBlasTable *load_cpu_blas(const char *fn) {
  // libkiln_blas.so sits beside libkiln_rt.so (build tree and install).
  std::string here = "libkiln_blas.so";
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&load_cpu_blas), &info) &&
      info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      here = self.substr(0, slash + 1) + "libkiln_blas.so";
  }
  void *h = dlopen(here.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = h ? "" : dlerror();
  if (!h && here != "libkiln_blas.so")
    h = dlopen("libkiln_blas.so", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    fail("%s: cannot load the CPU BLAS library %s (%s). It is built with "
         "libkiln_rt (runtime/blas/, OpenBLAS from Debian's "
         "libopenblas-serial-dev) and must be installed beside it",
         fn, here.c_str(), why.c_str());
  auto get =
      reinterpret_cast<const KilnBlasTable *(*)()>(dlsym(h, "kiln_blas_table"));
  const KilnBlasTable *t = get ? get() : nullptr;
  if (!t || t->abi_version != kKilnBlasAbi)
    fail("%s: %s is not the libkiln_blas.so of this libkiln_rt (ABI %d "
         "expected)",
         fn, here.c_str(), kKilnBlasAbi);
  if (rt::log_enabled(rt::kLogKernels))
    rt::log(rt::kLogKernels, "cpu BLAS: %s (%s)", here.c_str(), t->config);
  return t;
}

const KilnBlasTable &cpu_blas(const char *fn) {
  // A throwing initialiser leaves it unset: the next call tries again.
  static const KilnBlasTable *table = load_cpu_blas(fn);
  return *table;
}

namespace {

using rt::Epilogue;
using rt::GemmArgs;

// A matrix operand as the BLAS call reads it (compute type T).
template <class T> struct Operand {
  const T *p;
  int64_t ld, stride;
  bool trans;
};

// Converts an f16/bf16 operand to T: each distinct matrix (one if the batch
// stride is 0) to a packed row-major copy in `buf`, stored as it was stored
// (transposed or not).
template <class T, class S>
Operand<T> widen(const S *src, int64_t rows, int64_t cols, int64_t ld,
                 int64_t stride, bool trans, int64_t batch,
                 std::vector<T> &buf) {
  int64_t nb = stride == 0 ? 1 : batch;
  buf.resize(size_t(nb * rows * cols));
  T *dst = buf.data();
#pragma omp parallel for schedule(static) if (nb * rows * cols > 65536 &&      \
                                              !omp_in_parallel())
  for (int64_t r = 0; r < nb * rows; ++r) {
    const S *s = src + (r / rows) * stride + (r % rows) * ld;
    T *d = dst + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      d[c] = T(scalar::load(s[c]));
  }
  return {dst, std::max<int64_t>(cols, 1), nb == 1 ? 0 : rows * cols, trans};
}

template <class T>
void blas_gemm(const KilnBlasTable &blas, bool ta, bool tb, int64_t m,
               int64_t n, int64_t k, T alpha, const T *a, int64_t lda,
               const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    blas.sgemm(ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
               beta, c, int(ldc));
  else
    blas.dgemm(ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
               beta, c, int(ldc));
}

// Blocks: enough for every thread, none below kMinBlock rows or columns,
// none past OpenBLAS's 32-bit sizes; a thread's scratch tile holds about
// kScratch elements (1 MiB of f32).
constexpr int64_t kMinBlock = 32;
constexpr int64_t kScratch = 1 << 18;
constexpr double kMinParallelFlops = 1 << 21;

// One GEMM of compute type T (float or double) writing D of type D_.
template <class T, class D_> struct CpuGemm {
  const GemmArgs &g;
  const KilnBlasTable &blas;
  Operand<T> a, b;
  std::vector<T> bias; // converted to T once
  bool use_c;          // beta * C is added
  bool direct;         // BLAS writes D (and beta * C) itself

  // Rows [i0, i1) x columns [j0, j1) of batch entry `e`.
  void block(int64_t e, int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
    const int64_t mb = i1 - i0, nb = j1 - j0, k = g.k;
    D_ *d = static_cast<D_ *>(g.d) + e * g.stride_d + i0 * g.ldd + j0;
    const D_ *c =
        use_c ? static_cast<const D_ *>(g.c) + e * g.stride_c + i0 * g.ldc + j0
              : nullptr;
    const T *ap = a.p + e * a.stride + (a.trans ? i0 : i0 * a.ld);
    const T *bp = b.p + e * b.stride + (b.trans ? j0 * b.ld : j0);
    const T *bias_p = bias.empty() ? nullptr : bias.data() + j0;
    const T alpha = T(g.alpha), beta = T(g.beta);
    if constexpr (std::is_same_v<T, D_>) {
      if (direct) {
        if (k > 0)
          blas_gemm<T>(blas, a.trans, b.trans, mb, nb, k, alpha, ap, a.ld, bp,
                       b.ld, use_c ? beta : T(0), d, g.ldd);
        if (k > 0 && !bias_p && g.epilogue == Epilogue::None)
          return;
        // After BLAS: D holds alpha * A @ B + beta * C. With k == 0: C is D.
        for (int64_t i = 0; i < mb; ++i)
          finish_row(d + i * g.ldd, nb, k > 0 ? d + i * g.ldd : nullptr,
                     k > 0 || !c ? nullptr : c + i * g.ldc, bias_p);
        return;
      }
    }
    // BLAS writes alpha * A @ B into a scratch tile of at most about
    // kScratch elements (rows at a time), the loop folds in the rest.
    thread_local std::vector<T> scratch;
    const int64_t rows =
        std::max<int64_t>(16, kScratch / std::max<int64_t>(nb, 1));
    for (int64_t r0 = 0; r0 < mb; r0 += rows) {
      const int64_t rb = std::min(rows, mb - r0);
      const T *acc = nullptr;
      if (k > 0) {
        scratch.resize(size_t(rb * nb));
        blas_gemm<T>(blas, a.trans, b.trans, rb, nb, k, alpha,
                     ap + (a.trans ? r0 : r0 * a.ld), a.ld, bp, b.ld, T(0),
                     scratch.data(), nb);
        acc = scratch.data();
      }
      for (int64_t i = 0; i < rb; ++i)
        finish_row(d + (r0 + i) * g.ldd, nb, acc ? acc + i * nb : nullptr,
                   c ? c + (r0 + i) * g.ldc : nullptr, bias_p);
    }
  }

  // out[j] = act(acc[j] + beta * c[j] + bias[j]); a null acc, c or bias
  // contributes nothing. `out` may be `acc` or `c` (same element).
  void finish_row(D_ *out, int64_t n, const T *acc, const D_ *c,
                  const T *bias_p) const {
    const T beta = T(g.beta);
    const Epilogue ep = g.epilogue;
    for (int64_t j = 0; j < n; ++j) {
      T v = acc ? acc[j] : T(0);
      if (c)
        v += beta * T(scalar::load(c[j]));
      if (bias_p)
        v += bias_p[j];
      out[j] = scalar::store<D_>(apply_epilogue<T>(ep, v));
    }
  }
};

template <class T, class D_>
void run(const GemmArgs &g, const KilnBlasTable &blas) {
  const char *fn = "kiln::rt::gemm";
  if (g.k > INT_MAX || g.lda > INT_MAX || g.ldb > INT_MAX || g.ldd > INT_MAX ||
      (g.c && g.ldc > INT_MAX))
    fail("%s: k %lld or a leading dimension is past OpenBLAS's 32-bit "
         "limit (%d)",
         fn, (long long)g.k, INT_MAX);
  CpuGemm<T, D_> w{g, blas, {}, {}, {}, false, false};
  std::vector<T> wa, wb;
  dispatch_dtype(g.ab_dtype, [&]<class S>() {
    if constexpr (std::is_same_v<S, T>) {
      w.a = {static_cast<const T *>(g.a), g.lda, g.stride_a, g.trans_a};
      w.b = {static_cast<const T *>(g.b), g.ldb, g.stride_b, g.trans_b};
    } else if constexpr (std::is_same_v<S, half> ||
                         std::is_same_v<S, bfloat16>) {
      if (g.k > 0) {
        w.a = widen<T>(static_cast<const S *>(g.a), g.trans_a ? g.k : g.m,
                       g.trans_a ? g.m : g.k, g.lda, g.stride_a, g.trans_a,
                       g.batch, wa);
        w.b = widen<T>(static_cast<const S *>(g.b), g.trans_b ? g.n : g.k,
                       g.trans_b ? g.k : g.n, g.ldb, g.stride_b, g.trans_b,
                       g.batch, wb);
      }
    }
  });
  if (g.bias) {
    w.bias.resize(size_t(g.n));
    dispatch_dtype(g.bias_dtype, [&]<class B>() {
      if constexpr (std::is_floating_point_v<B> || std::is_same_v<B, half> ||
                    std::is_same_v<B, bfloat16>)
        for (int64_t j = 0; j < g.n; ++j)
          w.bias[j] = T(scalar::load(static_cast<const B *>(g.bias)[j]));
    });
  }
  w.use_c = g.c && g.beta != 0;
  w.direct = std::is_same_v<T, D_> && (!w.use_c || g.c == g.d);

  // A BLAS that is not reentrant serialises concurrent calls: one task.
  int threads = omp_in_parallel() || blas.parallel || !blas.reentrant
                    ? 1
                    : omp_get_max_threads();
  double flops = 2.0 * double(g.batch) * double(g.m) * double(g.n) *
                 double(std::max<int64_t>(g.k, 1));
  if (flops < kMinParallelFlops)
    threads = 1;
  // Split each matrix along its longer side into `parts` blocks.
  int64_t parts = g.batch >= threads ? 1 : (threads + g.batch - 1) / g.batch;
  bool split_m = g.m >= g.n;
  int64_t extent = split_m ? g.m : g.n;
  parts = std::max<int64_t>(
      1, std::min(parts, (extent + kMinBlock - 1) / kMinBlock));
  int64_t pm = split_m ? parts : 1, pn = split_m ? 1 : parts;
  pm = std::max(pm, (g.m + INT_MAX - 1) / INT_MAX);
  pn = std::max(pn, (g.n + INT_MAX - 1) / INT_MAX);
  const int64_t bm = (g.m + pm - 1) / pm, bn = (g.n + pn - 1) / pn;
  const int64_t tasks = g.batch * pm * pn;
  if (rt::log_enabled(rt::kLogKernels))
    rt::log(rt::kLogKernels,
            "cpu gemm %s->%s m=%lld n=%lld k=%lld batch=%lld epilogue=%s%s "
            "blocks=%lld threads=%d",
            dtype_name(g.ab_dtype), dtype_name(g.d_dtype), (long long)g.m,
            (long long)g.n, (long long)g.k, (long long)g.batch,
            rt::epilogue_name(g.epilogue), g.bias ? "+bias" : "",
            (long long)tasks, threads);
#pragma omp parallel for num_threads(threads)                                  \
    schedule(dynamic, 1) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t e = t / (pm * pn), r = t % (pm * pn);
    int64_t i0 = (r / pn) * bm, j0 = (r % pn) * bn;
    if (i0 < g.m && j0 < g.n)
      w.block(e, i0, std::min(g.m, i0 + bm), j0, std::min(g.n, j0 + bn));
  }
}

} // namespace

void cpu_gemm(const rt::GemmArgs &g) {
  const KilnBlasTable &blas = cpu_blas("kiln::rt::gemm");
  rt::bump(rt::kLaunches);
  // check_gemm_args: D is f64 exactly when A and B are.
  switch (g.d_dtype) {
  case DType::f64:
    return run<double, double>(g, blas);
  case DType::f32:
    return run<float, float>(g, blas);
  case DType::f16:
    return run<float, half>(g, blas);
  case DType::bf16:
    return run<float, bfloat16>(g, blas);
  default:
    fail("kiln::rt::gemm: D of dtype %s", dtype_name(g.d_dtype));
  }
}

} // namespace kiln::detail
