// The generated code's #includes are precompiled once per option set in the
// cache folder and reused; when a header changes, the stale PCH is noticed,
// the compile goes on without it, and the next nested compile rebuilds it
// (the host code's cached bitcode is dropped first, else there is none).
// (The copied headers come first on the include path.)
// RUN: rm -rf %t.dir && mkdir -p %t.dir && cp -r %S/../../runtime/include %t.dir/inc
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -I%S/../Inputs -fplugin=%kiln_plugin -fplugin-arg-kiln-cache-dir=%t.dir/cache -fplugin-arg-kiln-cuda=off -c %s -o %t.dir/a.o
// RUN: ls %t.dir/cache/pch | FileCheck --check-prefix=PCH %s
// RUN: echo "// changed" >> %t.dir/inc/kiln/tensor.h
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -I%S/../Inputs -fplugin=%kiln_plugin -fplugin-arg-kiln-cache-dir=%t.dir/cache -fplugin-arg-kiln-cuda=off -c %s -o %t.dir/b.o 2>&1 | count 0
// RUN: ls %t.dir/cache/pch | FileCheck --check-prefix=STALE %s
// RUN: rm -rf %t.dir/cache/host
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -I%S/../Inputs -fplugin=%kiln_plugin -fplugin-arg-kiln-cache-dir=%t.dir/cache -fplugin-arg-kiln-cuda=off -c %s -o %t.dir/c.o 2>&1 | count 0
// RUN: ls %t.dir/cache/pch | FileCheck --check-prefix=PCH %s
// RUN: %kiln_cxx_eager %t.dir/c.o %kiln_link -o %t.dir/c && %t.dir/c | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// PCH: prelude-{{[0-9a-f]+}}.h
// PCH-NEXT: prelude-{{[0-9a-f]+}}.pch
// STALE-NOT: .pch
#include "kiln_check.h"

[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) {
  return kiln::sigmoid(x) * 4.0;
}

// CHECK: f: 2.0000 2.9242 3.5232
// COMPILED: compiled=1 fallback=0
// FORCED: compiled=0 fallback=1
int main() {
  kiln_check::print("f", f(kiln::arange(3)));
  kiln_check::print_stats();
}
