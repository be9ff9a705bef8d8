// Layer norm over 16384x4096 f32 rows held in registers: Kiln's generated
// rows4full kernel against hand-made variants of its reductions, to see
// what the codegen should do before changing it (issue 14). Build:
//   kiln-opt --pipeline --emit=cuda --dtypes=f32 ln.kir > kiln_ln.cu
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include -I <dir of kiln_ln.cu>
//        bench/experiments/ln_rows_variants.cu -o ln_rows_variants
// Every variant: 256 threads a row (4 slots of 4 floats a thread), rows
// taken grid-stride as Kiln's launch does.
//   two:    two block reductions (mean, then centred squares), as Kiln's
//   two3:   the same, the second reduction in its own smem (one sync less)
//   mom:    one block reduction of kiln::scalar::MomentAcc (Chan's merge,
//           a division a step) over each thread's batch moments
//   lean:   one block reduction of (mean, m2): every thread holds as many
//           elements, so each step's counts are known (no division)
//   leanwb: lean, the weight and bias loaded with x
#include "kernel_time.cuh"
#include "kiln_ln.cu"
#ifdef KILN_RR2
// kiln::gen::row_reduce with its cross-warp stage's shuffles unconditional
// (a select instead of `if (m < nw)`, as its warp stage does): with tpr a
// run-time value the branches made nvcc wrap each shuffle in divergence
// handling (WARPSYNC, BSSY/BSYNC).
template <class Op, class A>
__device__ __forceinline__ A row_reduce2(A v, int tpr, A *smem) {
  const int width = tpr < 32 ? tpr : 32;
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    const A other = kiln::gen::shfl_xor(v, m);
    v = m < width ? Op::combine(v, other) : v;
  }
  if (tpr <= 32)
    return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = tpr / 32;
  __syncthreads();
  if (lane == 0)
    smem[warp] = v;
  __syncthreads();
  v = smem[lane & (nw - 1)];
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    const A other = kiln::gen::shfl_xor(v, m);
    v = m < nw ? Op::combine(v, other) : v;
  }
  return v;
}
#include "kiln_ln3.cu" // kiln_ln.cu with row_reduce2
#include "kiln_ln4.cu" // kiln_ln.cu with tpr = 256 a constant
#endif
#ifdef KILN_LN2
#include "kiln_ln2.cu" // the same graph from a second plugin build
#endif
#ifdef KILN_RE
#include "kiln_ln5.cu" // the plugin with the re-reading rows kernel (rowsre)
#include "kiln_ln6.cu" // the same, tpr a constant
#include "kiln_ln7.cu" // the committed plugin: rowsre512
#endif
#ifdef KILN_NOLOOP
#include "k1g.cu" // kiln rows4full, the grid-stride row loop taken out
#include "k2g.cu" // kiln2 rows4full, the same
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {
constexpr int C = 4096, TPR = 256, SL = 4, V = 4, NW = TPR / 32;
constexpr float EPS = 1e-5f;
using kiln::gen::Vec;

struct Lean {
  float mean, m2;
};

// HINT bits: 1 x loaded ld.global.cs, 2 y stored st.global.cs, 4 w and b
// loaded with L2 evict_last. MINB: __launch_bounds__' blocks a multiprocessor.
template <int MODE, int WB = 0, int HINT = 0, int MINB = 1>
__global__ void __launch_bounds__(TPR, MINB)
ln_variant(int64_t rows, const float *__restrict__ x, const float *__restrict__ w,
           const float *__restrict__ b, float *__restrict__ y) {
  __shared__ float smem[4 * NW];
  __shared__ kiln::scalar::MomentAcc<float> msmem[NW];
  __shared__ Lean lsmem[NW];
  const int lane = threadIdx.x, wl = lane & 31, warp = lane >> 5;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * C;
    Vec<float, V> c[SL], wv[SL], bv[SL];
#pragma unroll
    for (int k = 0; k < SL; ++k)
      c[k] = HINT & 1 ? kiln::gen::vec_load_last<V>(xr + (lane + k * TPR) * V)
                      : kiln::gen::vec_load<V>(xr + (lane + k * TPR) * V);
    if (MODE == 4 || WB == 1) {
      uint64_t keep = 0;
      if (HINT & 4)
        keep = kiln::gen::l2_evict_last();
#pragma unroll
      for (int k = 0; k < SL; ++k) {
        if (HINT & 4) {
          wv[k] = kiln::gen::vec_load_keep<V>(w + (lane + k * TPR) * V, keep);
          bv[k] = kiln::gen::vec_load_keep<V>(b + (lane + k * TPR) * V, keep);
        } else {
          wv[k] = kiln::gen::vec_load<V>(w + (lane + k * TPR) * V);
          bv[k] = kiln::gen::vec_load<V>(b + (lane + k * TPR) * V);
        }
      }
    }
    if (WB == 2) { // into L1: the writing pass's loads then hit it
#pragma unroll
      for (int k = 0; k < SL; ++k) {
        asm volatile("prefetch.global.L1 [%0];" ::"l"(w + (lane + k * TPR) * V));
        asm volatile("prefetch.global.L1 [%0];" ::"l"(b + (lane + k * TPR) * V));
      }
    }
    float mean, rstd;
    if (MODE == 0 || MODE == 1) {
      float s = 0;
#pragma unroll
      for (int k = 0; k < SL; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j)
          s += c[k].v[j];
      s = kiln::gen::row_reduce<kiln::gen::red_sum>(s, TPR, smem);
      mean = s / float(C);
      float q = 0;
#pragma unroll
      for (int k = 0; k < SL; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float d = c[k].v[j] - mean;
          q += d * d;
        }
      if (MODE == 0) {
        q = kiln::gen::row_reduce<kiln::gen::red_sum>(q, TPR, smem);
      } else {
#pragma unroll
        for (int m = 16; m > 0; m /= 2)
          q += __shfl_xor_sync(0xffffffffu, q, m);
        if (wl == 0)
          smem[NW + warp] = q; // not the first reduction's slots: no sync before
        __syncthreads();
        q = smem[NW + (wl & (NW - 1))];
#pragma unroll
        for (int m = NW / 2; m > 0; m /= 2)
          q += __shfl_xor_sync(0xffffffffu, q, m);
      }
      rstd = rsqrtf(q / float(C) + EPS);
    } else if (MODE == 2) {
      float s = 0;
#pragma unroll
      for (int k = 0; k < SL; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j)
          s += c[k].v[j];
      const float inv = __fdividef(1.0f, float(SL * V));
      const float cm = s * inv;
      float cr = 0, cq = 0;
#pragma unroll
      for (int k = 0; k < SL; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float d = c[k].v[j] - cm;
          cr += d;
          cq += d * d;
        }
      kiln::scalar::MomentAcc<float> m{cm, cr * inv, cq - cr * cr * inv, float(SL * V)};
      m = kiln::gen::row_reduce<kiln::gen::red_sum_sq_dev>(m, TPR, msmem);
      mean = m.shift + m.mean;
      rstd = rsqrtf(m.m2 / float(C) + EPS);
    } else {
      float s = 0;
#pragma unroll
      for (int k = 0; k < SL; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j)
          s += c[k].v[j];
      Lean l;
      l.mean = s * (1.0f / float(SL * V));
      l.m2 = 0;
#pragma unroll
      for (int k = 0; k < SL; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float d = c[k].v[j] - l.mean;
          l.m2 += d * d;
        }
      // Each side of a step holds n elements: mean the average, m2 + d^2 n / 2.
      float n = float(SL * V);
#pragma unroll
      for (int m = 1; m < 32; m *= 2) {
        const float om = __shfl_xor_sync(0xffffffffu, l.mean, m);
        const float oq = __shfl_xor_sync(0xffffffffu, l.m2, m);
        const float d = om - l.mean;
        l.m2 = l.m2 + oq + d * d * (0.5f * n);
        l.mean = 0.5f * (l.mean + om);
        n *= 2;
      }
      __syncthreads(); // the previous row's reads of lsmem
      if (wl == 0)
        lsmem[warp] = l;
      __syncthreads();
      l = lsmem[wl & (NW - 1)];
#pragma unroll
      for (int m = 1; m < NW; m *= 2) {
        const float om = __shfl_xor_sync(0xffffffffu, l.mean, m);
        const float oq = __shfl_xor_sync(0xffffffffu, l.m2, m);
        const float d = om - l.mean;
        l.m2 = l.m2 + oq + d * d * (0.5f * n);
        l.mean = 0.5f * (l.mean + om);
        n *= 2;
      }
      mean = l.mean;
      rstd = rsqrtf(l.m2 / float(C) + EPS);
    }
    float *yr = y + row * C;
#pragma unroll
    for (int k = 0; k < SL; ++k) {
      const int e = (lane + k * TPR) * V;
      Vec<float, V> wk, bk, o;
      if (MODE == 4 || WB == 1) {
        wk = wv[k];
        bk = bv[k];
      } else {
        wk = kiln::gen::vec_load<V>(w + e);
        bk = kiln::gen::vec_load<V>(b + e);
      }
#pragma unroll
      for (int j = 0; j < V; ++j)
        o.v[j] = (c[k].v[j] - mean) * rstd * wk.v[j] + bk.v[j];
      if (HINT & 2)
        kiln::gen::vec_store_stream(yr + e, o);
      else
        kiln::gen::vec_store(yr + e, o);
    }
  }
}


// Triton's shape of it (triton_red_fused_native_layer_norm: a row a block of
// 512, 32 registers): each thread's 8 elements' moments, one block merge of
// (mean, m2), then the writing pass re-reads x (RELOAD, from L2) or keeps it.
template <int RELOAD, int T = 512>
__global__ void __launch_bounds__(T)
ln_tri(int64_t rows, const float *__restrict__ x, const float *__restrict__ w,
       const float *__restrict__ b, float *__restrict__ y) {
  constexpr int S = C / (T * V), W = T / 32;
  __shared__ Lean lsmem[W];
  const int lane = threadIdx.x, wl = lane & 31, warp = lane >> 5;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * C;
    Vec<float, V> c[S];
    const uint64_t keep = kiln::gen::l2_evict_last();
#pragma unroll
    for (int k = 0; k < S; ++k)
      c[k] = RELOAD ? kiln::gen::vec_load_keep<V>(xr + (lane + k * T) * V, keep)
                    : kiln::gen::vec_load<V>(xr + (lane + k * T) * V);
    float s = 0;
#pragma unroll
    for (int k = 0; k < S; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j)
        s += c[k].v[j];
    Lean l;
    l.mean = s * (1.0f / float(S * V));
    l.m2 = 0;
#pragma unroll
    for (int k = 0; k < S; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float d = c[k].v[j] - l.mean;
        l.m2 += d * d;
      }
    float n = float(S * V);
#pragma unroll
    for (int m = 1; m < 32; m *= 2) {
      const float om = __shfl_xor_sync(0xffffffffu, l.mean, m);
      const float oq = __shfl_xor_sync(0xffffffffu, l.m2, m);
      const float d = om - l.mean;
      l.m2 = l.m2 + oq + d * d * (0.5f * n);
      l.mean = 0.5f * (l.mean + om);
      n *= 2;
    }
    __syncthreads();
    if (wl == 0)
      lsmem[warp] = l;
    __syncthreads();
    l = lsmem[wl & (W - 1)];
#pragma unroll
    for (int m = 1; m < W; m *= 2) {
      const float om = __shfl_xor_sync(0xffffffffu, l.mean, m);
      const float oq = __shfl_xor_sync(0xffffffffu, l.m2, m);
      const float d = om - l.mean;
      l.m2 = l.m2 + oq + d * d * (0.5f * n);
      l.mean = 0.5f * (l.mean + om);
      n *= 2;
    }
    const float mean = l.mean, rstd = rsqrtf(l.m2 / float(C) + EPS);
    float *yr = y + row * C;
#pragma unroll
    for (int k = 0; k < S; ++k) {
      const int e = (lane + k * T) * V;
      const Vec<float, V> xk = RELOAD ? kiln::gen::vec_load_last<V>(xr + e) : c[k];
      const Vec<float, V> wk = kiln::gen::vec_load<V>(w + e), bk = kiln::gen::vec_load<V>(b + e);
      Vec<float, V> o;
#pragma unroll
      for (int j = 0; j < V; ++j)
        o.v[j] = (xk.v[j] - mean) * rstd * wk.v[j] + bk.v[j];
      if (RELOAD)
        kiln::gen::vec_store_stream(yr + e, o);
      else
        kiln::gen::vec_store(yr + e, o);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 16384;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const size_t n = size_t(rows) * C;
  std::vector<float> hx(n), hw(C), hb(C);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (auto &v : hx) v = nd(rng) + 3.0f; // a mean away from 0
  for (auto &v : hw) v = nd(rng);
  for (auto &v : hb) v = nd(rng);
  float *x, *w, *b, *y;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&w, C * 4));
  CK(cudaMalloc(&b, C * 4));
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, hw.data(), C * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), C * 4, cudaMemcpyHostToDevice));

  kiln::RowSpace sp;
  sp.outer = rows; sp.R = C; sp.inner = 1; sp.rows = rows;
  sp.tpr = TPR; sp.vpt = SL; sp.vec = 1; sp.rpg = 1;
  kiln::RowSpace sp2 = sp; // 512 threads of 2 slots
  sp2.tpr = 512;
  sp2.vpt = 2;
  kiln::RowStrides<4> st{};
  st.s[0][0] = C; st.s[1][0] = C; // out, x
  st.s[0][1] = st.s[1][1] = st.s[2][1] = st.s[3][1] = 1;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid_kiln = int(std::min<int64_t>(rows, int64_t(sms) * 64));

  struct Variant {
    std::string name;
    std::function<void()> launch;
  };
  std::vector<Variant> vs = {
      {"kiln rows4full", [&] { __kiln_ln_k0_f32_rows4full<<<int(rows), TPR>>>(sp, st, x, w, b, y); }},
#ifdef KILN_RE
      {"kiln rowsre4", [&] { __kiln_ln5_k0_f32_rowsre4<<<int(rows), TPR>>>(sp, st, x, w, b, y); }},
      {"kiln rowsre2 512", [&] { __kiln_ln5_k0_f32_rowsre2<<<int(rows), 512>>>(sp2, st, x, w, b, y); }},
      {"kiln rowsre512", [&] { __kiln_ln7_k0_f32_rowsre512<<<int(rows), 512>>>(sp2, st, x, w, b, y); }},
      {"kiln rowsre4 tpr256", [&] { __kiln_ln6_k0_f32_rowsre4<<<int(rows), TPR>>>(sp, st, x, w, b, y); }},
      {"kiln rowsre2 tpr512", [&] { __kiln_ln6_k0_f32_rowsre2<<<int(rows), 512>>>(sp2, st, x, w, b, y); }},
#endif
#ifdef KILN_RR2
#endif
#ifdef KILN_NOLOOP
#endif
#ifdef KILN_LN2
#endif
      {"two, grid=rows", [&] { ln_variant<0><<<int(rows), TPR>>>(rows, x, w, b, y); }},
      {"twowb, grid=rows", [&] { ln_variant<0, 1><<<int(rows), TPR>>>(rows, x, w, b, y); }},
      {"tri reload", [&] { ln_tri<1><<<int(rows), 512>>>(rows, x, w, b, y); }},
      {"tri reload 256", [&] { ln_tri<1, 256><<<int(rows), 256>>>(rows, x, w, b, y); }},
  };

  // Correctness: every variant against a float64 reference on 64 rows.
  std::vector<float> hy(n);
  for (auto &v : vs) {
    CK(cudaMemset(y, 0xff, n * 4)); // NaN
    v.launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int64_t r = 0; r < rows; r += rows / 64) {
      const float *xr = &hx[size_t(r) * C];
      double s = 0, q = 0;
      for (int i = 0; i < C; ++i) s += xr[i];
      const double m = s / C;
      for (int i = 0; i < C; ++i) q += (xr[i] - m) * (xr[i] - m);
      const double rs = 1.0 / std::sqrt(q / C + EPS);
      for (int i = 0; i < C; ++i) {
        const double ref = (xr[i] - m) * rs * hw[i] + hb[i];
        const double e = std::fabs(hy[size_t(r) * C + i] - ref);
        worst = std::isnan(e) ? 1e30 : std::max(worst, e);
      }
    }
    std::printf("check %-18s max |err| vs float64 %.3g %s\n", v.name.c_str(), worst,
                worst < 1e-4 ? "ok" : "FAIL");
  }

  std::vector<std::vector<float>> med(vs.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < vs.size(); ++i) {
      med[i].push_back(kernel_time_ms(vs[i].launch));
    }
  const double floor_ms = 2.0 * n * 4 / 4.21e12 * 1e3;
  std::printf("\nlayer norm %lldx%d f32, kernel time ms (20 back-to-back / 20, median of 30), floor %.4f\n",
              (long long)rows, C, floor_ms);
  for (size_t i = 0; i < vs.size(); ++i) {
    std::printf("%-18s", vs[i].name.c_str());
    for (float m : med[i]) std::printf(" %.4f", m);
    std::printf("   median %.4f\n", median(med[i]));
  }
}
