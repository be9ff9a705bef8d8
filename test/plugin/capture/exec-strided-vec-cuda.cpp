// Strided layouts whose innermost dim every operand reads contiguously or
// broadcast (attention's head views, a [T, D] table broadcast over heads, a
// slice of the last dim) take the vector flavours: the generated kernel's
// `sv` (V elements per thread, one offset computation) and the runtime's
// `strided_vec` copy. Layouts that do not fit (an inner dim that is not a
// multiple of V, a transposed inner dim, a slice starting off the vector
// boundary) take the element-wise s32 kernel and the plain strided copy.
// A small call (fewer 16-byte items than 128 per multiprocessor) takes the
// element-wise kernel whatever its layout (kiln::gen::pointwise_small), so
// the other cases are large enough for the vector flavours on any GPU of
// up to 256 multiprocessors.
// Compiled vs eager vs float64; the launch log (stderr, in order) shows the
// flavour each launch took, and not the other one (COMPILED lines: with
// every guard made to fail, only the numbers are checked).
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && env KILN_LOGS=kernels %t 2>&1 | FileCheck %s --allow-unused-prefixes --check-prefixes=CHECK,%compiled
// CHECK-NOT: MISMATCH
// CHECK: case rope head view bf16
// COMPILED-NOT: {{kiln_rope_mix_.*_s32 }}
// COMPILED: launch {{kiln_rope_mix_.*_k0_bf16_sv}}
// CHECK: case rope head view f32
// COMPILED-NOT: {{kiln_rope_mix_.*_s32 }}
// COMPILED: launch {{kiln_rope_mix_.*_k0_f32_sv}}
// CHECK: case rope odd head dim bf16
// COMPILED-NOT: {{kiln_rope_mix_.*_sv }}
// COMPILED: launch {{kiln_rope_mix_.*_k0_bf16_s32}}
// CHECK: case rope head view, a small call bf16
// COMPILED-NOT: {{kiln_rope_mix_.*_sv }}
// COMPILED: launch {{kiln_rope_mix_.*_k0_bf16_s32}}
// CHECK: case transposed inner dim f32
// COMPILED-NOT: {{kiln_scaled_t_.*_sv }}
// COMPILED: launch {{kiln_scaled_t_.*_k0_f32_s32}}
// CHECK: case slice of the last dim bf16
// COMPILED-NOT: {{kiln_swish_half_.*_s32 }}
// COMPILED: launch {{kiln_swish_half_.*_k0_bf16_sv}}
// CHECK: case slice off the vector boundary bf16
// COMPILED-NOT: {{kiln_swish_half_.*_sv }}
// COMPILED: launch {{kiln_swish_half_.*_k0_bf16_s32}}
// CHECK: case heads merged bf16
// COMPILED-NOT: launch copy bf16 n={{[0-9]+}} strided32
// COMPILED: launch copy bf16 n=4096 strided_vec
// CHECK: case heads merged, odd head dim bf16
// COMPILED-NOT: launch copy bf16 n={{[0-9]+}} strided_vec
// COMPILED: launch copy bf16 n=1920 strided32
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <cstdio>

using kiln::Tensor;
using namespace capture_compare;

// RoPE's combination over heads split by views: x [B, T, H*D] seen as
// [B, H, T, D] (strides T*H*D, D, H*D, 1), cos and sin [T, D] broadcast.
COMPILE Tensor rope_mix(const Tensor &x, const Tensor &cos, const Tensor &sin,
                        int64_t H) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = x.view({B, T, H, -1}).transpose(1, 2);
  return q * cos - q * sin * 0.5;
}

// The inner dim of the iteration space is x's stride-T dim.
COMPILE Tensor scaled_t(const Tensor &x) { return x.transpose(0, 1) * 3.0; }

// Halves of the last dim at run-time offsets.
COMPILE Tensor swish_half(const Tensor &x, int64_t h) {
  return kiln::silu(x.slice(-1, 0, h)) * x.slice(-1, h, 2 * h);
}

// Heads merged: [B, H, T, D] -> [B, T, H*D], a copy of a transposed view.
COMPILE Tensor merge_heads(const Tensor &x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return x.transpose(1, 2).reshape({B, T, H * D}) * 2.0;
}

namespace {

// The compiled call on inputs `in` (made before the counters start), against
// the same function run eagerly on float64 copies of them.
void run_case(const char *name, const std::vector<Tensor> &in,
              const std::function<Tensor(const std::vector<Tensor> &)> &fn,
              int64_t launches) {
  const kiln::DType dt = in[0].dtype();
  std::vector<Tensor> in64;
  for (const Tensor &t : in)
    in64.push_back(as_f64(t));
  std::vector<Tensor> refs =
      eager_reference([&] { return std::vector<Tensor>{on_cpu(fn(in64))}; });
  std::fprintf(stderr, "case %s %s\n", name, kiln::dtype_name(dt));
  std::fflush(stderr);
  check(name, dt, [&] { return std::vector<Tensor>{fn(in)}; }, 1, 0,
        kernels(launches), refs);
}

} // namespace

int main() {
  const kiln::Device dev = kiln::Device::cuda(0);
  auto in = [&](kiln::Dims s, kiln::DType t, uint64_t seed) {
    return input(s, t, seed, dev);
  };
  for (auto [dt, D, what] : {std::tuple{kiln::bf16, int64_t(64), "rope head view"},
                             std::tuple{kiln::f32, int64_t(64), "rope head view"},
                             std::tuple{kiln::bf16, int64_t(6), "rope odd head dim"}}) {
    const int64_t B = 2, T = 512, H = 4;
    run_case(what, {in({B, T, H * D}, dt, 1), in({T, D}, dt, 2), in({T, D}, dt, 3)},
             [&](const std::vector<Tensor> &a) {
               return rope_mix(a[0], a[1], a[2], H);
             }, 1);
  }
  {
    const int64_t B = 2, T = 16, H = 4, D = 64;
    const kiln::DType dt = kiln::bf16;
    run_case("rope head view, a small call",
             {in({B, T, H * D}, dt, 9), in({T, D}, dt, 10), in({T, D}, dt, 11)},
             [&](const std::vector<Tensor> &a) {
               return rope_mix(a[0], a[1], a[2], H);
             }, 1);
  }
  run_case("transposed inner dim", {in({640, 480}, kiln::f32, 4)},
           [](const std::vector<Tensor> &a) { return scaled_t(a[0]); }, 1);
  run_case("slice of the last dim", {in({4096, 128}, kiln::bf16, 5)},
           [](const std::vector<Tensor> &a) { return swish_half(a[0], 64); }, 1);
  run_case("slice off the vector boundary", {in({4096, 100}, kiln::bf16, 6)},
           [](const std::vector<Tensor> &a) { return swish_half(a[0], 50); }, 1);
  // reshape of the transposed view copies (the runtime's copy), then the
  // kernel doubling it reads the copy contiguously.
  run_case("heads merged", {in({2, 4, 8, 64}, kiln::bf16, 7)},
           [](const std::vector<Tensor> &a) { return merge_heads(a[0]); }, 2);
  run_case("heads merged, odd head dim", {in({2, 4, 8, 30}, kiln::bf16, 8)},
           [](const std::vector<Tensor> &a) { return merge_heads(a[0]); }, 2);
  return summary();
}
