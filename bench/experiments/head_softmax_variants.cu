// The bias + head split + softmax of bench/workloads.h (x [B, T, C] f32
// plus a bias [C], viewed [B, T, H, D], transposed to [B, H, T, D], softmax
// over D = 128), hand-written in the shape of Kiln's rows kernel (a group
// of 16 threads a row, two 16-byte slots a thread, rows walked through the
// views' outer dims by U32Div), with one thing changed at a time, to see
// which costs the instructions that leave it behind torch.compile
// (issue 14). Build:
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include \
//        bench/experiments/head_softmax_variants.cu -o head_softmax_variants
// Variants (template flags):
//   I64     offsets in 64 bits (Kiln's) or 32
//   STRIDE  rows taken grid-stride from a capped grid (Kiln's) or a grid
//           of exactly the rows' groups
//   FAST    exp by ex2.approx (Triton's f32 exp) or expf (Kiln's f32)
//   GEN     the offsets by kiln::row_bases over a RowStrides, a run-time
//           loop over the outer dims reading divisors and strides from
//           the parameters (Kiln's), or by fixed code for these three dims
// Each checked against a float64 softmax on the host; kernel time as the
// benchmarks take it (kernel_time.cuh).
#include "kernel_time.cuh"

#include <kiln/kernel_abi.h>
#ifdef KILN_GEN
// kiln-opt's kernels for the same graph (KILN_GEN=<dir> holding bh.cu,
// kiln-opt --pipeline --emit=cuda --dtypes=f32 of the graph above, and
// bh_lb3.cu / bh_lb4.cu: the same with __launch_bounds__(512, 3 or 4) and
// the prefix lb3_ / lb4_), launched as the runtime launches rows2full.
#include "bh.cu"
#include "bh_lb3.cu"
#include "bh_lb4.cu"
#include "bh_m1.cu" // the output's base from the loads' walk (one walk)
// kiln::row_bases_at with the walk over the outer dims unrolled (a guard
// per dim), so the divisors and strides are read at constant offsets
template <uint64_t Want, int N>
__device__ __forceinline__ void m3_row_bases_at(const kiln::RowSpace &sp,
                                                const kiln::RowStrides<N> &st,
                                                int64_t row, int64_t (&b)[N]) {
  if (sp.inner == 1 && st.nouter == 0) {
#pragma unroll
    for (int op = 0; op < N; ++op)
      if (Want >> op & 1)
        b[op] = row * st.s[op][0];
    return;
  }
  const int64_t o = kiln::row_outer(sp, row), i = row - o * sp.inner;
  bool walk = false;
  int lo = st.nouter;
#pragma unroll
  for (int op = 0; op < N; ++op)
    if (Want >> op & 1) {
      b[op] = i * st.s[op][2];
      if (st.walk[op]) {
        walk = true;
        lo = st.from[op] < lo ? st.from[op] : lo;
      } else {
        b[op] += o * st.s[op][0];
      }
    }
  if (!walk)
    return;
  uint32_t rest = uint32_t(o);
#pragma unroll
  for (int d = kiln::kMaxRank - 1; d >= 0; --d) {
    if (d < st.nouter && d >= lo) {
      const uint32_t q = st.outer_div[d].div(rest);
      const int64_t r = int64_t(rest - q * uint32_t(st.outer_size[d]));
#pragma unroll
      for (int op = 0; op < N; ++op)
        if ((Want >> op & 1) && st.walk[op])
          b[op] += r * st.outer_stride[op][d];
      rest = q;
    }
  }
}
#include "bh_m3.cu" // m1 with that walk
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int D = 128, TPR = 16, SLOTS = 2;

struct Args {
  const float *x, *b;
  float *out;
  int64_t rows;
  int T, H;
  kiln::U32Div divT, divH;
  int64_t sxb, sxt; // x's strides along B and T (H's is D)
  kiln::RowStrides<3> st; // out, x, b over the outer dims [B, H, T]
};

template <class Off>
__device__ __forceinline__ void offsets(const Args &a, int64_t row, Off &xo,
                                        Off &bo) {
  const uint32_t r = uint32_t(row);
  const uint32_t bh = a.divT.div(r);
  const uint32_t t = r - bh * uint32_t(a.T);
  const uint32_t b = a.divH.div(bh);
  const uint32_t h = bh - b * uint32_t(a.H);
  xo = Off(b) * Off(a.sxb) + Off(t) * Off(a.sxt) + Off(h) * D;
  bo = Off(h) * D;
}

__device__ __forceinline__ float ex(float v, bool fast) {
  if (fast) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v * 1.44269504088896341f));
    return r;
  }
  return expf(v);
}

template <bool I64, bool STRIDE, bool FAST, bool GEN>
__global__ void __launch_bounds__(512) head_softmax(const Args a) {
  using Off = std::conditional_t<I64, int64_t, int32_t>;
  const int lane = threadIdx.x & (TPR - 1);
  const int64_t groups = blockDim.x / TPR;
  const int64_t stride = STRIDE ? int64_t(gridDim.x) * groups : a.rows;
  for (int64_t row = int64_t(blockIdx.x) * groups + threadIdx.x / TPR;
       row < a.rows; row += stride) {
    Off xo, bo;
    if (GEN) {
      int64_t bases[3];
      kiln::row_bases<0x6ull>(a.st, row, 0, bases);
      xo = Off(bases[1]);
      bo = Off(bases[2]);
    } else {
      offsets(a, row, xo, bo);
    }
    float4 xv[SLOTS], bv[SLOTS];
#pragma unroll
    for (int k = 0; k < SLOTS; ++k) {
      const int e = (lane + k * TPR) * 4;
      xv[k] = *reinterpret_cast<const float4 *>(a.x + xo + e);
      bv[k] = *reinterpret_cast<const float4 *>(a.b + bo + e);
    }
    float v[SLOTS * 4], m = -INFINITY;
#pragma unroll
    for (int k = 0; k < SLOTS; ++k) {
      v[4 * k] = xv[k].x + bv[k].x;
      v[4 * k + 1] = xv[k].y + bv[k].y;
      v[4 * k + 2] = xv[k].z + bv[k].z;
      v[4 * k + 3] = xv[k].w + bv[k].w;
    }
#pragma unroll
    for (int i = 0; i < SLOTS * 4; ++i)
      m = fmaxf(m, v[i]);
#pragma unroll
    for (int o = TPR / 2; o >= 1; o /= 2)
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < SLOTS * 4; ++i) {
      v[i] = ex(v[i] - m, FAST);
      s += v[i];
    }
#pragma unroll
    for (int o = TPR / 2; o >= 1; o /= 2)
      s += __shfl_xor_sync(0xffffffffu, s, o);
    const float inv = 1.f / s;
    const Off oo = Off(row) * D;
#pragma unroll
    for (int k = 0; k < SLOTS; ++k) {
      const int e = (lane + k * TPR) * 4;
      float4 y = make_float4(v[4 * k] * inv, v[4 * k + 1] * inv,
                             v[4 * k + 2] * inv, v[4 * k + 3] * inv);
      *reinterpret_cast<float4 *>(a.out + oo + e) = y;
    }
    if (!STRIDE)
      break;
  }
}

} // namespace

int main() {
  const int B = 8, T = 1024, H = 32, C = H * D;
  const int64_t n = int64_t(B) * T * C, rows = int64_t(B) * H * T;
  std::vector<float> hx(n), hb(C);
  uint64_t s = 88172645463325252ull;
  auto rnd = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return float(int64_t(s >> 40) - (1 << 23)) / float(1 << 22);
  };
  for (auto &v : hx)
    v = rnd();
  for (auto &v : hb)
    v = rnd();
  float *x, *b, *out;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&b, C * 4));
  CK(cudaMalloc(&out, n * 4));
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), C * 4, cudaMemcpyHostToDevice));
  Args a{x, b, out, rows, T, H, kiln::U32Div(T), kiln::U32Div(H),
         int64_t(T) * C, C, {}};
  // As kiln::gen::row_operand fills it: outer dims [B, H, T], outermost
  // first; x and b walk them (b from H on), the output does not.
  {
    kiln::RowStrides<3> &st = a.st;
    std::memset(&st, 0, sizeof st);
    st.nouter = 3;
    const int64_t size[3] = {B, H, T};
    for (int d = 0; d < 3; ++d) {
      st.outer_size[d] = size[d];
      st.outer_div[d] = kiln::U32Div(uint64_t(size[d]));
    }
    const int64_t xs[3] = {int64_t(T) * C, D, C}, bs[3] = {0, D, 0};
    for (int d = 0; d < 3; ++d) {
      st.outer_stride[1][d] = xs[d];
      st.outer_stride[2][d] = bs[d];
    }
    st.s[0][0] = D; // the output: row * D
    st.s[0][1] = st.s[1][1] = st.s[2][1] = 1;
    st.walk[1] = st.walk[2] = true;
    st.from[1] = 0;
    st.from[2] = 1;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int threads = 256, groups = threads / TPR;
  // Kiln's rows launch: a block per group of rows (not capped), and the
  // capped grid the runtime used before.
  const int exact = int((rows + groups - 1) / groups);
  struct V {
    std::string name;
    std::function<void()> go;
  };
  std::vector<V> vs;
#define ADD(I, S, F, W, GRID)                                                  \
  vs.push_back({std::string(#I "," #S "," #F "," #W " grid=") + #GRID,         \
                [&] { head_softmax<I, S, F, W><<<GRID, threads>>>(a); }})
  ADD(true, true, false, true, exact);     // Kiln's shape
  ADD(true, true, false, false, exact);    // fixed walk
  ADD(true, true, false, true, sms * 8);   // capped grid, grid-stride
  ADD(false, true, false, true, exact);    // 32-bit offsets
  ADD(true, false, false, true, exact);    // no grid-stride loop
  ADD(true, true, true, true, exact);      // fast exp
  ADD(false, false, false, false, exact);  // all but the exp
  ADD(false, false, true, false, exact);   // all
#ifdef KILN_GEN
  kiln::RowSpace sp;
  sp.outer = rows, sp.R = D, sp.inner = 1, sp.rows = rows, sp.tpr = TPR,
  sp.vpt = SLOTS, sp.vec = 1, sp.rpg = 1;
  const int cap = sms * 64;
#define GEN(K, GRID)                                                           \
  vs.push_back({std::string(#K " grid=") + #GRID,                              \
                [&] { K<<<GRID, threads>>>(sp, a.st, x, b, out); }})
  GEN(__kiln_bias_heads_softmax_k0_f32_rows2full, cap);
  GEN(__kiln_bias_heads_softmax_k0_f32_rows2full, exact);
  GEN(lb3_bias_heads_softmax_k0_f32_rows2full, cap);
  GEN(lb3_bias_heads_softmax_k0_f32_rows2full, exact);
  GEN(lb4_bias_heads_softmax_k0_f32_rows2full, cap);
  GEN(lb4_bias_heads_softmax_k0_f32_rows2full, exact);
  GEN(m1_bias_heads_softmax_k0_f32_rows2full, cap);
  GEN(m1_bias_heads_softmax_k0_f32_rows2full, exact);
  GEN(m3_bias_heads_softmax_k0_f32_rows2full, cap);
  GEN(m3_bias_heads_softmax_k0_f32_rows2full, exact);
#endif
  // Check each against float64.
  std::vector<float> got(n);
  for (auto &v : vs) {
    CK(cudaMemset(out, 0xff, n * 4));
    v.go();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int64_t r = 0; r < rows; r += 97) {
      const int64_t t = r % T, h = (r / T) % H, bb = r / (int64_t(T) * H);
      const float *xr = hx.data() + bb * T * C + t * C + h * D;
      double mx = -1e300, sum = 0, e[D];
      for (int i = 0; i < D; ++i)
        mx = std::max(mx, double(xr[i]) + hb[h * D + i]);
      for (int i = 0; i < D; ++i)
        sum += e[i] = std::exp(double(xr[i]) + hb[h * D + i] - mx);
      for (int i = 0; i < D; ++i)
        worst = std::max(worst, std::fabs(got[r * D + i] - e[i] / sum));
    }
    std::printf("check %-40s max |err| %.3g%s\n", v.name.c_str(), worst,
                worst < 1e-6 ? "" : "  BAD");
  }
  std::vector<std::vector<float>> med(vs.size());
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < vs.size(); ++i)
      med[i].push_back(kernel_time_ms(vs[i].go));
  std::printf("floor (bytes at 4.21 TB/s): %.4f ms\n", 2.0 * n * 4 / 4.21e9);
  for (size_t i = 0; i < vs.size(); ++i)
    std::printf("%-40s %.4f %.4f %.4f\n", vs[i].name.c_str(), med[i][0],
                med[i][1], med[i][2]);
  return 0;
}
