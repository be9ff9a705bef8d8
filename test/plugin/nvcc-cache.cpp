// nvcc's output is cached on disk, keyed by the generated source (and
// flags, nvcc's version, the kiln headers): a rebuild does not run nvcc.
// REQUIRES: nvcc
// RUN: rm -rf %t.cache %t.env
// RUN: %kiln_cxx -c %kiln_remarks -fplugin-arg-kiln-cache-dir=%t.cache %s -o %t.o 2>&1 | FileCheck --check-prefix=MISS %s
// RUN: %kiln_cxx -c %kiln_remarks -fplugin-arg-kiln-cache-dir=%t.cache %s -o %t.o 2>&1 | FileCheck --check-prefix=HIT %s
// Another function body is another .cu: a miss.
// RUN: %kiln_cxx -c %kiln_remarks -fplugin-arg-kiln-cache-dir=%t.cache -DOTHER %s -o %t.o 2>&1 | FileCheck --check-prefix=MISS %s
// The .cu files and fatbins stay in the cache folder.
// RUN: ls %t.cache/cuda | FileCheck --check-prefix=FILES %s
// KILN_CACHE_DIR picks the folder when no cache-dir= is given.
// RUN: env KILN_CACHE_DIR=%t.env %kiln_cxx -c %kiln_remarks %s -o %t.o 2>&1 | FileCheck --check-prefix=MISS %s
// RUN: ls %t.env/cuda | FileCheck --check-prefix=FILES %s
#include <kiln/kiln.h>

// MISS: remark: kiln: nvcc ran; fatbin cached
// MISS-NOT: nvcc cache hit
// HIT: remark: kiln: nvcc cache hit
// HIT-NOT: nvcc ran
// FILES: {{[0-9a-f]+}}.cu
// FILES: {{[0-9a-f]+}}.fatbin
[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) {
#ifdef OTHER
  return kiln::tanh(x) * 3.0;
#else
  return kiln::sigmoid(x) * 2.0;
#endif
}
