// The same source in two checkouts gives byte-identical objects, and the
// second checkout's build hits the nvcc cache the first one filled: no
// generated name or cache key depends on where the source is. Built as a
// build system would: from each checkout's folder with a relative path,
// and with absolute paths and -ffile-prefix-map (with -g, whose paths that
// flag remaps). A stand-in nvcc logs each run.
// RUN: rm -rf %t && mkdir -p %t/one/src %t/two/deeper/src
// RUN: cp %s %t/one/src/model.cpp && cp %s %t/two/deeper/src/model.cpp
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo fake 1.0; exit 0; fi\nwhile [ $# -gt 1 ]; do if [ "$1" = -o ]; then echo FATBIN > "$2"; fi; shift; done\necho run >> %t/nvcc.log\n' > %t/nvcc && chmod +x %t/nvcc
// RUN: cd %t/one && %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c src/model.cpp -o %t/one.o
// RUN: cd %t/two/deeper && %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c src/model.cpp -o %t/two.o
// RUN: cmp %t/one.o %t/two.o
// RUN: count 1 < %t/nvcc.log
// RUN: cd %t/one && %kiln_cxx -g -ffile-prefix-map=%t/one=/src -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %t/one/src/model.cpp -o %t/one-g.o
// RUN: cd %t/two/deeper && %kiln_cxx -g -ffile-prefix-map=%t/two/deeper=/src -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %t/two/deeper/src/model.cpp -o %t/two-g.o
// RUN: cmp %t/one-g.o %t/two-g.o
// RUN: count 1 < %t/nvcc.log
// The generated kernels' names say whose they are.
// RUN: llvm-strings %t/one.o | FileCheck --check-prefix=NAMES %s
// NAMES: kiln_model_gelu_like_{{[0-9a-f]+}}_k0_f32_vec
#include <kiln/kiln.h>

namespace model {
[[kiln::compile]] kiln::Tensor gelu_like(const kiln::Tensor &x) {
  return x * kiln::sigmoid(x * 1.702);
}
} // namespace model

kiln::Tensor use(const kiln::Tensor &x) { return model::gelu_like(x); }
