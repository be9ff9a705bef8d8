// Attention for few query rows over many keys (decoding a token against a
// key/value cache), with keys and values given as the pieces of a cat along
// the key dim: kiln::detail::cuda_decode_attention (attention_impl.h).
//
// A flash-decoding split over the keys, one launch:
//
// attn_decode_kernel<T, D, R> - a CTA of 4 warps owns one (batch, key/value
//   head) and one chunk of up to 256 keys, and all R rows that read that
//   head (the G query heads of a group times the L query positions). Pass 1
//   reads the chunk's keys 16 bytes a lane (D / (16 / sizeof(T)) lanes a
//   key, the other lanes on the next keys), each piece's rows where they
//   are, and scores them against the rows' q (scale * log2(e) folded in),
//   summed across the key's lanes by a transposing reduction (N partial
//   sums in N - 1 shuffles: reduce_transposed), into shared memory. The
//   chunk's max and sum of exp2 per row come from one block reduction.
//   Pass 2 reads the values the same way and accumulates p * v per row in
//   registers, reduced across the warp's keys and the block's warps. It
//   writes the chunk's unnormalised output, max and sum (f32) to a
//   workspace. When the caller wants the cats themselves (k_out/v_out),
//   each 16 bytes read is also stored there: the cache is read once.
//
//   The last CTA of a (batch, key/value head) to finish (a count per head,
//   zeroed by a memset before the launch) merges the chunks' (max, sum,
//   output), a warp per query row, four chunks' loads in flight at once
//   (combine_row), and writes the rows, in T, at out's strides.
//
// Every key is read once from DRAM (4 loads of 16 bytes in flight per
// lane); the chunk count is chosen so the grid is at least 8 CTAs per
// multiprocessor. The softmax is the other kernels': a chunk whose scores
// are all -inf has sum 0 and takes no part, a row with no such chunk is 0,
// NaN scores are skipped by the max and propagate through exp2.
#include "attention_impl.h"
#include "cuda_util.cuh"
#include "kernel_types.h"

#include <kiln/rt.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace kiln::detail {

namespace {

constexpr const char *kFn = "kiln::gen::attention_pieces";
constexpr int kWarps = 4, kThreads = 32 * kWarps;
constexpr int kMaxChunk = 256; // keys a CTA scores (shared memory: R x this)
constexpr int kUnroll = 4;     // 16-byte loads in flight per lane
constexpr double kLog2e = 1.4426950408889634;

struct DecodeParams {
  const void *q;
  void *out;
  int64_t qs[3], os[3];           // [batch, head, row] strides; col stride 1
  const void *k[kMaxKvPieces], *v[kMaxKvPieces];
  int64_t ks[kMaxKvPieces][3], vs[kMaxKvPieces][3];
  int start[kMaxKvPieces + 1];    // the key where piece i starts; start[n] = S
  int pieces;
  void *k_out, *v_out;            // the cats, or nullptr
  int64_t kos[3], vos[3];
  int Hkv, group, L, rows;        // rows = group * L <= R
  int S, chunk, splits;
  float scale_log2;
  float *ws_o;                    // [bh][split][R][D]
  float2 *ws_ml;                  // [bh][split][R]: (max, sum)
  unsigned *done;                 // [bh]: CTAs finished (zeroed per call)
};

// 16 bytes (E elements of T) to floats.
template <class T, int E>
__device__ __forceinline__ void to_float(const uint4 &raw, float (&f)[E]) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      f[i] = __uint_as_float(w[i]);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h;
      memcpy(&h, &w[i], 4);
      const float2 x = __half22float2(h);
      f[2 * i] = x.x;
      f[2 * i + 1] = x.y;
    }
  }
}

template <class T> __device__ __forceinline__ void store_one(void *p, float x) {
  if constexpr (std::is_same_v<T, float>)
    *static_cast<float *>(p) = x;
  else if constexpr (std::is_same_v<T, bfloat16>)
    *static_cast<__nv_bfloat16 *>(p) = __float2bfloat16_rn(x);
  else
    *static_cast<__half *>(p) = __float2half_rn(x);
}

// The piece that holds key j (its row j - start[piece] there).
__device__ __forceinline__ int piece_of(const DecodeParams &p, int j) {
  int pc = 0;
#pragma unroll
  for (int i = 1; i < kMaxKvPieces; ++i)
    if (i < p.pieces && j >= p.start[i])
      pc = i;
  return pc;
}

// Row r of head bh: the chunks' outputs weighted by exp2(max_i - max)
// over the weighted sums, by one warp. Chunks whose sum is 0 (no key, or
// every score -inf) take no part; a row with none is 0. The lanes read
// the chunks' (max, sum) 32 at a time, then the outputs 4 chunks at a
// time, so the loads of many chunks are in flight together (from L2:
// other CTAs wrote them).
template <class T, int D, int R>
__device__ __forceinline__ void combine_row(const DecodeParams &p,
                                            int64_t bh, int r, int lane) {
  constexpr int PER = D / 32; // columns a lane
  constexpr int G = 4;        // chunks' outputs read at once
  const int64_t first = bh * p.splits;
  float mx = -INFINITY;
  for (int i = lane; i < p.splits; i += 32) {
    const float2 ml = __ldcg(p.ws_ml + (first + i) * R + r);
    if (ml.y != 0.f)
      mx = fmaxf(mx, ml.x);
  }
#pragma unroll
  for (int o = 16; o >= 1; o /= 2)
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float o[PER] = {}, sum = 0.f;
  for (int i0 = 0; i0 < p.splits; i0 += 32) {
    // Lane t's weight is chunk i0 + t's (0 where it takes no part).
    float w = 0.f;
    if (i0 + lane < p.splits) {
      const float2 ml = __ldcg(p.ws_ml + (first + i0 + lane) * R + r);
      if (ml.y != 0.f) {
        w = exp2_approx(ml.x - mx);
        sum = fmaf(w, ml.y, sum);
      }
    }
    const int n = min(32, p.splits - i0);
    for (int g = 0; g < n; g += G) {
      float x[G][PER];
#pragma unroll
      for (int t = 0; t < G; ++t)
#pragma unroll
        for (int c = 0; c < PER; ++c)
          x[t][c] = g + t < n ? __ldcg(p.ws_o + ((first + i0 + g + t) * R + r) * D +
                                       lane + 32 * c)
                              : 0.f;
#pragma unroll
      for (int t = 0; t < G; ++t) {
        const float wt = __shfl_sync(0xffffffffu, w, (g + t) & 31);
        if (wt != 0.f)
#pragma unroll
          for (int c = 0; c < PER; ++c)
            o[c] = fmaf(wt, x[t][c], o[c]);
      }
    }
  }
#pragma unroll
  for (int k = 16; k >= 1; k /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, k);
  const int64_t b = bh / p.Hkv, h = (bh % p.Hkv) * p.group + r / p.L,
                l = r % p.L;
  T *dst = static_cast<T *>(p.out) + b * p.os[0] + h * p.os[1] + l * p.os[2];
  const bool any = mx != -INFINITY || sum != sum; // some chunk has weight
  const float inv = any ? 1.f / sum : 0.f;
#pragma unroll
  for (int c = 0; c < PER; ++c)
    store_one<T>(dst + lane + 32 * c, any ? o[c] * inv : 0.f);
}

// How many sums a lane holds after reduce_transposed<N, LPK>.
template <int N, int LPK> constexpr int reduce_steps() {
  return N > LPK ? N / LPK : 1;
}

// Sums N values over groups of LPK lanes (sub: the lane's place in its
// group; N and LPK powers of 2). At each step (partner lane o apart, o
// from LPK / 2 down) a lane holding n > 1 values keeps one half (the upper
// if its bit o is set), sends its partner the other and adds what the
// partner sends; once a lane holds one value the steps are a plain
// all-reduce. It ends with the sums of values idx .. idx + n - 1 in
// d[0 .. n - 1] (n = reduce_steps<N, LPK>()).
template <int N, int LPK>
__device__ __forceinline__ void reduce_transposed(float (&d)[N], int sub,
                                                  int &idx) {
  int n = N;
#pragma unroll
  for (int o = LPK / 2; o >= 1; o /= 2) {
    if (n > 1) {
      const int half = n / 2;
      const bool upper = (sub & o) != 0;
#pragma unroll
      for (int i = 0; i < N / 2; ++i)
        if (i < half) {
          const float send = upper ? d[i] : d[i + half];
          const float keep = upper ? d[i + half] : d[i];
          d[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
      if (upper)
        idx += half;
      n = half;
    } else {
      d[0] += __shfl_xor_sync(0xffffffffu, d[0], o);
    }
  }
}

template <class T, int D, int R>
__global__ void __launch_bounds__(kThreads)
    attn_decode_kernel(const DecodeParams p) {
  constexpr int E = 16 / int(sizeof(T)); // elements per 16 bytes
  constexpr int LPK = D / E;              // lanes per key
  constexpr int KPW = 32 / LPK;           // keys per warp per step
  constexpr int STEP = kWarps * KPW;      // keys per CTA per step
  static_assert(LPK >= 1 && LPK <= 32 && 32 % LPK == 0, "head dim");

  __shared__ float s_p[R][kMaxChunk];
  __shared__ float s_red[kWarps][R];
  __shared__ float s_o[kWarps][R][D];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int sub = lane % LPK, kk = lane / LPK;
  const int64_t blk = blockIdx.x;
  const int split = int(blk % p.splits);
  const int64_t bh = blk / p.splits;
  const int64_t b = bh / p.Hkv;
  const int hkv = int(bh % p.Hkv);
  const int c0 = split * p.chunk;
  const int c1 = min(p.S, c0 + p.chunk);

  // This lane's E columns of each row's q, times scale * log2(e).
  float qv[R][E];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < p.rows) {
      const int64_t h = int64_t(hkv) * p.group + r / p.L, l = r % p.L;
      const T *qr = static_cast<const T *>(p.q) + b * p.qs[0] + h * p.qs[1] +
                    l * p.qs[2] + sub * E;
      to_float<T, E>(*reinterpret_cast<const uint4 *>(qr), qv[r]);
#pragma unroll
      for (int e = 0; e < E; ++e)
        qv[r][e] *= p.scale_log2;
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e)
        qv[r][e] = 0.f;
    }
  }

  // Key j's 16 bytes for this lane, from its piece (also stored into the
  // cat when the caller wants it).
  auto row_ptr = [&](const void *const *base, const int64_t (*st)[3],
                     int j) -> const uint4 * {
    const int pc = piece_of(p, j);
    const T *t = static_cast<const T *>(base[pc]) + b * st[pc][0] +
                 int64_t(hkv) * st[pc][1] + int64_t(j - p.start[pc]) * st[pc][2] +
                 sub * E;
    return reinterpret_cast<const uint4 *>(t);
  };
  auto out_ptr = [&](void *base, const int64_t *st, int j) -> uint4 * {
    T *t = static_cast<T *>(base) + b * st[0] + int64_t(hkv) * st[1] +
           int64_t(j) * st[2] + sub * E;
    return reinterpret_cast<uint4 *>(t);
  };

  // This lane's 16 bytes of keys j0, j0 + STEP, ... (kUnroll of them; 0
  // past the chunk), each also stored into the cat when it is wanted.
  auto load_rows = [&](const void *const *base, const int64_t (*st)[3],
                       void *cat, const int64_t *cst, int j0,
                       uint4 (&raw)[kUnroll]) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int j = j0 + u * STEP;
      raw[u] = j < c1 ? __ldcs(row_ptr(base, st, j)) : make_uint4(0, 0, 0, 0);
    }
    if (cat)
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int j = j0 + u * STEP;
        if (j < c1)
          __stcs(out_ptr(cat, cst, j), raw[u]);
      }
  };

  // Pass 1: the scores of the chunk's keys.
  // (The loop runs on the warp's first key, so the shuffles see every
  // lane.)
  for (int w0 = c0 + warp * KPW; w0 < c1; w0 += STEP * kUnroll) {
    const int j0 = w0 + kk;
    uint4 raw[kUnroll];
    load_rows(p.k, p.ks, p.k_out, p.kos, j0, raw);
    // Each lane's partial dot products, d[u * R + r] ...
    constexpr int N = kUnroll * R;
    float d[N];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[E];
      to_float<T, E>(raw[u], kf);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float x = 0.f;
#pragma unroll
        for (int e = 0; e < E; ++e)
          x = fmaf(qv[r][e], kf[e], x);
        d[u * R + r] = x;
      }
    }
    // ... summed over the key's LPK lanes by a transposing reduction: each
    // step halves what a lane holds (it keeps one half, its partner the
    // other, and each adds the partner's), so N sums cost N - 1 shuffles
    // where reducing each on its own costs N * log2(LPK). A lane ends with
    // the sums of indices idx .. idx + n - 1.
    int idx = 0;
    constexpr int kN = reduce_steps<N, LPK>();
    reduce_transposed<N, LPK>(d, sub, idx);
    // With fewer sums than lanes, LPK / N lanes hold each: one writes.
    constexpr int kRepeats = N >= LPK ? 1 : LPK / N;
    if (sub % kRepeats == 0)
#pragma unroll
      for (int t = 0; t < kN; ++t) {
        const int i = idx + t, u = i / R, r = i % R, j = j0 + u * STEP;
        if (j < c1)
          s_p[r][j - c0] = d[t];
      }
  }
  __syncthreads();

  // Each row's max over the chunk (0 when it saw only -inf), then p =
  // exp2(s - max) in place and the sum.
  const int n = c1 - c0;
  float m[R], l[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float x = -INFINITY;
    for (int i = threadIdx.x; i < n; i += kThreads)
      x = fmaxf(x, s_p[r][i]);
#pragma unroll
    for (int o = 16; o >= 1; o /= 2)
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    if (lane == 0)
      s_red[warp][r] = x;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float x = s_red[0][r];
#pragma unroll
    for (int w = 1; w < kWarps; ++w)
      x = fmaxf(x, s_red[w][r]);
    m[r] = x == -INFINITY ? 0.f : x;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float x = 0.f;
    for (int i = threadIdx.x; i < n; i += kThreads) {
      const float e = exp2_approx(s_p[r][i] - m[r]);
      s_p[r][i] = e;
      x += e;
    }
#pragma unroll
    for (int o = 16; o >= 1; o /= 2)
      x += __shfl_xor_sync(0xffffffffu, x, o);
    if (lane == 0)
      s_red[warp][r] = x;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float x = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      x += s_red[w][r];
    l[r] = x;
  }

  // Pass 2: sum of p * v over the chunk's keys, E columns a lane.
  float acc[R][E];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int e = 0; e < E; ++e)
      acc[r][e] = 0.f;
  for (int w0 = c0 + warp * KPW; w0 < c1; w0 += STEP * kUnroll) {
    const int j0 = w0 + kk;
    uint4 raw[kUnroll];
    load_rows(p.v, p.vs, p.v_out, p.vos, j0, raw);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int j = j0 + u * STEP;
      if (j >= c1)
        continue;
      float vf[E];
      to_float<T, E>(raw[u], vf);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float pr = s_p[r][j - c0];
#pragma unroll
        for (int e = 0; e < E; ++e)
          acc[r][e] = fmaf(pr, vf[e], acc[r][e]);
      }
    }
  }
  // Across the warp's keys (lanes LPK apart), then the block's warps.
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int e = 0; e < E; ++e) {
      float x = acc[r][e];
#pragma unroll
      for (int o = LPK; o < 32; o *= 2)
        x += __shfl_xor_sync(0xffffffffu, x, o);
      acc[r][e] = x;
    }
  if (kk == 0)
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int e = 0; e < E; ++e)
        s_o[warp][r][sub * E + e] = acc[r][e];
  __syncthreads();
  const int64_t part = (bh * p.splits + split) * R;
  for (int i = threadIdx.x; i < R * D; i += kThreads) {
    const int r = i / D, d = i % D;
    float x = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      x += s_o[w][r][d];
    p.ws_o[(part + r) * D + d] = x;
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (threadIdx.x == r)
      p.ws_ml[part + r] = make_float2(m[r], l[r]);

  // The head's last CTA to finish merges every chunk's result (the
  // partials are fenced before the count, read from L2 after it).
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(p.done + bh, 1u) == unsigned(p.splits) - 1;
  __syncthreads();
  if (!last)
    return;
  __threadfence();
  for (int r = warp; r < p.rows; r += kWarps)
    combine_row<T, D, R>(p, bh, r, lane);
}

template <class T, int D, int R>
void launch_decode(const DecodeArgs &a, DecodeParams &p, int device) {
  // Workspace: the chunks' outputs, their (max, sum), a count per head.
  const int64_t bh = int64_t(a.B) * a.Hkv, parts = bh * p.splits * R;
  Tensor ws = kiln::empty({parts * (D + 2) + bh}, DType::f32, a.device);
  p.ws_o = ws.data<float>();
  p.ws_ml = reinterpret_cast<float2 *>(p.ws_o + parts * D);
  p.done = reinterpret_cast<unsigned *>(p.ws_o + parts * (D + 2));
  cudaStream_t st = stream_of(device);
  cuda_check(cudaMemsetAsync(p.done, 0, size_t(bh) * sizeof(unsigned), st), kFn,
             "cudaMemsetAsync");
  const int64_t blocks = bh * p.splits;
  dim3 grid{unsigned(blocks)}, block{unsigned(kThreads)};
  attn_decode_kernel<T, D, R><<<grid, block, 0, st>>>(p);
  after_launch("scaled_dot_product_attention", "decode", a.dtype,
               blocks * kThreads, grid, block, device);
}

template <class T, int D>
void launch_rows(const DecodeArgs &a, DecodeParams &p, int device) {
  if (p.rows <= 1)
    launch_decode<T, D, 1>(a, p, device);
  else if (p.rows <= 2)
    launch_decode<T, D, 2>(a, p, device);
  else if (p.rows <= 4)
    launch_decode<T, D, 4>(a, p, device);
  else
    launch_decode<T, D, 8>(a, p, device);
}

template <class T>
void launch_head_dim(const DecodeArgs &a, DecodeParams &p, int device) {
  if (a.D == 64)
    launch_rows<T, 64>(a, p, device);
  else
    launch_rows<T, 128>(a, p, device);
}

} // namespace

bool cuda_decode_attention(const DecodeArgs &a) {
  if (a.dtype != DType::f32 && a.dtype != DType::bf16 && a.dtype != DType::f16)
    return false;
  if (a.D != a.Dv || (a.D != 64 && a.D != 128) || a.Hkv < 1 ||
      a.Hq % a.Hkv != 0 || a.pieces < 1 || a.pieces > kMaxKvPieces)
    return false;
  const int64_t rows = (a.Hq / a.Hkv) * a.L;
  if (rows < 1 || rows > kMaxDecodeRows || a.S > INT32_MAX || a.B < 1)
    return false;
  const int e = 16 / element_size(a.dtype);
  if (!rows_aligned16(a.q, a.q_stride, a.B, a.Hq, a.L, e) ||
      !rows_aligned16(a.out, a.o_stride, a.B, a.Hq, a.L, e))
    return false;
  for (int i = 0; i < a.pieces; ++i) {
    const int64_t len = a.start[i + 1] - a.start[i];
    if (!rows_aligned16(a.k[i], a.k_stride[i], a.B, a.Hkv, len, e) ||
        !rows_aligned16(a.v[i], a.v_stride[i], a.B, a.Hkv, len, e))
      return false;
  }
  if ((a.k_out && !rows_aligned16(a.k_out, a.ko_stride, a.B, a.Hkv, a.S, e)) ||
      (a.v_out && !rows_aligned16(a.v_out, a.vo_stride, a.B, a.Hkv, a.S, e)))
    return false;

  const int device = a.device.index;
  set_device(device, kFn);
  DecodeParams p{};
  p.q = a.q, p.out = a.out;
  for (int d = 0; d < 3; ++d) {
    p.qs[d] = a.q_stride[d], p.os[d] = a.o_stride[d];
    p.kos[d] = a.ko_stride[d], p.vos[d] = a.vo_stride[d];
  }
  p.pieces = a.pieces;
  for (int i = 0; i < a.pieces; ++i) {
    p.k[i] = a.k[i], p.v[i] = a.v[i];
    for (int d = 0; d < 3; ++d)
      p.ks[i][d] = a.k_stride[i][d], p.vs[i][d] = a.v_stride[i][d];
  }
  for (int i = 0; i <= a.pieces; ++i)
    p.start[i] = int(a.start[i]);
  p.k_out = a.k_out, p.v_out = a.v_out;
  p.Hkv = int(a.Hkv), p.group = int(a.Hq / a.Hkv), p.L = int(a.L);
  p.rows = int(rows);
  p.S = int(a.S);
  p.scale_log2 = float(a.scale * kLog2e);
  // Chunks of 256 keys, smaller while the grid is under 8 CTAs a
  // multiprocessor.
  const int64_t bh = a.B * a.Hkv;
  const int64_t want = 8 * int64_t(rt::multiprocessor_count(a.device));
  p.chunk = kMaxChunk;
  while (p.chunk > 32 && bh * ((a.S + p.chunk - 1) / p.chunk) < want)
    p.chunk /= 2;
  p.splits = int(std::max<int64_t>(1, (a.S + p.chunk - 1) / p.chunk));
  if (bh * p.splits > INT32_MAX)
    return false;

  switch (a.dtype) {
  case DType::f32: launch_head_dim<float>(a, p, device); break;
  case DType::bf16: launch_head_dim<bfloat16>(a, p, device); break;
  default: launch_head_dim<half>(a, p, device); break;
  }
  return true;
}

} // namespace kiln::detail
