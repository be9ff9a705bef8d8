// nvcc failing on generated code is a Kiln bug: a loud error with nvcc's
// output and where the .cu was kept.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: printf '#!/bin/sh\necho "fake nvcc: internal error" >&2\nexit 2\n' > %t.dir/nvcc && chmod +x %t.dir/nvcc
// RUN: not %kiln_cxx -c -fplugin-arg-kiln-nvcc=%t.dir/nvcc -fplugin-arg-kiln-cache-dir=%t.dir/cache %s -o %t.dir/a.o 2>&1 | FileCheck %s
// CHECK: nvcc-fails.cpp:[[@LINE+4]]:32: error: kiln: nvcc failed on the generated CUDA code of this file (a Kiln bug, please report it); source: {{.*}}cache{{/|\\}}cuda{{/|\\}}{{[0-9a-f]+}}.cu
// CHECK-NEXT: nvcc failed (exit code 2)
// CHECK: fake nvcc: internal error
#include <kiln/kiln.h>
[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) { return kiln::cos(x); }
