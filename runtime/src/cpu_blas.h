// cpu_blas.h - what libkiln_rt asks of libkiln_blas.so (runtime/blas/): a
// table of single-threaded GEMMs in cblas's row-major convention.
//
// libkiln_blas holds OpenBLAS's serial build, linked in statically with its
// symbols hidden; libkiln_rt loads it from its own folder at the first CPU
// GEMM (cpu_blas()) and spreads each GEMM over its own OpenMP threads when
// the archive may be called from several threads at once (`reentrant`).
// Debian's serial OpenBLAS (0.3.21) may not: it is built without
// USE_LOCKING, and two concurrent GEMMs can take the same packing buffer
// (measured: 1 batched f64 product in 20 came out wrong with two threads).
// So libkiln_blas serialises its calls unless built against an archive made
// with USE_LOCKING=1 (-DKILN_OPENBLAS_REENTRANT=ON), and libkiln_rt then
// runs each GEMM as one call. Why a library of its own:
// which variant Debian's libopenblas.so.0 is, is the alternatives system's
// choice where the program runs (pthread, priority 100, is the default;
// libopenblas-dev pulls libopenblas-pthread-dev). The pthread variant keeps
// its own pool of busy-waiting threads beside the runtime's OpenMP pool,
// and the openmp variant is built against GNU libgomp, which is the
// runtime's own pool only when the runtime is built with g++ (clang builds
// use LLVM's libomp): either way two pools can contend for the cores when
// eager ops alternate. Here one pool (the runtime's) does all the work; a
// user's own BLAS, of any variant, is left as it is; and libkiln_rt itself
// stays small and loadable where OpenBLAS is absent.
#pragma once

#include <cstdint>

extern "C" {

// Dimensions and leading dims fit in 32 bits (OpenBLAS's LP64 `blasint`);
// the caller splits larger problems.
struct KilnBlasTable {
  int abi_version;    // kKilnBlasAbi
  const char *config; // openblas_get_config(): version, build, CPU core
  int parallel;       // openblas_get_parallel(): 0 for a serial build
  int reentrant;      // concurrent calls are safe (else they take a lock)
  void (*sgemm)(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta,
                float *c, int ldc);
  void (*dgemm)(bool trans_a, bool trans_b, int m, int n, int k, double alpha,
                const double *a, int lda, const double *b, int ldb, double beta,
                double *c, int ldc);
};

const KilnBlasTable *kiln_blas_table();

} // extern "C"

inline constexpr int kKilnBlasAbi = 2;

namespace kiln::detail {
// The table, loaded once (thread-safe); throws kiln::Error naming `fn` and
// what was looked for when libkiln_blas.so cannot be loaded.
const KilnBlasTable &cpu_blas(const char *fn);
} // namespace kiln::detail
