// Matrix products in remarks: the function's kernels (which are library
// GEMMs), and at each product's line what its GEMM's epilogue does.
// RUN: %kiln_cxx -fsyntax-only %kiln_remarks %s 2>&1 | FileCheck %s
#include <kiln/kiln.h>

using kiln::Tensor;

// The optional bias makes two specialisations (b1 defined or not).
[[kiln::compile]] Tensor mlp(const Tensor &x, const Tensor &w1, const Tensor &b1,
                             const Tensor &w2) {
  // CHECK: remarks-products.cpp:[[@LINE+4]]:3: remark: kiln: compiled 'mlp (region 1, specialisation 1)': 4 ops captured, fused into 2 kernels (all library GEMMs)
  // CHECK: remarks-products.cpp:[[@LINE+3]]:25: remark: kiln: linear is a library GEMM (cuBLASLt on CUDA, OpenBLAS on the CPU) whose epilogue adds 'b1' as its bias (one value per column) or C, then applies gelu_tanh (line [[@LINE+3]])
  // CHECK: remarks-products.cpp:[[@LINE+3]]:14: remark: kiln: matmul is a library GEMM (cuBLASLt on CUDA, OpenBLAS on the CPU) whose epilogue adds 'x' as C
  // CHECK: remark: kiln: linear is a library GEMM (cuBLASLt on CUDA, OpenBLAS on the CPU) whose epilogue applies gelu_tanh
  Tensor h = kiln::gelu(kiln::linear(x, w1, b1), "tanh");
  Tensor y = kiln::matmul(h, w2);
  return y + x;
}

// Used twice, the product has no epilogue; the row op after it is a kernel.
// CHECK: remarks-products.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'twice': 3 ops captured, {{.*}}fused into 2 kernels (one is a library GEMM)
[[kiln::compile]] Tensor twice(const Tensor &a, const Tensor &b) {
  // CHECK: remarks-products.cpp:[[@LINE+1]]:14: remark: kiln: matmul is a library GEMM (cuBLASLt on CUDA, OpenBLAS on the CPU) with no epilogue
  Tensor p = kiln::matmul(a, b);
  return kiln::softmax(p, -1) * p;
}

// bmm is a GEMM as matmul is; the bias its epilogue.
// CHECK: remarks-products.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'batched': 2 ops captured, fused into 1 kernel (a library GEMM)
[[kiln::compile]] Tensor batched(const Tensor &a, const Tensor &b, const Tensor &c) {
  // CHECK: remarks-products.cpp:[[@LINE+1]]:10: remark: kiln: bmm is a library GEMM (cuBLASLt on CUDA, OpenBLAS on the CPU) whose epilogue adds 'c' as C
  return kiln::bmm(a, b) + c;
}
