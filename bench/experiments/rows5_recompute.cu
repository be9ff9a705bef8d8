// The 5-slot FULL instance of 16-bit rows kernels (plan_cuda's
// exact_slots), keeping what register mode keeps (as landed) or
// recomputing it (a template of its own, as f32's 8-slot instance does).
// ncu had bf16 softmax's keeping instance at 92 registers, 2 blocks of 256
// threads a multiprocessor over rows of 10240 (71 % of the floor;
// bench/results/2026-12-01-h200-rows-5120.md, call 3). Times each kernel
// as the host launches it over 2^26 bf16 elements at 1280, 2560, 5120 and
// 10240 columns, and prints a checksum of each output so the two builds'
// outputs can be compared. Build, once per variant:
//   kiln-opt --pipeline --emit=cuda --dtypes=bf16 rows.kir > <dir>/kiln_rows.cu
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include -I <dir> \
//        -I bench/experiments bench/experiments/rows5_recompute.cu
// with rows.kir the graphs of bf16_rows_slots.cu (@rms, @sm, @ln, @lng).
#include "kernel_time.cuh"
#include "kiln_rows.cu"

#include <cuda_bf16.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

int main() {
  const int64_t total = int64_t(1) << 26;
  __nv_bfloat16 *x, *g, *b, *y;
  CK(cudaMalloc(&x, total * 2));
  CK(cudaMalloc(&y, total * 2));
  CK(cudaMalloc(&g, 10240 * 2));
  CK(cudaMalloc(&b, 10240 * 2));
  fill_bf16<<<1024, 256>>>(x, total, 1, 6.f, 1.f);
  fill_bf16<<<32, 256>>>(g, 10240, 2, 2.f, 0.f);
  fill_bf16<<<32, 256>>>(b, 10240, 3, 2.f, 0.f);
  CK(cudaDeviceSynchronize());
  using KB = kiln::bfloat16;
  const KB *kx = reinterpret_cast<const KB *>(x), *kg = reinterpret_cast<const KB *>(g),
           *kb = reinterpret_cast<const KB *>(b);
  KB *ky = reinterpret_cast<KB *>(y);
  std::vector<__nv_bfloat16> got(total);
  for (int64_t R : {1280, 2560, 5120, 10240}) {
    const int64_t rows = total / R, n = rows * R;
    kiln::RowSpace s;
    s.outer = rows, s.R = R, s.inner = 1, s.rows = rows;
    s.vec = 1, s.rpg = 1;
    s.tpr = int(R / 40), s.vpt = 5;
    // As plan_cuda launches a row group: a warp's groups 8 to a block.
    const unsigned block = s.tpr == 32 ? 256 : unsigned(s.tpr);
    const unsigned grid = unsigned((rows + block / s.tpr - 1) / (block / s.tpr));
    for (const std::string gs : {"rms", "sm", "ln", "lng"}) {
      std::function<void()> launch;
      if (gs == "rms") {
        kiln::RowStrides<3> st{};
        st.s[0][0] = st.s[1][0] = R;
        st.s[0][1] = st.s[1][1] = st.s[2][1] = 1;
        launch = [=] { __kiln_rms_k0_bf16_rows5full<<<grid, block>>>(s, st, kx, kg, ky); };
      } else if (gs == "sm") {
        kiln::RowStrides<2> st{};
        st.s[0][0] = st.s[1][0] = R;
        st.s[0][1] = st.s[1][1] = 1;
        launch = [=] { __kiln_sm_k0_bf16_rows5full<<<grid, block>>>(s, st, kx, ky); };
      } else {
        kiln::RowStrides<4> st{};
        st.s[0][0] = st.s[1][0] = R;
        st.s[0][1] = st.s[1][1] = st.s[2][1] = st.s[3][1] = 1;
        if (gs == "ln")
          launch = [=] { __kiln_ln_k0_bf16_rows5full<<<grid, block>>>(s, st, kx, kg, kb, ky); };
        else
          launch = [=] { __kiln_lng_k0_bf16_rows5full<<<grid, block>>>(s, st, kx, kg, kb, ky); };
      }
      CK(cudaMemset(y, 0xff, total * 2));
      launch();
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(got.data(), y, n * 2, cudaMemcpyDeviceToHost));
      double sum = 0;
      int64_t nan = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = __bfloat162float(got[i]);
        if (std::isnan(v))
          ++nan;
        else
          sum += std::fabs(v);
      }
      float best = 1e9;
      for (int round = 0; round < 3; ++round)
        best = std::fmin(best, kernel_time_ms(launch));
      const double floor_ms = 2.0 * n * 2 / 4.21e9;
      std::printf("%-4s %5lld x %5lld  tpr %3d  %.4f ms  %5.1f %% of floor  sum|y| %.6e  nan %lld\n",
                  gs.c_str(), (long long)rows, (long long)R, s.tpr, best,
                  100 * floor_ms / best, sum, (long long)nan);
      std::fflush(stdout);
    }
  }
  return 0;
}
