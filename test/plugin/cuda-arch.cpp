// The architectures of the generated kernels: the arch= plugin argument,
// else $KILN_CUDA_ARCH, else native where the machine has NVIDIA GPUs, else
// sm_80,sm_90 plus PTX for compute_90. nvcc
// compiles them in parallel (--threads 0). (CI sets KILN_CUDA_ARCH: the
// default is checked without it.) A cold build says that nvcc
// runs; a warm one is silent. A stand-in nvcc logs its arguments.
// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo fake 1.0; exit 0; fi\necho "$@" >> %t/args\nwhile [ $# -gt 1 ]; do if [ "$1" = -o ]; then echo FATBIN > "$2"; fi; shift; done\n' > %t/nvcc && chmod +x %t/nvcc
// RUN: env -u KILN_CUDA_ARCH %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o 2>&1 | FileCheck --check-prefix=COLD %s
// RUN: env -u KILN_CUDA_ARCH %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o 2>&1 | count 0
// RUN: %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -fplugin-arg-kiln-arch=sm_90a -c %s -o %t/a.o
// RUN: env KILN_CUDA_ARCH="sm_120;compute_120" %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o
// RUN: FileCheck --check-prefix=ARGS %s < %t/args
// RUN: not %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -fplugin-arg-kiln-arch=ampere -c %s -o %t/a.o 2>&1 | FileCheck --check-prefix=BAD %s
//
// COLD: remark: kiln: compiling 4 CUDA kernels of this file with nvcc for {{sm_80,sm_90,compute_90|native \(.*\)}}; later builds take them from the cache
// ARGS: -fatbin -O3 -std=c++17 --threads 0 {{-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90|-arch=native}} -I
// ARGS-NEXT: -fatbin -O3 -std=c++17 --threads 0 -gencode arch=compute_90a,code=sm_90a -I
// ARGS-NEXT: -fatbin -O3 -std=c++17 --threads 0 -gencode arch=compute_120,code=sm_120 -gencode arch=compute_120,code=compute_120 -I
// BAD: error: kiln: -fplugin-arg-kiln-arch='ampere': 'ampere' is not sm_XX, compute_XX or native (e.g. sm_80,sm_90,compute_90)
#include <kiln/kiln.h>

[[kiln::compile("dtypes=f32")]] kiln::Tensor f(const kiln::Tensor &x) {
  return kiln::sin(x) * 2.0;
}
