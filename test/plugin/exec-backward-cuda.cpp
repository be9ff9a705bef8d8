// exec-backward.cpp on CUDA tensors: the compiled backward's kernels on
// the GPU, against eager autograd and float64.
// REQUIRES: cuda-gpu
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --check-prefixes=CHECK,%compiled
// COMPILED: ln_gelu_res: compiled calls 2, fallbacks 0, grads 3, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: xent: compiled calls 2, fallbacks 0, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: softmax_by_hand: compiled calls 2, fallbacks 0, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: scaled_sin: compiled calls 2, fallbacks 0, grads 2, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: rms_mixed bf16: compiled calls 2, fallbacks 0, grads 2, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: mlp 2-D: compiled calls 2, fallbacks 0, grads 5, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: mlp 3-D, weights only: compiled calls 2, fallbacks 0, grads 4, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: ln_gelu_res: compiled calls 0, fallbacks 1
// CHECK: two: compiled calls 0, fallbacks 1, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// CHECK: twice through one node: ok
// CHECK: saved then updated: backward raised
// CHECK-NOT: MISMATCH
#define KILN_BACKWARD_ON_CUDA
#include "exec-backward.cpp"
