// libkiln_blas.so: OpenBLAS's GEMMs behind the table of cpu_blas.h. Built
// against the serial (single-threaded, thread-safe) OpenBLAS archive, so
// each call runs on the calling thread: libkiln_rt's OpenMP threads call
// it concurrently, one output block each.
#include "cpu_blas.h"

#include <cblas.h>

namespace {

CBLAS_TRANSPOSE op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *a,
           int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double *a,
           int lda, const double *b, int ldb, double beta, double *c, int ldc) {
  cblas_dgemm(CblasRowMajor, op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

} // namespace

extern "C" __attribute__((visibility("default"))) const KilnBlasTable *
kiln_blas_table() {
  static const KilnBlasTable table = {kKilnBlasAbi, openblas_get_config(),
                                      openblas_get_parallel(), &sgemm, &dgemm};
  return &table;
}
