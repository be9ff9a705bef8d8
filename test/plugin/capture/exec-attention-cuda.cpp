// Scaled dot-product attention inside compiled functions, on a CUDA GPU:
// the flash kernel (bf16/f16, head dims 64 and 128) and the general one
// (f32, f64, other head dims), one kernel per attention, against eager and
// a float64 reference written as the math (test/Inputs/attention_cases.h).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: ok: a mask with is_causal raises
// CHECK: ok: a mask of another float dtype raises
// CHECK: ok: keys of another head dim raise
// CHECK: ok: 3 query heads over 2 key heads raise
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "attention_cases.h"

int main() { return run_attention(kiln::Device::cuda(0)); }
