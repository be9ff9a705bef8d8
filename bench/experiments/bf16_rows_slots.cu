// bf16 rows kernels over 2^26 elements (or 2^argv[1]): how many 16-byte slots a thread
// should hold (1, 2 or 4: a row of R columns is the fewest threads, a power
// of two, that hold its R / 8 slots that many a thread).
// kiln::gen::plan_cuda gave a bf16 row at most 2 slots a thread where the
// row needs more than a warp (before 601603b, which made it 4); issue 13's
// layer norm -> GELU row kernel ran 15 % faster with 4
// (2026-12-01-h200-gemm-prologue.md). This times the
// generated kernels of RMS norm, softmax, layer norm and layer norm ->
// tanh-GELU at 2048, 3072, 4096, 5120 and 8192 columns with each slot count the
// kernels have, as the host launches them (a block a row, grid = rows).
// Build:
//   kiln-opt --pipeline --emit=cuda --dtypes=bf16 rows.kir > kiln_rows.cu
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include -I <dir of kiln_rows.cu>
//        bench/experiments/bf16_rows_slots.cu -o bf16_rows_slots
// with rows.kir the four graphs @rms (rms_norm %x, %w, 1e-6), @sm (softmax),
// @ln (layer_norm %x, %g, %b, 1e-5) and @lng (@ln, then gelu_tanh), each
// over dims=[-1] of a bf16 x.
#include "kernel_time.cuh"
#include "kiln_rows.cu"

#include <cuda_bf16.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using KB = kiln::bfloat16;
using Launch = void (*)(const kiln::RowSpace, const kiln::RowStrides<4>,
                        const KB *, const KB *, const KB *, KB *);

} // namespace

int main(int argc, char **argv) {
  // argv[1]: log2 of the elements (26 unless given; fewer rows, same
  // widths); argv[2...]: the widths (2048, 3072, 4096, 5120 and 8192
  // unless given).
  const int64_t total = int64_t(1) << (argc > 1 ? std::atoi(argv[1]) : 26);
  std::vector<int64_t> widths = {2048, 3072, 4096, 5120, 8192};
  if (argc > 2) {
    widths.clear();
    for (int i = 2; i < argc; ++i)
      widths.push_back(std::atoll(argv[i]));
  }
  __nv_bfloat16 *x, *g, *b, *y;
  CK(cudaMalloc(&x, total * 2));
  CK(cudaMalloc(&y, total * 2));
  CK(cudaMalloc(&g, 8192 * 2));
  CK(cudaMalloc(&b, 8192 * 2));
  fill_bf16<<<1024, 256>>>(x, total, 1, 6.f, 1.f);
  fill_bf16<<<32, 256>>>(g, 8192, 2, 2.f, 0.f);
  fill_bf16<<<32, 256>>>(b, 8192, 3, 2.f, 0.f);
  CK(cudaDeviceSynchronize());
  const KB *kx = reinterpret_cast<const KB *>(x), *kg = reinterpret_cast<const KB *>(g),
           *kb = reinterpret_cast<const KB *>(b);
  KB *ky = reinterpret_cast<KB *>(y);
  const double floor_ms = 2.0 * total * 2 / 4.21e9;
  std::printf("%lld bf16 elements, floor %.4f ms (4.21 TB/s)\n", (long long)total,
              floor_ms);
  std::vector<__nv_bfloat16> first(total), got(total);
  for (int64_t R : widths) {
    const int64_t rows = total / R, n = rows * R;
    kiln::RowSpace sp;
    sp.outer = rows, sp.R = R, sp.inner = 1, sp.rows = rows;
    sp.vec = 1, sp.rpg = 1;
    for (const char *graph : {"rms", "sm", "ln", "lng"}) {
      const std::string gs = graph;
      for (int slots : {1, 2, 4}) {
        // As plan_cuda: the fewest threads (a power of two) that hold the
        // row in `slots` slots each; the FULL twin when it fills them all.
        const int64_t need = R / 8;
        int64_t tpr = 32;
        while (tpr * slots < need)
          tpr *= 2;
        if (tpr > 512)
          continue;
        const int vpt = int((need + tpr - 1) / tpr);
        const bool full = vpt == slots && need == tpr * slots;
        kiln::RowSpace s = sp;
        s.tpr = int(tpr), s.vpt = vpt;
        std::function<void()> launch;
        const unsigned grid = unsigned(rows), block = unsigned(tpr);
        // 4 slots of which the row fills 3 exactly: the 3-slot FULL twin
        // (rows_full_between), as the host picks it.
        // (NO_FULL3=1: the guarded 4-slot kernel, as before.)
        const char *no3 = std::getenv("NO_FULL3");
        const bool full3 = slots == 4 && vpt == 3 && need == 3 * tpr &&
                           !(no3 && *no3);
        auto pick = [&](auto f1, auto f1f, auto f2, auto f2f, auto f3f, auto f4,
                        auto f4f) {
          return slots == 1 ? (full ? f1f : f1)
                 : slots == 2 ? (full ? f2f : f2)
                              : (full ? f4f : full3 ? f3f : f4);
        };
        // Operands: out first, then the inputs (x, then the vectors).
        if (gs == "rms") {
          kiln::RowStrides<3> st{};
          st.s[0][0] = st.s[1][0] = R;
          st.s[0][1] = st.s[1][1] = st.s[2][1] = 1;
          auto k = pick(__kiln_rms_k0_bf16_rows1, __kiln_rms_k0_bf16_rows1full,
                        __kiln_rms_k0_bf16_rows2, __kiln_rms_k0_bf16_rows2full,
                        __kiln_rms_k0_bf16_rows3full,
                        __kiln_rms_k0_bf16_rows4, __kiln_rms_k0_bf16_rows4full);
          launch = [=] { k<<<grid, block>>>(s, st, kx, kg, ky); };
        } else if (gs == "sm") {
          kiln::RowStrides<2> st{};
          st.s[0][0] = st.s[1][0] = R;
          st.s[0][1] = st.s[1][1] = 1;
          auto k = pick(__kiln_sm_k0_bf16_rows1, __kiln_sm_k0_bf16_rows1full,
                        __kiln_sm_k0_bf16_rows2, __kiln_sm_k0_bf16_rows2full,
                        __kiln_sm_k0_bf16_rows3full,
                        __kiln_sm_k0_bf16_rows4, __kiln_sm_k0_bf16_rows4full);
          launch = [=] { k<<<grid, block>>>(s, st, kx, ky); };
        } else {
          kiln::RowStrides<4> st{};
          st.s[0][0] = st.s[1][0] = R;
          st.s[0][1] = st.s[1][1] = st.s[2][1] = st.s[3][1] = 1;
          Launch k = gs == "ln"
                         ? pick(__kiln_ln_k0_bf16_rows1, __kiln_ln_k0_bf16_rows1full,
                                __kiln_ln_k0_bf16_rows2, __kiln_ln_k0_bf16_rows2full,
                        __kiln_ln_k0_bf16_rows3full,
                                __kiln_ln_k0_bf16_rows4, __kiln_ln_k0_bf16_rows4full)
                         : pick(__kiln_lng_k0_bf16_rows1, __kiln_lng_k0_bf16_rows1full,
                                __kiln_lng_k0_bf16_rows2, __kiln_lng_k0_bf16_rows2full,
                        __kiln_lng_k0_bf16_rows3full,
                                __kiln_lng_k0_bf16_rows4, __kiln_lng_k0_bf16_rows4full);
          launch = [=] { k<<<grid, block>>>(s, st, kx, kg, kb, ky); };
        }
        CK(cudaMemset(y, 0xff, total * 2));
        launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), y, total * 2, cudaMemcpyDeviceToHost));
        double diff = 0;
        if (slots == 1 || (slots == 2 && tpr * 2 > 512)) // the first of the row
          first = got;
        for (int64_t i = 0; i < n; i += 101) {
          const double a = __bfloat162float(got[i]), r = __bfloat162float(first[i]);
          diff = std::fmax(diff, std::isnan(a) ? 1e30 : std::fabs(a - r) / (1 + std::fabs(r)));
        }
        float best = 1e9;
        for (int round = 0; round < 3; ++round)
          best = std::fmin(best, kernel_time_ms(launch));
        const double fl = floor_ms * double(n) / double(total);
        std::printf("%-4s %5lld x %4lld  slots %d (%d used%s)  tpr %3lld  %.4f ms  %5.1f %% of floor  diff %.2g\n",
                    graph, (long long)rows, (long long)R, slots, vpt,
                    full ? ", FULL" : full3 ? ", 3-slot FULL" : "",
                    (long long)tpr, best, 100 * fl / best, diff);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
