// libkiln_blas.so: OpenBLAS's GEMMs behind the table of cpu_blas.h. Built
// against the serial (single-threaded) OpenBLAS archive, so each call runs
// on the calling thread. Concurrent calls are serialised by a lock unless
// the archive was built with USE_LOCKING=1 (KILN_OPENBLAS_REENTRANT):
// Debian's was not, and two GEMMs at once can share a packing buffer.
#include "cpu_blas.h"

#include <cblas.h>

#include <mutex>

namespace {

#ifdef KILN_OPENBLAS_REENTRANT
constexpr bool kReentrant = true;
struct NoLock {};
inline NoLock lock() { return {}; }
#else
constexpr bool kReentrant = false;
std::mutex g_blas_mutex;
inline std::lock_guard<std::mutex> lock() {
  return std::lock_guard<std::mutex>(g_blas_mutex);
}
#endif

CBLAS_TRANSPOSE op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *a,
           int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  [[maybe_unused]] const auto held = lock();
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double *a,
           int lda, const double *b, int ldb, double beta, double *c, int ldc) {
  [[maybe_unused]] const auto held = lock();
  cblas_dgemm(CblasRowMajor, op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

} // namespace

extern "C" __attribute__((visibility("default"))) const KilnBlasTable *
kiln_blas_table() {
  static const KilnBlasTable table = {kKilnBlasAbi, openblas_get_config(),
                                      openblas_get_parallel(), kReentrant,
                                      &sgemm, &dgemm};
  return &table;
}
