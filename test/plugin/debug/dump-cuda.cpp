// With nvcc, the dump holds each function's CUDA kernels, each line
// commented with the source expression it computes, and (when the compile
// emits code) tu.cu, the file nvcc compiled.
// REQUIRES: nvcc
// RUN: rm -rf %t.dir %t.syntax
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-debug-dir=%t.syntax %s
// RUN: FileCheck %s --check-prefix=CU < %t.syntax/dump-cuda.cpp/scale_exp/kernels.cu
// RUN: python3 %S/Inputs/flatjson.py %t.syntax/dump-cuda.cpp/scale_exp/explain.json | FileCheck %s --check-prefix=JSON
// RUN: not ls %t.syntax/dump-cuda.cpp/tu.cu
// RUN: %kiln_cxx -c -fplugin-arg-kiln-debug-dir=%t.dir %s -o %t.o
// RUN: FileCheck %s --check-prefix=TU < %t.dir/dump-cuda.cpp/tu.cu
// RUN: FileCheck %s --check-prefix=FATBIN < %t.dir/dump-cuda.cpp/tu.host.cpp
#include <kiln/kiln.h>

using kiln::Tensor;

// CU:      // Kiln: the CUDA kernels of 'scale_exp' (dump-cuda.cpp:[[@LINE+19]]).
// CU:      extern "C" __global__ void __launch_bounds__(256)
// CU-NEXT: [[VEC:kiln_scale_exp_[0-9a-f]+_k0_f32_vec]](const int64_t n,
// CU:      op_mul(v0, float(s0)); // mul(x, s)  at dump-cuda.cpp:[[@LINE+17]]:26
// CU-NEXT: op_exp(v2); // e = exp(%2)  at dump-cuda.cpp:[[@LINE+16]]:14
// CU-NEXT: op_add(v3, float(1.0)); // add(e, 1.0)  at dump-cuda.cpp:[[@LINE+16]]:12
// CU:      {{_k0_f32_s32}}(const int64_t n, const kiln::OffsetCalc<2> calc,
// CU:      {{_k0_f32_s64}}(const int64_t n, const kiln::OffsetCalc<2> calc,
// CU:      {{_k0_f32_sv}}(const int64_t n, const kiln::OffsetCalc<2> calc,
// CU:      kiln::gen::vec_load_or_splat<V>(in0 + off[1], c0);
// JSON: options.cuda = true
// JSON: kernels[0].cuda_kernels.size = 4
// JSON-NEXT: kernels[0].cuda_kernels[0] = "{{.*}}_k0_f32_vec"
// JSON: guards[2].check = "the dtype of 'x' is f32 (the variant compiled)"
// JSON: guards[4].check = "on a CUDA device, this file's CUDA kernels were built (nvcc ran)"
// TU: #include <kiln/generated.cuh>
// TU: extern "C" __global__ void __launch_bounds__(256)
// TU-NEXT: kiln_scale_exp_{{[0-9a-f]+}}_k0_f32_vec(const int64_t n,
// FATBIN: alignas(16) const char kiln_fatbin[] =
[[kiln::compile("dtypes=f32")]] Tensor scale_exp(const Tensor &x, double s) {
  Tensor e = kiln::exp(x * s);
  return e + 1.0;
}
