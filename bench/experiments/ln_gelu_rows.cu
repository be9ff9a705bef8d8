// Layer norm -> tanh-GELU over 8192x4096 bf16 rows, the row kernel that
// writes issue 13's "layer norm -> GELU -> matmul" GEMM input: Kiln's
// generated kernel (three thread counts a row) against hand-made kernels of
// the same structure (256 threads a row, 2 slots of 8 bf16 each, two-pass
// moments in registers), to see what the GELU costs. Build:
//   kiln-opt --pipeline --emit=cuda --dtypes=bf16 ngm.kir > kiln_ngm.cu
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include -I <dir of kiln_ngm.cu>
//        bench/experiments/ln_gelu_rows.cu -o ln_gelu_rows
// where ngm.kir is
//   graph @ngm(%x: bf16[8192,4096], %g: bf16[4096], %b: bf16[4096],
//              %w: bf16[4096,4096]) {
//     %n = layer_norm %x, %g, %b, 1e-5 {dims=[-1]}
//     %a = gelu_tanh %n
//     %y = matmul %a, %w
//     return %y
//   }
// Hand-made kernels' GELU:
//   tanhf:   0.5 v (1 + tanhf(u)), u = 0.7978845608 (v + 0.044715 v^3),
//            as the decomposition (and Inductor's libdevice tanh) has it
//   sigmoid: v / (1 + exp(-2u)), the same function (0.5 (1 + tanh u) is
//            the logistic of 2u), exp from ex2.approx and one division
//   none:    layer norm alone
//   copy:    the row copied: the floor of this traffic
#include "kernel_time.cuh"
#include "kiln_ngm.cu"
#ifdef KILN_NGM_VARIANTS
// kiln_ngm.cu with `const int tpr = 256` (c), tanh as 2 / (1 + exp(-2u)) - 1
// with __expf (t), and both (ct), made from the generated file by
//   sed -e 's/__kiln_ngm_/__kiln_ngmc_/g' \
//       -e '0,/const int tpr = sp.tpr;/s//const int tpr = 256;/' kiln_ngm.cu > kiln_ngmc.cu
//   sed -e 's/__kiln_ngm_/__kiln_ngmt_/g' -e 's/kiln::scalar::op_tanh(\(v[0-9]*\))/(2.f \/ (1.f + __expf(-2.f * \1)) - 1.f)/' \
//       kiln_ngm.cu > kiln_ngmt.cu
//   (and kiln_ngmct.cu: the second sed over kiln_ngmc.cu, __kiln_ngmc_ -> __kiln_ngmct_)
#include "kiln_ngmc.cu"
#include "kiln_ngmct.cu"
#include "kiln_ngmt.cu"
#endif

#include <cuda_bf16.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

constexpr int C = 4096, TPR = 256, SL = 2, V = 8;

namespace {

__device__ __forceinline__ float block_sum(float s, float *red) {
#pragma unroll
  for (int m = 16; m; m /= 2)
    s += __shfl_xor_sync(~0u, s, m);
  __syncthreads();
  if ((threadIdx.x & 31) == 0)
    red[threadIdx.x / 32] = s;
  __syncthreads();
  float a = 0;
#pragma unroll
  for (int w = 0; w < TPR / 32; ++w)
    a += red[w];
  return a;
}

template <int MODE>
__global__ void __launch_bounds__(TPR)
    ln_gelu(const __nv_bfloat16 *__restrict__ x,
            const __nv_bfloat16 *__restrict__ g,
            const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y) {
  __shared__ float red[TPR / 32];
  const int64_t row = blockIdx.x;
  const int t = threadIdx.x;
  uint4 raw[SL];
#pragma unroll
  for (int s = 0; s < SL; ++s)
    raw[s] = __ldcs(reinterpret_cast<const uint4 *>(x + row * C) + s * TPR + t);
  if (MODE == 3) {
#pragma unroll
    for (int s = 0; s < SL; ++s)
      __stcs(reinterpret_cast<uint4 *>(y + row * C) + s * TPR + t, raw[s]);
    return;
  }
  float v[SL][V], sum = 0;
#pragma unroll
  for (int s = 0; s < SL; ++s) {
    const __nv_bfloat16 *h = reinterpret_cast<const __nv_bfloat16 *>(&raw[s]);
#pragma unroll
    for (int i = 0; i < V; ++i)
      sum += v[s][i] = __bfloat162float(h[i]);
  }
  const float mean = block_sum(sum, red) * (1.f / C);
  float q = 0;
#pragma unroll
  for (int s = 0; s < SL; ++s)
#pragma unroll
    for (int i = 0; i < V; ++i)
      q += (v[s][i] - mean) * (v[s][i] - mean);
  const float rs = rsqrtf(block_sum(q, red) * (1.f / C) + 1e-5f);
#pragma unroll
  for (int s = 0; s < SL; ++s) {
    const uint4 gr = reinterpret_cast<const uint4 *>(g)[s * TPR + t];
    const uint4 br = reinterpret_cast<const uint4 *>(b)[s * TPR + t];
    const __nv_bfloat16 *gh = reinterpret_cast<const __nv_bfloat16 *>(&gr);
    const __nv_bfloat16 *bh = reinterpret_cast<const __nv_bfloat16 *>(&br);
    uint4 out;
    __nv_bfloat16 *o = reinterpret_cast<__nv_bfloat16 *>(&out);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const float n = (v[s][i] - mean) * rs * __bfloat162float(gh[i]) +
                      __bfloat162float(bh[i]);
      const float u = 0.7978845608028654f * (n + 0.044715f * n * n * n);
      float r;
      if (MODE == 0)
        r = 0.5f * n * (1.f + tanhf(u));
      else if (MODE == 1)
        r = __fdividef(n, 1.f + __expf(-2.f * u));
      else
        r = n;
      o[i] = __float2bfloat16(r);
    }
    __stcs(reinterpret_cast<uint4 *>(y + row * C) + s * TPR + t, out);
  }
}

} // namespace

int main(int argc, char **argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 8192;
  const size_t n = size_t(rows) * C;
  __nv_bfloat16 *x, *g, *b, *y, *ref;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&y, n * 2));
  CK(cudaMalloc(&ref, n * 2));
  CK(cudaMalloc(&g, C * 2));
  CK(cudaMalloc(&b, C * 2));
  fill_bf16<<<1024, 256>>>(x, n, 1, 6.f, 1.f);
  fill_bf16<<<16, 256>>>(g, C, 2, 2.f, 0.f);
  fill_bf16<<<16, 256>>>(b, C, 3, 2.f, 0.f);
  CK(cudaDeviceSynchronize());

  kiln::RowSpace sp;
  sp.outer = rows, sp.R = C, sp.inner = 1, sp.rows = rows;
  sp.tpr = TPR, sp.vpt = SL, sp.vec = 1, sp.rpg = 1;
  kiln::RowSpace sp512 = sp, sp128 = sp;
  sp512.tpr = 512, sp512.vpt = 1;
  sp128.tpr = 128, sp128.vpt = 4;
  kiln::RowStrides<4> st{};
  st.s[0][0] = C, st.s[1][0] = C; // out, x; g and b have no row stride
  st.s[0][1] = st.s[1][1] = st.s[2][1] = st.s[3][1] = 1;
  using KB = kiln::bfloat16;
  const KB *kx = reinterpret_cast<const KB *>(x),
           *kg = reinterpret_cast<const KB *>(g),
           *kb = reinterpret_cast<const KB *>(b);
  KB *ky = reinterpret_cast<KB *>(y);

  struct Variant {
    std::string name;
    std::function<void()> launch;
  };
  const unsigned grid = unsigned(rows);
  std::vector<Variant> vs = {
      {"kiln rows2full tpr 256 (today)",
       [&] { __kiln_ngm_k0_bf16_rows2full<<<grid, 256>>>(sp, st, kx, kg, kb, ky); }},
      {"kiln rows1full tpr 512",
       [&] { __kiln_ngm_k0_bf16_rows1full<<<grid, 512>>>(sp512, st, kx, kg, kb, ky); }},
      {"kiln rows4full tpr 128",
       [&] { __kiln_ngm_k0_bf16_rows4full<<<grid, 128>>>(sp128, st, kx, kg, kb, ky); }},
#ifdef KILN_NGM_VARIANTS
      {"kiln rows2full, tpr constant",
       [&] { __kiln_ngmc_k0_bf16_rows2full<<<grid, 256>>>(sp, st, kx, kg, kb, ky); }},
      {"kiln rows2full, fast tanh",
       [&] { __kiln_ngmt_k0_bf16_rows2full<<<grid, 256>>>(sp, st, kx, kg, kb, ky); }},
      {"kiln rows2full, both",
       [&] { __kiln_ngmct_k0_bf16_rows2full<<<grid, 256>>>(sp, st, kx, kg, kb, ky); }},
#endif
      {"hand, tanhf", [&] { ln_gelu<0><<<grid, TPR>>>(x, g, b, y); }},
      {"hand, sigmoid form", [&] { ln_gelu<1><<<grid, TPR>>>(x, g, b, y); }},
      {"hand, layer norm only", [&] { ln_gelu<2><<<grid, TPR>>>(x, g, b, y); }},
      {"hand, copy", [&] { ln_gelu<3><<<grid, TPR>>>(x, g, b, y); }},
  };
  // Kiln's result is the reference for the others (max |diff| in bf16).
  vs[0].launch();
  CK(cudaMemcpy(ref, y, n * 2, cudaMemcpyDeviceToDevice));
  std::vector<__nv_bfloat16> hr(n), hy(n);
  CK(cudaMemcpy(hr.data(), ref, n * 2, cudaMemcpyDeviceToHost));
  const double floor_ms = 2.0 * n * 2 / 4.21e9;
  std::printf("rows %lld x %d bf16, floor %.4f ms (4.21 TB/s)\n",
              (long long)rows, C, floor_ms);
  for (int round = 0; round < 3; ++round)
    for (const Variant &v : vs) {
      CK(cudaMemset(y, 0xff, n * 2));
      v.launch();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(hy.data(), y, n * 2, cudaMemcpyDeviceToHost));
      double err = 0;
      for (size_t i = 0; i < n; i += 61) {
        const double a = __bfloat162float(hy[i]), r = __bfloat162float(hr[i]);
        err = std::fmax(err, std::isnan(a) ? 1e30 : std::fabs(a - r) / (1 + std::fabs(r)));
      }
      const float ms = kernel_time_ms(v.launch);
      std::printf("round %d  %-32s %.4f ms  %5.1f %% of floor  rel diff %.3g\n",
                  round, v.name.c_str(), ms, 100 * floor_ms / ms, err);
    }
  return 0;
}
