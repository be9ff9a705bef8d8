// The generated host code's compile is cached too: an unchanged rebuild
// skips it; a changed function, or a changed header the generated code
// includes (copied here so that it can change), compiles it again.
// RUN: rm -rf %t && mkdir -p %t && cp -r %S/../../runtime/include %t/inc
// RUN: %clangxx -std=c++20 -O2 -I%t/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-cuda=off %kiln_remarks -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o 2>&1 | FileCheck --check-prefix=MISS %s
// RUN: %clangxx -std=c++20 -O2 -I%t/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-cuda=off %kiln_remarks -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/b.o 2>&1 | FileCheck --check-prefix=HIT %s
// RUN: cmp %t/a.o %t/b.o
// RUN: %clangxx -std=c++20 -O2 -I%t/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-cuda=off %kiln_remarks -fplugin-arg-kiln-cache-dir=%t/cache -DOTHER -c %s -o %t/c.o 2>&1 | FileCheck --check-prefix=MISS %s
// RUN: echo "// changed" >> %t/inc/kiln/generated.h
// RUN: %clangxx -std=c++20 -O2 -I%t/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-cuda=off %kiln_remarks -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/d.o 2>&1 | FileCheck --check-prefix=MISS %s
// RUN: %clangxx -std=c++20 -O2 -I%t/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-cuda=off %kiln_remarks -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/e.o 2>&1 | FileCheck --check-prefix=HIT %s
// RUN: cmp %t/a.o %t/e.o
// MISS: remark: kiln: host code compiled; cached
// HIT: remark: kiln: host code cache hit
#include <kiln/kiln.h>

[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) {
#ifdef OTHER
  return kiln::exp(x) + 1.0;
#else
  return kiln::log(x) * 2.0;
#endif
}
