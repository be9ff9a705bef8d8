// Loop-kernel variants (experiment, not product code): the generated loop
// kernels of layer norm and softmax (gen_*.cuh, kiln-opt --emit=cuda) beside
// hand variants of the same structure, vec path only.
#include "gen_ln.cuh"
#include "gen_sm.cuh"
#include "gen_ln2.cuh"
#include <cstdio>
#include <vector>
#include <algorithm>
#include <string>
#include <cmath>
#include <cstdlib>
#include <functional>

using V4 = kiln::gen::Vec<float, 4>;

enum Hint { H_NONE = 0, H_CS = 1, H_EL = 2 };

__device__ __forceinline__ V4 ld_el(const float *p, uint64_t pol) {
  V4 r;
  asm volatile("ld.global.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
               : "=f"(r.v[0]), "=f"(r.v[1]), "=f"(r.v[2]), "=f"(r.v[3]) : "l"(p), "l"(pol));
  return r;
}
__device__ __forceinline__ V4 ld_ef(const float *p) {
  V4 r;
  asm volatile("ld.global.L1::evict_first.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(r.v[0]), "=f"(r.v[1]), "=f"(r.v[2]), "=f"(r.v[3]) : "l"(p));
  return r;
}
__device__ __forceinline__ V4 ld_cs(const float *p) {
  float4 f = __ldcs(reinterpret_cast<const float4 *>(p));
  V4 r; r.v[0] = f.x; r.v[1] = f.y; r.v[2] = f.z; r.v[3] = f.w; return r;
}
__device__ __forceinline__ void st_cs(float *p, const V4 &y) {
  __stcs(reinterpret_cast<float4 *>(p), make_float4(y.v[0], y.v[1], y.v[2], y.v[3]));
}
__device__ __forceinline__ V4 ld_plain(const float *p) { return *reinterpret_cast<const V4 *>(p); }

template <int HINT> __device__ __forceinline__ V4 ld_reduce(const float *p, uint64_t pol) {
  if constexpr (HINT == H_EL) return ld_el(p, pol);
  else return ld_plain(p);
}
template <int HINT> __device__ __forceinline__ V4 ld_final(const float *p) {
  if constexpr (HINT == H_CS) return ld_cs(p);
  else if constexpr (HINT == H_EL) return ld_ef(p);
  else return ld_plain(p);
}
template <int HINT> __device__ __forceinline__ void st_final(float *p, const V4 &y) {
  if constexpr (HINT != H_NONE) st_cs(p, y);
  else kiln::gen::vec_store(p, y);
}

struct Sum { __device__ static float combine(float a, float b) { return a + b; } };
struct Max { __device__ static float combine(float a, float b) { return fmaxf(a, b); } };

template <class Op> __device__ __forceinline__ float block_reduce(float v, float *smem) {
  for (int m = 16; m > 0; m /= 2) v = Op::combine(v, __shfl_xor_sync(~0u, v, m));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = smem[lane & (nw - 1)];
  for (int m = 16; m > 0; m /= 2) if (m < nw) v = Op::combine(v, __shfl_xor_sync(~0u, v, m));
  return v;
}

// (n, mean, m2) combined by Chan et al.
struct Wel { float n, mean, m2; };
__device__ __forceinline__ Wel wcombine(Wel a, Wel b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float d = b.mean - a.mean, f = b.n / n;
  return {n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f};
}
__device__ __forceinline__ Wel wshfl(Wel a, int m) {
  return {__shfl_xor_sync(~0u, a.n, m), __shfl_xor_sync(~0u, a.mean, m), __shfl_xor_sync(~0u, a.m2, m)};
}
__device__ __forceinline__ Wel block_wel(Wel v, float *smem) {
  for (int m = 16; m > 0; m /= 2) v = wcombine(v, wshfl(v, m));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) { smem[warp] = v.n; smem[32 + warp] = v.mean; smem[64 + warp] = v.m2; }
  __syncthreads();
  const int l = lane & (nw - 1);
  v = {smem[l], smem[32 + l], smem[64 + l]};
  for (int m = 16; m > 0; m /= 2) if (m < nw) v = wcombine(v, wshfl(v, m));
  return v;
}
// (max, sum of exp(x - max))
struct Osm { float m, s; };
__device__ __forceinline__ Osm ocombine(Osm a, Osm b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}
__device__ __forceinline__ Osm block_osm(Osm v, float *smem) {
  for (int m = 16; m > 0; m /= 2) v = ocombine(v, Osm{__shfl_xor_sync(~0u, v.m, m), __shfl_xor_sync(~0u, v.s, m)});
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) { smem[warp] = v.m; smem[32 + warp] = v.s; }
  __syncthreads();
  const int l = lane & (nw - 1);
  v = {smem[l], smem[32 + l]};
  for (int m = 16; m > 0; m /= 2) if (m < nw) v = ocombine(v, Osm{__shfl_xor_sync(~0u, v.m, m), __shfl_xor_sync(~0u, v.s, m)});
  return v;
}

// Layer norm, a block per row. WEL: two reads (chunked Welford), else three
// (mean, centred squares, write). NR tiles in flight in reading passes, NW in
// the writing pass. 32-bit offsets within the row (R < 2^31).
template <int T, int NR, int NW, int HINT, bool WEL>
__global__ __launch_bounds__(T) void ln_var(int64_t rows, int R, const float *__restrict__ x,
                                            const float *__restrict__ w, const float *__restrict__ b,
                                            float *__restrict__ y, float eps) {
  __shared__ float smem[96];
  const int tile = T * 4, tiles = (R + tile - 1) / tile, lane = threadIdx.x;
  uint64_t pol = 0;
  if constexpr (HINT == H_EL) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * R;
    float *yr = y + row * R;
    float mean, rstd;
    if constexpr (WEL) {
      Wel acc{0.f, 0.f, 0.f};
      for (int t = 0; t < tiles; t += NR) {
        V4 v[NR];
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R) v[u] = ld_reduce<HINT>(xr + e, pol);
        }
        float s = 0.f, c = 0.f;
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R) {
#pragma unroll
            for (int j = 0; j < 4; ++j) s += v[u].v[j];
            c += 4.f;
          }
        }
        if (c > 0.f) {
          const float cm = s / c;
          float m2 = 0.f;
#pragma unroll
          for (int u = 0; u < NR; ++u) {
            const int e = (t + u) * tile + lane * 4;
            if (t + u < tiles && e < R) {
#pragma unroll
              for (int j = 0; j < 4; ++j) { const float d = v[u].v[j] - cm; m2 += d * d; }
            }
          }
          acc = wcombine(acc, Wel{c, cm, m2});
        }
      }
      acc = block_wel(acc, smem);
      mean = acc.mean;
      rstd = rsqrtf(acc.m2 / float(R) + eps);
    } else {
      float s = 0.f;
      for (int t = 0; t < tiles; t += NR) {
        V4 v[NR];
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R) v[u] = ld_reduce<HINT>(xr + e, pol);
        }
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R)
#pragma unroll
            for (int j = 0; j < 4; ++j) s += v[u].v[j];
        }
      }
      mean = block_reduce<Sum>(s, smem) / float(R);
      float q = 0.f;
      for (int t = 0; t < tiles; t += NR) {
        V4 v[NR];
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (tiles - 1 - (t + u)) * tile + lane * 4;
          if (t + u < tiles && e < R) v[u] = ld_reduce<HINT>(xr + e, pol);
        }
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (tiles - 1 - (t + u)) * tile + lane * 4;
          if (t + u < tiles && e < R)
#pragma unroll
            for (int j = 0; j < 4; ++j) { const float d = v[u].v[j] - mean; q += d * d; }
        }
      }
      rstd = rsqrtf(block_reduce<Sum>(q, smem) / float(R) + eps);
    }
    // the writing pass, in the direction opposite to the last read
    const bool back = WEL;
    for (int t = 0; t < tiles; t += NW) {
      V4 v[NW], wv[NW], bv[NW];
#pragma unroll
      for (int u = 0; u < NW; ++u) {
        const int tt = back ? tiles - 1 - (t + u) : t + u;
        const int e = tt * tile + lane * 4;
        if (t + u < tiles && e < R) {
          v[u] = ld_final<HINT>(xr + e);
          wv[u] = ld_plain(w + e);
          bv[u] = ld_plain(b + e);
        }
      }
#pragma unroll
      for (int u = 0; u < NW; ++u) {
        const int tt = back ? tiles - 1 - (t + u) : t + u;
        const int e = tt * tile + lane * 4;
        if (t + u < tiles && e < R) {
          V4 o;
#pragma unroll
          for (int j = 0; j < 4; ++j) o.v[j] = (v[u].v[j] - mean) * rstd * wv[u].v[j] + bv[u].v[j];
          st_final<HINT>(yr + e, o);
        }
      }
    }
  }
}

#define EXPF(x) (ACC ? expf(x) : __expf(x))
// Softmax, a block per row. ONLINE: two reads ((max, sum) per chunk), else three.
template <int T, int NR, int NW, int HINT, bool ONLINE, bool ACC = false>
__global__ __launch_bounds__(T) void sm_var(int64_t rows, int R, const float *__restrict__ x,
                                            float *__restrict__ y) {
  __shared__ float smem[96];
  const int tile = T * 4, tiles = (R + tile - 1) / tile, lane = threadIdx.x;
  uint64_t pol = 0;
  if constexpr (HINT == H_EL) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * R;
    float *yr = y + row * R;
    float mx, rs;
    if constexpr (ONLINE) {
      Osm acc{-INFINITY, 0.f};
      for (int t = 0; t < tiles; t += NR) {
        V4 v[NR];
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R) v[u] = ld_reduce<HINT>(xr + e, pol);
        }
        float cm = -INFINITY;
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R)
#pragma unroll
            for (int j = 0; j < 4; ++j) cm = fmaxf(cm, v[u].v[j]);
        }
        const float m = fmaxf(acc.m, cm);
        float s = 0.f;
        if (m != -INFINITY) {
#pragma unroll
          for (int u = 0; u < NR; ++u) {
            const int e = (t + u) * tile + lane * 4;
            if (t + u < tiles && e < R)
#pragma unroll
              for (int j = 0; j < 4; ++j) s += EXPF(v[u].v[j] - m);
          }
          acc = {m, acc.s * EXPF(acc.m - m) + s};
        }
      }
      acc = block_osm(acc, smem);
      mx = acc.m;
      rs = 1.f / acc.s;
    } else {
      float m = -INFINITY;
      for (int t = 0; t < tiles; t += NR) {
        V4 v[NR];
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R) v[u] = ld_reduce<HINT>(xr + e, pol);
        }
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (t + u) * tile + lane * 4;
          if (t + u < tiles && e < R)
#pragma unroll
            for (int j = 0; j < 4; ++j) m = fmaxf(m, v[u].v[j]);
        }
      }
      mx = block_reduce<Max>(m, smem);
      float s = 0.f;
      for (int t = 0; t < tiles; t += NR) {
        V4 v[NR];
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (tiles - 1 - (t + u)) * tile + lane * 4;
          if (t + u < tiles && e < R) v[u] = ld_reduce<HINT>(xr + e, pol);
        }
#pragma unroll
        for (int u = 0; u < NR; ++u) {
          const int e = (tiles - 1 - (t + u)) * tile + lane * 4;
          if (t + u < tiles && e < R)
#pragma unroll
            for (int j = 0; j < 4; ++j) s += EXPF(v[u].v[j] - mx);
        }
      }
      rs = 1.f / block_reduce<Sum>(s, smem);
    }
    const bool back = ONLINE;
    for (int t = 0; t < tiles; t += NW) {
      V4 v[NW];
#pragma unroll
      for (int u = 0; u < NW; ++u) {
        const int tt = back ? tiles - 1 - (t + u) : t + u;
        const int e = tt * tile + lane * 4;
        if (t + u < tiles && e < R) v[u] = ld_final<HINT>(xr + e);
      }
#pragma unroll
      for (int u = 0; u < NW; ++u) {
        const int tt = back ? tiles - 1 - (t + u) : t + u;
        const int e = tt * tile + lane * 4;
        if (t + u < tiles && e < R) {
          V4 o;
#pragma unroll
          for (int j = 0; j < 4; ++j) o.v[j] = EXPF(v[u].v[j] - mx) * rs;
          st_final<HINT>(yr + e, o);
        }
      }
    }
  }
}

// ---- harness ----
static int g_sms;
static float time_ms(const std::function<void()> &fn) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) fn();
  std::vector<float> ts;
  for (int r = 0; r < 30; ++r) {
    cudaEventRecord(a);
    for (int i = 0; i < 20; ++i) fn();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms / 20);
  }
  std::sort(ts.begin(), ts.end());
  cudaEventDestroy(a); cudaEventDestroy(b);
  return ts[ts.size() / 2];
}
template <class K> static int regs_of(K k) { cudaFuncAttributes at; cudaFuncGetAttributes(&at, k); return at.numRegs; }

struct Case { const char *op; int64_t rows; int R; };

int main(int argc, char **argv) {
  cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  std::printf("# %s, %d SMs\n", p.name, g_sms);
  std::vector<Case> cases = {{"ln", 1048, 32000}, {"ln", 4096, 16384}, {"ln", 264, 16000}, {"ln", 128, 12288},
                             {"sm", 1048, 32000}, {"sm", 4096, 16384}, {"sm", 264, 16000}, {"sm", 128, 12288}};
  for (Case c : cases) {
    const int64_t n = c.rows * c.R;
    float *x, *w, *b, *y, *yref;
    cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMalloc(&yref, n * 4);
    cudaMalloc(&w, c.R * 4); cudaMalloc(&b, c.R * 4);
    std::vector<float> h(n);
    uint64_t s = 12345;
    const bool normal = getenv("NORMAL") != nullptr;
    for (auto &v : h) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const float u1 = (float((s >> 40) & 0xffffff) + 1.f) / 16777217.f;
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const float u2 = float((s >> 40) & 0xffffff) / 16777216.f;
      v = normal ? sqrtf(-2.f * logf(u1)) * cosf(6.2831853f * u2) : u1 * 4.f - 1.5f;
    }
    cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice);
    std::vector<float> hw(c.R), hb(c.R);
    for (int i = 0; i < c.R; ++i) { hw[i] = 1.f + 0.001f * (i % 97); hb[i] = 0.01f * (i % 13); }
    cudaMemcpy(w, hw.data(), c.R * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), c.R * 4, cudaMemcpyHostToDevice);
    kiln::RowSpace sp; sp.outer = c.rows; sp.R = c.R; sp.inner = 1; sp.rows = c.rows; sp.tpr = 512; sp.vec = 1;
    const bool ln = std::string(c.op) == "ln";
    const double bytes = 8.0 * n;
    auto grid_for = [&](int per_sm) { return unsigned(std::min<int64_t>(c.rows, int64_t(g_sms) * per_sm)); };
    // baseline: the generated loop kernel
    std::function<void()> base;
    if (ln) {
      kiln::RowStrides<4> st{};
      for (int o = 0; o < 4; ++o) { st.s[o][0] = o == 0 || o == 1 ? c.R : 0; st.s[o][1] = 1; st.s[o][2] = 0; }
      base = [=] { __kiln_layer_norm_k0_f32_loop<<<grid_for(8), 512>>>(sp, st, x, w, b, yref); };
    } else {
      kiln::RowStrides<2> st{};
      for (int o = 0; o < 2; ++o) { st.s[o][0] = c.R; st.s[o][1] = 1; st.s[o][2] = 0; }
      base = [=] { __kiln_softmax_k0_f32_loop<<<grid_for(8), 512>>>(sp, st, x, yref); };
    }
    base();
    cudaDeviceSynchronize();
    std::vector<float> hr(n), hy(n);
    cudaMemcpy(hr.data(), yref, n * 4, cudaMemcpyDeviceToHost);
    const float tb = time_ms(base);
    std::printf("%s %lldx%d base: %.4f ms (%.0f GB/s)\n", c.op, (long long)c.rows, c.R, tb, bytes / tb / 1e6);
    auto run = [&](const char *name, int regs, int threads, const std::function<void(unsigned)> &k) {
      for (int per : {8}) {
        const unsigned grid = grid_for(per);
        cudaMemset(y, 0xff, n * 4);
        k(grid);
        cudaError_t err = cudaDeviceSynchronize();
        cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost);
        double md = 0;
        for (int64_t i = 0; i < n; ++i) md = std::max(md, double(std::fabs(hy[i] - hr[i])));
        const float t = time_ms([&] { k(grid); });
        std::printf("%s %lldx%d %-28s T=%4d regs=%3d grid/sm=%d: %.4f ms  %.2fx base  diff=%.2g %s\n", c.op,
                    (long long)c.rows, c.R, name, threads, regs, per, t, tb / t, md,
                    err ? cudaGetErrorString(err) : "");
      }
    };
#define LN(T, NR, NW, H, W)                                                                               \
  run("ln T" #T " NR" #NR " NW" #NW " " #H " wel" #W, regs_of(ln_var<T, NR, NW, H, W>), T,                  \
      [&](unsigned g) { ln_var<T, NR, NW, H, W><<<g, T>>>(c.rows, c.R, x, w, b, y, 1e-5f); });
#define SMA(T, NR, NW, H, O)                                                                               \
  run("smACC T" #T " NR" #NR " NW" #NW " " #H " onl" #O, regs_of(sm_var<T, NR, NW, H, O, true>), T,                  \
      [&](unsigned g) { sm_var<T, NR, NW, H, O, true><<<g, T>>>(c.rows, c.R, x, y); });
#define SM(T, NR, NW, H, O)                                                                               \
  run("sm T" #T " NR" #NR " NW" #NW " " #H " onl" #O, regs_of(sm_var<T, NR, NW, H, O>), T,                  \
      [&](unsigned g) { sm_var<T, NR, NW, H, O><<<g, T>>>(c.rows, c.R, x, y); });
    if (ln) {
      {
        kiln::RowStrides<4> st{};
        for (int o = 0; o < 4; ++o) { st.s[o][0] = o == 0 || o == 1 ? c.R : 0; st.s[o][1] = 1; st.s[o][2] = 0; }
        run("gen ln lb(512,2)", regs_of(__lb2_layer_norm_k0_f32_loop), 512,
            [&](unsigned g) { __lb2_layer_norm_k0_f32_loop<<<g, 512>>>(sp, st, x, w, b, y); });
      }
      LN(512, 4, 2, H_EL, true)
    }
    cudaFree(x); cudaFree(w); cudaFree(b); cudaFree(y); cudaFree(yref);
  }
}
