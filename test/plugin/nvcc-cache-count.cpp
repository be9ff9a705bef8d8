// The nvcc cache, counted: a stand-in nvcc logs each run; rebuilding the
// same source does not run it again, a changed function does, and so does
// a changed kiln header (copied here so that it can change).
// RUN: rm -rf %t.dir && mkdir -p %t.dir && cp -r %S/../../runtime/include %t.dir/inc
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo fake 1.0; exit 0; fi\nwhile [ $# -gt 1 ]; do if [ "$1" = -o ]; then echo FATBIN > "$2"; fi; shift; done\necho run >> %t.dir/log\n' > %t.dir/nvcc && chmod +x %t.dir/nvcc
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-nvcc=%t.dir/nvcc -fplugin-arg-kiln-cache-dir=%t.dir/cache -c %s -o %t.dir/a.o
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-nvcc=%t.dir/nvcc -fplugin-arg-kiln-cache-dir=%t.dir/cache -c %s -o %t.dir/a.o
// RUN: count 1 < %t.dir/log
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-nvcc=%t.dir/nvcc -fplugin-arg-kiln-cache-dir=%t.dir/cache -DOTHER -c %s -o %t.dir/a.o
// RUN: count 2 < %t.dir/log
// RUN: echo "// changed" >> %t.dir/inc/kiln/scalar.h
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-nvcc=%t.dir/nvcc -fplugin-arg-kiln-cache-dir=%t.dir/cache -DOTHER -c %s -o %t.dir/a.o
// RUN: count 3 < %t.dir/log
// The embedded fatbin is what nvcc wrote.
// RUN: %clangxx -std=c++20 -O2 -I%t.dir/inc -fplugin=%kiln_plugin -fplugin-arg-kiln-nvcc=%t.dir/nvcc -fplugin-arg-kiln-cache-dir=%t.dir/cache -S -emit-llvm %s -o - | FileCheck %s
// CHECK: c"FATBIN\0A
#include <kiln/kiln.h>

[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) {
#ifdef OTHER
  return kiln::exp(x);
#else
  return kiln::log(x);
#endif
}
