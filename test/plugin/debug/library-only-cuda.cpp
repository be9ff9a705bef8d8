// A file whose compiled functions run only library calls on CUDA (a GEMM
// with its epilogue): no kernel for nvcc, no fatbin, and still a CUDA path
// (kiln_have_cuda), where such a file used to send every CUDA call to the
// original body with "no CUDA kernels were generated for this function".
// Without CUDA the guard says why. exec-autotune-cuda.cpp runs such a file.
// REQUIRES: nvcc
// RUN: rm -rf %t.dir %t.off
// RUN: %kiln_cxx -c -fplugin-arg-kiln-debug-dir=%t.dir %s -o %t.o
// RUN: FileCheck %s < %t.dir/library-only-cuda.cpp/tu.host.cpp
// RUN: not ls %t.dir/library-only-cuda.cpp/tu.cu
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.off %s -o %t.off.o
// RUN: FileCheck %s --check-prefix=OFF < %t.off/library-only-cuda.cpp/tu.host.cpp
// CHECK: kiln::rt::KernelModule kiln_module{nullptr,
// CHECK-NEXT: constexpr bool kiln_have_cuda = true;
// CHECK: kiln::gen::product(
// OFF: constexpr bool kiln_have_cuda = false;
// OFF: kiln_no_cuda_reason = "CUDA was turned off with -fplugin-arg-kiln-cuda=off
#include <kiln/kiln.h>

using kiln::Tensor;

[[kiln::compile]] Tensor proj(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::relu(kiln::linear(x, w, b));
}
