// Eager CUDA scaled dot-product attention: kiln::detail::cuda_attention
// (semantics in src/attention_impl.h). cuDNN's fused attention where it
// takes the case (attention_cudnn.cu); else, for few query rows a key/value
// head and no mask (decoding), the split-key decode kernel
// (attention_decode.cu, one launch); else one launch of one of three
// kernels, chosen on the host:
//
// attn_flash_kernel<T, D> - f16/bf16 with D == Dv in {64, 128}, unit last
//   strides, and 16-byte aligned base pointers, rows and heads (q, k, v, out).
//   FlashAttention-2 style: a CTA of 4 warps owns 128 query rows of one
//   (batch, head), each warp 32 of them. Key tiles (64 keys for D 64, 32 for
//   D 128) of K and V are double-buffered in shared memory by cp.async;
//   S = Q K^T and O += P V are mma.sync m16n8k16 with f32 accumulators, fed
//   by ldmatrix (D 64 keeps Q's fragments in registers); the online softmax
//   runs on the accumulators (exp2, scale * log2(e) folded in) and P is
//   rounded to T in registers for the second product. Causal attention skips
//   key tiles past the diagonal; masks (causal, the tail of S, a bool or
//   additive mask) are applied per element only in tiles that need them.
//
// attn_tiled_kernel<T, CV> - f32, and f16/bf16 the flash kernel does not
//   take: head dims up to 256 (CV = ceil(Dv / 64) chunks of value columns),
//   any strides. A CTA of 4 warps (8 when Dv > 128) owns 16 query rows a
//   warp; each lane holds a 4 x 8 register tile of S = Q K^T (4 rows x 8 keys
//   of each 64-key tile) and the same 4 rows x 8 value columns of O per
//   64-column chunk, fed by 16-byte shared-memory loads laid out so that
//   the hardware packs them (see TiledShape). K and V stream through a
//   two-slot ring in 64-column chunks (cp.async when storage is f32, else
//   converting loads); each warp's P goes through its own shared memory,
//   transposed. The online softmax is the flash kernel's (exp2, scale folded
//   in, masks per element only in tiles that need them, O rescaled only when
//   a row's max grows). FMAs in f32 on the CUDA cores: no tensor cores, no
//   TF32.
//
// attn_general_kernel<T, CV> - f64: 256 threads own 32 query rows in a
//   16 x 16 grid: each thread scores 2 rows against 2 keys of each 32-key
//   tile with FMAs from shared memory, then accumulates its rows x 4 value
//   columns per 64-column chunk; the same two-slot ring, P through shared
//   memory. Compute and accumulation in f64. (Its f32 instantiation, 4 x 4
//   a thread over 64 rows, is what the tiled kernel replaced: 1.23 ms
//   against 0.88 on the H200 at B16 H8 S1024 D64.)
//
// All three: online softmax with the row's running max, where a row that
// has seen only -inf uses 0 as its max (so exp gives 0, not NaN) and a row
// whose weights sum to 0 (every key masked, or S == 0) is 0. NaN scores are
// skipped by the max and then propagate through exp into the sum and the
// output.
#include "attention_impl.h"
#include "cuda_util.cuh"
#include "kernel_types.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kiln::detail {

namespace {

constexpr const char *kFn = "kiln::scaled_dot_product_attention";
constexpr const char *kWhat = "scaled_dot_product_attention";
constexpr int kMaxHeadDim = 256;
constexpr int kMaxDevices = 128;
constexpr double kLog2e = 1.4426950408889634;

} // namespace

// Everything a kernel needs, by value. q, k, v, mask and out are as in
// AttnArgs; rows and columns are int (the host checks L, S < 2^31), offsets
// int64.
struct AttnParams {
  const void *q, *k, *v, *mask;
  void *out;
  int64_t qs[4], ks[4], vs[4], ms[4], os[4]; // os: out's, os[3] == 1
  int64_t Hq, group, bh_count; // group = Hq / Hkv, bh_count = B * Hq
  int L, S, D, Dv;
  int mblocks; // query blocks per (batch, head)
  // The general kernel: D and Dv rounded up to 4, Q's shared row length,
  // number of 64-column chunks of D, 16-byte cp.async allowed per operand.
  int D4, Dv4, q_ld, dc;
  bool q_vec, k_vec, v_vec;
  bool mask_bool, causal;
  float scale_log2; // flash: scale * log2(e)
  double scale;
};

// --- device helpers ---

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared through L2 only; zero-filled (src unread) when
// !valid.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src,
                                            bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

// One 4- or 8-byte element, zero-filled when !valid.
template <int N>
__device__ __forceinline__ void cp_async_elem(uint32_t dst, const void *src,
                                              bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst),
               "l"(src), "n"(N), "r"(valid ? N : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4],
                                                  uint32_t addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

// c += a (16x16, row-major) * b (16x8, column-major), f32 accumulators.
template <class T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4],
                                          uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, bfloat16>)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to T, `lo` in the low half (the lower column).
template <class T> __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t u;
  if constexpr (std::is_same_v<T, bfloat16>) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    memcpy(&u, &v, 4);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    memcpy(&u, &v, 4);
  }
  return u;
}


// Which (batch * head, query block) this CTA computes. Causal: the query
// blocks with the most keys go first, across all heads, so the short ones
// fill the tail of the grid.
__device__ __forceinline__ void block_coords(const AttnParams &p, int64_t &bh,
                                             int &mb) {
  const int64_t blk = blockIdx.x;
  if (p.causal) {
    mb = p.mblocks - 1 - int(blk / p.bh_count);
    bh = blk % p.bh_count;
  } else {
    bh = blk / p.mblocks;
    mb = int(blk % p.mblocks);
  }
}

template <class A> __device__ __forceinline__ constexpr A max_finite() {
  return sizeof(A) == 4 ? A(FLT_MAX) : A(DBL_MAX);
}

// The score x of (row, col) with the masks applied: -inf past S, above the
// causal diagonal or where the bool mask is false, else x + unit * the
// additive mask. `moff`: the mask's (batch, head) offset.
template <class T, class A>
__device__ __forceinline__ A masked_score(const AttnParams &p, int64_t moff,
                                          int row, int col, A x, A unit) {
  if (col >= p.S || (p.causal && col > row))
    return A(-INFINITY);
  if (p.mask != nullptr && row < p.L) {
    const int64_t off = moff + int64_t(row) * p.ms[2] + int64_t(col) * p.ms[3];
    if (p.mask_bool) {
      if (static_cast<const unsigned char *>(p.mask)[off] == 0)
        return A(-INFINITY);
    } else {
      const A bias = A(scalar::load(static_cast<const T *>(p.mask)[off]));
      A b = bias * unit;
      // A finite bias stays finite in log2 units: finfo(bf16).min * log2(e)
      // would be -inf and drop the key, where the softmax of a row of such
      // biases is uniform.
      if (isinf(b) && !isinf(bias))
        b = b < A(0) ? -max_finite<A>() : max_finite<A>();
      x += b;
    }
  }
  return x;
}

// --- path 1: tensor-core flash kernel (f16 / bf16, D == Dv in {64, 128}) ---

template <int D> struct FlashShape {
  static_assert(D == 64 || D == 128, "flash kernel head dims");
  static constexpr int kWarps = 4;
  static constexpr int kMTiles = 2; // m16 row tiles per warp
  static constexpr int kWarpRows = 16 * kMTiles;
  static constexpr int kBlockM = kWarps * kWarpRows; // 128
  static constexpr int kThreads = 32 * kWarps;
  // Registers (255 a thread for 2 CTAs an SM): D 64 holds 64 O and 64 S
  // accumulators and its Q fragments (32); D 128 holds 128 O and, with
  // 32-key tiles, 32 S accumulators, and re-reads its Q fragments from
  // shared memory for each key tile.
  static constexpr int kBlockN = D == 64 ? 64 : 32;
  static constexpr bool kQInRegs = D == 64;
  // Rows padded by 16 bytes: the 8 rows of an ldmatrix land in 8 distinct
  // bank groups.
  static constexpr int kLd = D + 8;
  // Q, then K[2], then V[2] (elements of 2 bytes).
  static constexpr size_t kSmemBytes = size_t(kBlockM + 4 * kBlockN) * kLd * 2;
};

// This thread's part of copying R rows of a [rows x D] operand with unit
// column stride into shared memory (rows LD elements apart) by cp.async:
// 16-byte chunk t % (D / 8) of rows t / (D / 8) + i * kRowStep, zero-filled
// past the operand. `src` and `dst` already point at the thread's first
// chunk; `left` is how many operand rows remain from the tile's first;
// `base`, a valid address, stands in for rows past the end (never read).
template <int D, int NT> struct FlashCopy {
  static constexpr int kChunks = D / 8; // 16-byte chunks per row
  static constexpr int kRowStep = NT / kChunks;
  static_assert(NT % kChunks == 0, "whole rows per pass");
  int row, chunk; // of this thread's first chunk
  __device__ FlashCopy()
      : row(int(threadIdx.x) / kChunks), chunk(int(threadIdx.x) % kChunks) {}

  template <int R, int LD, class T>
  __device__ __forceinline__ void
  rows(uint32_t dst, const T *src, int64_t row_stride, int left,
       const T *base) const {
    static_assert(R % kRowStep == 0, "whole passes");
#pragma unroll
    for (int i = 0; i < R / kRowStep; ++i) {
      const bool ok = row + i * kRowStep < left;
      cp_async_16(dst + uint32_t(i * kRowStep * LD * 2),
                  ok ? src + i * kRowStep * row_stride : base, ok);
    }
  }
};

// A block's (batch * head), its operands' bases, its first query row and
// the number of key tiles it visits (causal: none past its last row).
template <class T> struct BlockWork {
  int64_t bh, moff;
  const T *q, *k, *v;
  int m0, ntiles;
};
template <class T, int BM, int BN>
__device__ __forceinline__ BlockWork<T> block_work(const AttnParams &p) {
  BlockWork<T> w;
  int mb;
  block_coords(p, w.bh, mb);
  const int64_t b = w.bh / p.Hq, h = w.bh % p.Hq, hk = h / p.group;
  w.q = static_cast<const T *>(p.q) + b * p.qs[0] + h * p.qs[1];
  w.k = static_cast<const T *>(p.k) + b * p.ks[0] + hk * p.ks[1];
  w.v = static_cast<const T *>(p.v) + b * p.vs[0] + hk * p.vs[1];
  w.moff = b * p.ms[0] + h * p.ms[1];
  w.m0 = mb * BM;
  const int n_end = p.causal ? min(p.S, w.m0 + BM) : p.S;
  w.ntiles = (n_end + BN - 1) / BN;
  return w;
}

template <class T, int D>
__global__ void __launch_bounds__(FlashShape<D>::kThreads, 2)
    attn_flash_kernel(const AttnParams p) {
  using Sh = FlashShape<D>;
  constexpr int BM = Sh::kBlockM, BN = Sh::kBlockN, LD = Sh::kLd;
  constexpr int NT = Sh::kThreads, MT = Sh::kMTiles;
  constexpr int kTileBytes = BN * LD * 2;
  extern __shared__ __align__(16) unsigned char smem[];
  T *const q_smem = reinterpret_cast<T *>(smem);
  const uint32_t q_addr = smem_addr(smem);
  const uint32_t k_addr = q_addr + BM * LD * 2;
  const uint32_t v_addr = k_addr + 2 * kTileBytes;

  const BlockWork<T> w = block_work<T, BM, BN>(p);
  const int64_t bh = w.bh, moff = w.moff;
  const T *const q = w.q, *const k = w.k, *const v = w.v;
  const int m0 = w.m0, ntiles = w.ntiles;

  const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31;
  const int g = lane >> 2, tig = lane & 3; // mma fragment row and column pair
  const int wrow = warp * Sh::kWarpRows;   // this warp's first row in the CTA

  // Q's tile, then K's and V's tile 0. The copies' thread pointers advance
  // by BN rows a tile.
  const FlashCopy<D, NT> copy;
  const uint32_t copy_dst = uint32_t((copy.row * LD + copy.chunk * 8) * 2);
  const int64_t k_step = BN * p.ks[2], v_step = BN * p.vs[2];
  const T *k_next = k + copy.row * p.ks[2] + copy.chunk * 8;
  const T *v_next = v + copy.row * p.vs[2] + copy.chunk * 8;
  copy.template rows<BM, LD>(q_addr + copy_dst,
                             q + (m0 + copy.row) * p.qs[2] + copy.chunk * 8,
                             p.qs[2], p.L - m0, q);
  if (ntiles > 0) {
    copy.template rows<BN, LD>(k_addr + copy_dst, k_next, p.ks[2], p.S, k);
    copy.template rows<BN, LD>(v_addr + copy_dst, v_next, p.vs[2], p.S, v);
  }
  cp_async_commit();
  cp_async_wait_all();
  __syncthreads();

  // Per-lane ldmatrix addresses: Q (A of S = Q K^T), K (its B, two 8-key
  // n-tiles per x4) and V (B of O = P V, transposed, two 8-column n-tiles
  // per x4).
  const uint32_t q_lane = q_addr + uint32_t(((wrow + (lane & 15)) * LD +
                                             (lane >> 4) * 8) * 2);
  const uint32_t k_lane = uint32_t(
      (((lane & 7) + ((lane >> 4) << 3)) * LD + ((lane >> 3) & 1) * 8) * 2);
  const uint32_t v_lane = uint32_t(
      (((lane & 7) + ((lane >> 3) & 1) * 8) * LD + (lane >> 4) * 8) * 2);
  auto load_q = [&](uint32_t (&f)[4], int mt, int kk) {
    ldmatrix_x4(f, q_lane + uint32_t((mt * 16 * LD + kk * 16) * 2));
  };

  // Q as mma A fragments for the whole key loop (D 64 only).
  uint32_t qf[Sh::kQInRegs ? MT : 1][Sh::kQInRegs ? D / 16 : 1][4];
  if constexpr (Sh::kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        load_q(qf[mt][kk], mt, kk);
  }

  float o[MT][D / 8][4];
  float row_max[MT][2], row_sum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        o[mt][dt][e] = 0.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = -INFINITY;
      row_sum[mt][r] = 0.f;
    }
  }

  for (int t = 0; t < ntiles; ++t) {
    // Tile t has landed and every warp is done with tile t - 1, whose
    // buffers now take tile t + 1.
    if (t > 0) {
      cp_async_wait_all();
      __syncthreads();
    }
    if (t + 1 < ntiles) {
      const uint32_t slot = uint32_t(((t + 1) & 1) * kTileBytes) + copy_dst;
      k_next += k_step;
      v_next += v_step;
      copy.template rows<BN, LD>(k_addr + slot, k_next, p.ks[2],
                                 p.S - (t + 1) * BN, k);
      copy.template rows<BN, LD>(v_addr + slot, v_next, p.vs[2],
                                 p.S - (t + 1) * BN, v);
    }
    cp_async_commit();
    const uint32_t kt = k_addr + uint32_t((t & 1) * kTileBytes) + k_lane;
    const uint32_t vt = v_addr + uint32_t((t & 1) * kTileBytes) + v_lane;
    const int n0 = t * BN;

    // S = Q K^T: s[mt][nt] is the 16 x 8 block of rows mt, keys nt.
    float s[MT][BN / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[mt][nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t qk[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if constexpr (Sh::kQInRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            qk[mt][e] = qf[mt][kk][e];
        } else {
          load_q(qk[mt], mt, kk);
        }
      }
#pragma unroll
      for (int np = 0; np < BN / 16; ++np) {
        uint32_t kf[4];
        ldmatrix_x4(kf, kt + uint32_t((np * 16 * LD + kk * 16) * 2));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_16816<T>(s[mt][2 * np], qk[mt], kf[0], kf[1]);
          mma_16816<T>(s[mt][2 * np + 1], qk[mt], kf[2], kf[3]);
        }
      }
    }

    // Scores in log2 units are f * s: in tiles without masks f is
    // scale * log2(e) (folded into the exponent's FMA, the max taken on s);
    // tiles that can meet a mask (or a scale < 0 or not finite, where the
    // max of s is not the max of f * s) scale and mask s in place, f = 1.
    // One branch around the masking keeps the common path straight.
    float f = p.scale_log2;
    if (p.mask != nullptr || n0 + BN > p.S || (p.causal && n0 + BN - 1 > m0) ||
        !(f >= 0.f && f < INFINITY)) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = m0 + wrow + mt * 16 + g + (e >> 1) * 8;
            const int col = n0 + nt * 8 + 2 * tig + (e & 1);
            s[mt][nt][e] = masked_score<T, float>(
                p, moff, row, col, s[mt][nt][e] * f, float(kLog2e));
          }
      f = 1.f;
    }

    // Online softmax; a row lives in the 4 lanes of one quad. O is rescaled
    // only when some row of the warp has a new max (rarely, after the first
    // tiles).
    float alpha[MT][2];
    bool grew = false;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt)
          mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(row_max[mt][r], mx * f);
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        alpha[mt][r] = exp2_approx(row_max[mt][r] - m_use);
        grew |= m_new != row_max[mt][r];
        row_max[mt][r] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
          for (int e = 2 * r; e < 2 * r + 2; ++e) {
            const float pe = exp2_approx(fmaf(s[mt][nt][e], f, -m_use));
            s[mt][nt][e] = pe;
            sum += pe;
          }
        row_sum[mt][r] = row_sum[mt][r] * alpha[mt][r] + sum;
      }
    // An unchanged max has alpha 1; one that stays -inf has alpha 0 but O
    // still 0 (only zero weights so far).
    if (__any_sync(0xffffffffu, grew)) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            o[mt][dt][e] *= alpha[mt][e >> 1];
    }

    // O += P V, P's accumulator layout reused as the A fragment.
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      uint32_t pa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        pa[mt][0] = pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        pa[mt][1] = pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        pa[mt][2] = pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        pa[mt][3] = pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t vf[4];
        ldmatrix_x4_trans(vf, vt + uint32_t((kk * 16 * LD + dp * 16) * 2));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_16816<T>(o[mt][2 * dp], pa[mt], vf[0], vf[1]);
          mma_16816<T>(o[mt][2 * dp + 1], pa[mt], vf[2], vf[3]);
        }
      }
    }
  }

  // Normalise and stage this warp's rows in its own Q rows (no other warp
  // reads them), then write whole 16-byte pieces of the output rows.
  __syncwarp();
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = row_sum[mt][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const float inv = l == 0.f ? 0.f : 1.f / l;
      uint32_t *dst = reinterpret_cast<uint32_t *>(
          q_smem + (wrow + mt * 16 + g + 8 * r) * LD + 2 * tig);
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        dst[dt * 4] = pack2<T>(o[mt][dt][2 * r] * inv, o[mt][dt][2 * r + 1] * inv);
    }
  __syncwarp();
  constexpr int kChunks = D / 8;
  T *out = static_cast<T *>(p.out) + (bh / p.Hq) * p.os[0] +
           (bh % p.Hq) * p.os[1] + (m0 + wrow) * p.os[2];
#pragma unroll
  for (int i = 0; i < Sh::kWarpRows * kChunks / 32; ++i) {
    const int c = lane + 32 * i;
    const int r = c / kChunks, ch = c % kChunks;
    if (m0 + wrow + r < p.L)
      *reinterpret_cast<uint4 *>(out + int64_t(r) * p.os[2] + ch * 8) =
          *reinterpret_cast<const uint4 *>(q_smem + (wrow + r) * LD + ch * 8);
  }
}

// --- path 3: general kernel (f64), and the chunk staging path 2 shares ---

template <class A> struct GeneralShape {
  static constexpr int kThreads = 256;         // 16 x 16
  static constexpr int kTM = sizeof(A) == 4 ? 4 : 2; // query rows per thread
  static constexpr int kTN = sizeof(A) == 4 ? 4 : 2; // keys per thread
  static constexpr int kBlockM = 16 * kTM;
  static constexpr int kBlockN = 16 * kTN;
  static constexpr int kE = int(16 / sizeof(A)); // elements per 16 bytes
  // K/V chunk rows (64 columns) and P rows, padded by 16 bytes so that the
  // 16 rows a half-warp reads fall in distinct bank groups.
  static constexpr int kLd = 64 + kE;
  static constexpr int kPLd = kBlockN + kE;
  static constexpr int min_blocks(int cv) {
    return sizeof(A) == 4 && cv <= 2 ? 2 : 1;
  }
  // Shared memory: the K/V ring, P, then Q (q_ld elements a row).
  static constexpr size_t smem_bytes(int q_ld) {
    return sizeof(A) *
           size_t(2 * kBlockN * kLd + kBlockM * kPLd + kBlockM * q_ld);
  }
};

// One operand of the general kernel at this CTA's (batch, head).
template <class T> struct Operand {
  const T *base;
  int64_t rs, cs;  // row and column strides
  int rows, cols;
  bool vec; // T is the compute type, unit column stride, rows and their
            // starts 16-byte aligned, cols whole 16-byte pieces
};

// Stages rows [r0, r0 + R) x columns [c0, c0 + W) (W <= 64) of operand o
// into shared memory as A (rows ld elements apart), zero outside o, with NT
// threads: by cp.async (16 bytes, or one element) when T is A, else by
// converting loads (all issued before the first store). Not inlined: it is
// called from a few places of the key loop, and one copy keeps the kernel
// small.
template <class T, class A, int R, int NT>
__device__ __noinline__ void general_stage(A *dst, int ld, const Operand<T> o,
                                           int r0, int c0, int W) {
  const int tid = int(threadIdx.x);
  if constexpr (std::is_same_v<T, A>) {
    if (o.vec) {
      // Piece threadIdx % kPerRow of rows threadIdx / kPerRow + kRowStep i:
      // one address computed, then stepped.
      constexpr int E = int(16 / sizeof(A)), kPerRow = 64 / E;
      constexpr int kRowStep = NT / kPerRow;
      static_assert(NT % kPerRow == 0 && R % kRowStep == 0, "whole passes");
      const int r = int(threadIdx.x / kPerRow);
      const int c = int(threadIdx.x % kPerRow) * E;
      if (c >= W)
        return;
      const bool col_ok = c0 + c < o.cols;
      const int left = o.rows - r0 - r; // this thread's rows i with i < left
      const T *g = o.base + int64_t(r0 + r) * o.rs + (c0 + c);
      const int64_t g_step = int64_t(kRowStep) * o.rs;
      const uint32_t s = smem_addr(dst + r * ld + c);
      const uint32_t s_step = uint32_t(kRowStep * ld * int(sizeof(A)));
#pragma unroll
      for (int it = 0; it < R / kRowStep; ++it) {
        const bool ok = col_ok && it * kRowStep < left;
        cp_async_16(s + it * s_step, ok ? g : o.base, ok);
        g += g_step;
      }
      return;
    }
  }
  constexpr int kIters = R * 64 / NT;
  static_assert(R * 64 % NT == 0, "whole passes");
  [[maybe_unused]] A val[kIters];
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int i = tid + it * NT, r = i >> 6, c = i & 63;
    const bool ok = c < W && r0 + r < o.rows && c0 + c < o.cols;
    const T *g = ok ? o.base + int64_t(r0 + r) * o.rs + int64_t(c0 + c) * o.cs
                    : o.base;
    if constexpr (std::is_same_v<T, A>) {
      if (c < W)
        cp_async_elem<int(sizeof(A))>(smem_addr(dst + r * ld + c), g, ok);
    } else {
      val[it] = ok ? A(scalar::load(*g)) : A(0);
    }
  }
  if constexpr (!std::is_same_v<T, A>) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = tid + it * NT, r = i >> 6, c = i & 63;
      if (c < W)
        dst[r * ld + c] = val[it];
    }
  }
}

// Four consecutive elements from 16-byte aligned shared memory.
__device__ __forceinline__ void load4(const float *p, float (&r)[4]) {
  const float4 v = *reinterpret_cast<const float4 *>(p);
  r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
}
__device__ __forceinline__ void load4(const double *p, double (&r)[4]) {
  const double2 v0 = reinterpret_cast<const double2 *>(p)[0];
  const double2 v1 = reinterpret_cast<const double2 *>(p)[1];
  r[0] = v0.x, r[1] = v0.y, r[2] = v1.x, r[3] = v1.y;
}

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return ::exp(x); }

template <class T, int CV>
__global__ void __launch_bounds__(
    GeneralShape<scalar::opmath_t<T>>::kThreads,
    GeneralShape<scalar::opmath_t<T>>::min_blocks(CV))
    attn_general_kernel(const AttnParams p) {
  using A = scalar::opmath_t<T>;
  using Sh = GeneralShape<A>;
  constexpr int TM = Sh::kTM, TN = Sh::kTN, BM = Sh::kBlockM, BN = Sh::kBlockN;
  constexpr int LD = Sh::kLd, PLD = Sh::kPLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A *const ring = reinterpret_cast<A *>(smem_raw); // [2][BN][LD]
  A *const p_smem = ring + 2 * BN * LD;            // [BM][PLD]
  A *const q_smem = p_smem + BM * PLD;             // [BM][q_ld]

  const BlockWork<T> w = block_work<T, BM, BN>(p);
  const int64_t bh = w.bh, moff = w.moff;
  const T *const q = w.q, *const k = w.k, *const v = w.v;
  const int m0 = w.m0, ntiles = w.ntiles;

  // Thread (ty, tx) owns query rows ty + 16 i, keys tx + 16 j of each tile
  // and value columns 64 c + 4 tx + {0..3}; the 16 threads of a row group
  // are one half-warp.
  const int lane = int(threadIdx.x) & 31;
  const int tx = lane & 15, ty = (int(threadIdx.x) >> 5) * 2 + (lane >> 4);
  const int q_ld = p.q_ld, dc = p.dc;

  const Operand<T> qo{q, p.qs[2], p.qs[3], p.L, p.D, p.q_vec};
  const Operand<T> ko{k, p.ks[2], p.ks[3], p.S, p.D, p.k_vec};
  const Operand<T> vo{v, p.vs[2], p.vs[3], p.S, p.Dv, p.v_vec};

  // Each key tile is dc chunks of K columns, then CV chunks of V columns,
  // streamed through the two ring slots one chunk ahead.
  const int per_tile = dc + CV, total = ntiles * per_tile;
  auto issue = [&](int c) {
    if (c < total) {
      const int t = c / per_tile, part = c % per_tile;
      A *dst = ring + (c & 1) * (BN * LD);
      if (part < dc)
        general_stage<T, A, BN, Sh::kThreads>(dst, LD, ko, t * BN, 64 * part,
                                              min(64, p.D4 - 64 * part));
      else
        general_stage<T, A, BN, Sh::kThreads>(
            dst, LD, vo, t * BN, 64 * (part - dc),
            min(64, p.Dv4 - 64 * (part - dc)));
    }
    cp_async_commit();
  };
  // Waits for chunk c (and every thread's use of chunk c - 1), starts c + 1.
  int chunk = 0;
  auto next_chunk = [&]() -> const A * {
    cp_async_wait_all();
    __syncthreads();
    issue(chunk + 1);
    return ring + (chunk++ & 1) * (BN * LD);
  };

  if (ntiles > 0) {
    for (int kc = 0; kc < dc; ++kc)
      general_stage<T, A, BM, Sh::kThreads>(q_smem + 64 * kc, q_ld, qo, m0,
                                            64 * kc, min(64, p.D4 - 64 * kc));
    issue(0);
  }

  A o[CV][TM][4];
  A row_max[TM], row_sum[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    row_max[i] = A(-INFINITY);
    row_sum[i] = A(0);
#pragma unroll
    for (int c = 0; c < CV; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        o[c][i][e] = A(0);
  }
  const A scale = A(p.scale);

  for (int t = 0; t < ntiles; ++t) {
    const int n0 = t * BN;
    A s[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j)
        s[i][j] = A(0);

    // S = Q K^T over the K chunks (columns zero-padded to a multiple of 4).
    for (int kc = 0; kc < dc; ++kc) {
      const A *kt = next_chunk();
      const A *qt = q_smem + 64 * kc;
      const int dn = min(64, p.D4 - 64 * kc);
#pragma unroll 2
      for (int d = 0; d < dn; d += 4) {
        A qv[TM][4], kv[TN][4];
#pragma unroll
        for (int i = 0; i < TM; ++i)
          load4(qt + (ty + 16 * i) * q_ld + d, qv[i]);
#pragma unroll
        for (int j = 0; j < TN; ++j)
          load4(kt + (tx + 16 * j) * LD + d, kv[j]);
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
              s[i][j] = ::fma(qv[i][e], kv[j][e], s[i][j]);
      }
    }

    // Online softmax; P to shared memory for the value chunks.
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j)
        s[i][j] *= scale;
    if (p.mask != nullptr || n0 + BN > p.S || (p.causal && n0 + BN - 1 > m0)) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          s[i][j] = masked_score<T, A>(p, moff, m0 + ty + 16 * i,
                                       n0 + tx + 16 * j, s[i][j], A(1));
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      A mx = A(-INFINITY);
#pragma unroll
      for (int j = 0; j < TN; ++j)
        mx = ::fmax(mx, s[i][j]);
#pragma unroll
      for (int off = 1; off < 16; off *= 2)
        mx = ::fmax(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const A m_new = ::fmax(row_max[i], mx);
      const A m_use = m_new == A(-INFINITY) ? A(0) : m_new;
      const A alpha = exp_of(row_max[i] - m_use);
      row_max[i] = m_new;
      A sum = A(0);
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const A pj = exp_of(s[i][j] - m_use);
        p_smem[(ty + 16 * i) * PLD + tx + 16 * j] = pj;
        sum += pj;
      }
      row_sum[i] = row_sum[i] * alpha + sum;
#pragma unroll
      for (int c = 0; c < CV; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          o[c][i][e] *= alpha;
    }

    // O += P V, one 64-column chunk of V at a time (P is visible after the
    // barrier in next_chunk).
#pragma unroll
    for (int c = 0; c < CV; ++c) {
      const A *vt = next_chunk();
#pragma unroll 2
      for (int n = 0; n < BN; n += 4) {
        A pv[TM][4], vv[4][4];
#pragma unroll
        for (int i = 0; i < TM; ++i)
          load4(p_smem + (ty + 16 * i) * PLD + n, pv[i]);
#pragma unroll
        for (int e = 0; e < 4; ++e)
          load4(vt + (n + e) * LD + 4 * tx, vv[e]);
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int x = 0; x < 4; ++x)
              o[c][i][x] = ::fma(pv[i][e], vv[e][x], o[c][i][x]);
      }
    }
  }
  cp_async_wait_all(); // nothing may be in flight when the CTA exits

  T *out = static_cast<T *>(p.out);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    A l = row_sum[i];
#pragma unroll
    for (int off = 1; off < 16; off *= 2)
      l += __shfl_xor_sync(0xffffffffu, l, off);
    const A inv = l == A(0) ? A(0) : A(1) / l;
    const int row = m0 + ty + 16 * i;
    if (row >= p.L)
      continue;
    T *dst = out + (bh / p.Hq) * p.os[0] + (bh % p.Hq) * p.os[1] + row * p.os[2];
#pragma unroll
    for (int c = 0; c < CV; ++c)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int col = 64 * c + 4 * tx + x;
        if (col < p.Dv)
          dst[col] = scalar::store<T>(o[c][i][x] * inv);
      }
  }
}

// --- path 2: register-tiled kernel (f16/bf16/f32, f32 compute) ---

// A CTA of kWarps warps owns kBlockM query rows, 16 a warp. A warp's lanes
// are 4 row groups rg x 8 key groups kg; lane (rg, kg) owns the warp's rows
// rg + 4 i (i < 4), keys kg + 8 j (j < 8) of each 64-key tile, and value
// columns 4 kg + {0..3} and 32 + 4 kg + {0..3} of each 64-column chunk of V:
// 32 scores, and 32 accumulators a chunk. Per 4 columns of D (or 4 keys of
// P V) a lane issues 12 LDS.128 for 128 FMAs.
//
// Shared memory returns one register a lane per cycle, so an LDS.128 costs
// 4 cycles of the SM's load path, unless lanes n and n ^ 1 (or n and n ^ 2)
// read the same address, when the hardware packs it into 2. The lane bits
// are therefore, low to high, rg0 kg0 rg1 kg1 kg2: loads of K or V (one
// address per kg) pair lanes n, n ^ 1, loads of Q or P (one per rg) pair
// n, n ^ 2. Measured on the H200 (B16 H8 S1024 D64): 40 % fewer
// shared-memory wavefronts than with rg = lane / 8, and no more stalls on
// shared loads. Within each load the 4 rows or 8 keys or columns a warp
// reads are consecutive, in distinct bank groups.
template <int CV> struct TiledShape {
  // D <= 128: 4 warps, two or three CTAs an SM. Wider value rows hold 96 or
  // 128 accumulators a lane, so one CTA an SM: 8 warps keep enough warps to
  // issue from (measured, D 256: 0.89 ms against 1.13 with 4).
  static constexpr int kWarps = CV <= 2 ? 4 : 8;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kTM = 4; // rows per lane
  static constexpr int kTN = 8; // keys per lane, and value columns a chunk
  static constexpr int kWarpRows = 4 * kTM;
  static constexpr int kBlockM = kWarps * kWarpRows;
  static constexpr int kBlockN = 8 * kTN; // 64
  // K/V chunk rows (64 columns) padded by 16 bytes: 8 consecutive rows
  // fall in distinct bank groups.
  static constexpr int kLd = 64 + 4;
  // A warp's P, transposed: a row of its 16 query rows per key, lane
  // (rg, kg)'s four rows at 4 rg (so one LDS.128 reads them).
  static constexpr int kPLd = kWarpRows + 4;
  // The inner loops (4 columns of D, or 4 keys, a step) are unrolled this
  // many steps, not fully: the fully unrolled kernel stalled on instruction
  // fetch (its two hot loops were 72 KB of code).
  static constexpr int kUnroll = 4;
  // Registers: 32 scores, 32 CV accumulators and the 48 operands of one
  // step (168 for CV 1: three CTAs an SM, as shared memory allows).
  static constexpr int kMinBlocks = CV == 1 ? 3 : CV == 2 ? 2 : 1;
  // Shared memory: the K/V ring, each warp's P, then Q (q_ld a row).
  static constexpr size_t smem_bytes(int q_ld) {
    return sizeof(float) *
           size_t(2 * kBlockN * kLd + kWarps * kBlockN * kPLd + kBlockM * q_ld);
  }
};

template <class T, int CV>
__global__ void __launch_bounds__(TiledShape<CV>::kThreads,
                                  TiledShape<CV>::kMinBlocks)
    attn_tiled_kernel(const AttnParams p) {
  using Sh = TiledShape<CV>;
  constexpr int NT = Sh::kThreads, BM = Sh::kBlockM, BN = Sh::kBlockN;
  constexpr int TM = Sh::kTM, TN = Sh::kTN, LD = Sh::kLd, PLD = Sh::kPLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float *const ring = reinterpret_cast<float *>(smem_raw); // [2][BN][LD]
  float *const p_all = ring + 2 * BN * LD;                 // [kWarps][BN][PLD]
  float *const q_smem = p_all + Sh::kWarps * BN * PLD;     // [BM][q_ld]

  const BlockWork<T> w = block_work<T, BM, BN>(p);
  const int64_t bh = w.bh, moff = w.moff;
  const int m0 = w.m0, ntiles = w.ntiles;

  const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31;
  // Lane bits rg0 kg0 rg1 kg1 kg2 (see TiledShape); a row's 8 lanes differ
  // in the kg bits, lane masks 2, 8 and 16.
  const int rg = (lane & 1) | ((lane >> 1) & 2);
  const int kg = ((lane >> 1) & 1) | ((lane >> 2) & 6);
  constexpr int kRowLanes[3] = {2, 8, 16};
  const int row0 = warp * Sh::kWarpRows + rg; // this lane's first CTA row
  float *const p_warp = p_all + warp * BN * PLD;
  const int q_ld = p.q_ld, dc = p.dc;

  const Operand<T> qo{w.q, p.qs[2], p.qs[3], p.L, p.D, p.q_vec};
  const Operand<T> ko{w.k, p.ks[2], p.ks[3], p.S, p.D, p.k_vec};
  const Operand<T> vo{w.v, p.vs[2], p.vs[3], p.S, p.Dv, p.v_vec};

  // Each key tile is dc chunks of K columns, then CV chunks of V columns,
  // streamed through the two ring slots one chunk ahead. issue() starts the
  // next chunk not yet started: part `part` of key tile `it`.
  int issued = 0, it = 0, part = 0;
  auto issue = [&]() {
    if (it < ntiles) {
      float *dst = ring + (issued & 1) * (BN * LD);
      if (part < dc)
        general_stage<T, float, BN, NT>(dst, LD, ko, it * BN, 64 * part,
                                        min(64, p.D4 - 64 * part));
      else
        general_stage<T, float, BN, NT>(dst, LD, vo, it * BN, 64 * (part - dc),
                                        min(64, p.Dv4 - 64 * (part - dc)));
      if (++part == dc + CV)
        part = 0, ++it;
    }
    ++issued;
    cp_async_commit();
  };
  // Waits for the next chunk (and every thread's use of the one before),
  // starts the one after.
  int chunk = 0;
  auto next_chunk = [&]() -> const float * {
    cp_async_wait_all();
    __syncthreads();
    issue();
    return ring + (chunk++ & 1) * (BN * LD);
  };

  if (ntiles > 0) {
    for (int kc = 0; kc < dc; ++kc)
      general_stage<T, float, BM, NT>(q_smem + 64 * kc, q_ld, qo, m0, 64 * kc,
                                      min(64, p.D4 - 64 * kc));
    issue();
  }

  float o[CV][TM][8];
  float row_max[TM], row_sum[TM]; // row_sum: this lane's keys only
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    row_max[i] = -INFINITY;
    row_sum[i] = 0.f;
#pragma unroll
    for (int c = 0; c < CV; ++c)
#pragma unroll
      for (int x = 0; x < 8; ++x)
        o[c][i][x] = 0.f;
  }

  for (int t = 0; t < ntiles; ++t) {
    const int n0 = t * BN;
    float s[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j)
        s[i][j] = 0.f;

    // S = Q K^T over the K chunks (columns zero-padded to a multiple of 4).
    for (int kc = 0; kc < dc; ++kc) {
      const float *kt = next_chunk() + kg * LD;
      const float *qt = q_smem + row0 * q_ld + 64 * kc;
      const int dn = min(64, p.D4 - 64 * kc);
      auto step = [&](int d) {
        float qv[TM][4], kv[TN][4];
#pragma unroll
        for (int i = 0; i < TM; ++i)
          load4(qt + 4 * i * q_ld + d, qv[i]);
#pragma unroll
        for (int j = 0; j < TN; ++j)
          load4(kt + 8 * j * LD + d, kv[j]);
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
              s[i][j] = fmaf(qv[i][e], kv[j][e], s[i][j]);
      };
#pragma unroll Sh::kUnroll
      for (int d = 0; d < dn; d += 4)
        step(d);
    }

    // Scores in log2 units are f * s: in tiles without masks f is
    // scale * log2(e) (folded into the exponent's FMA, the max taken on s);
    // tiles that can meet a mask (or a scale < 0 or not finite, where the
    // max of s is not the max of f * s) scale and mask s in place, f = 1.
    float f = p.scale_log2;
    if (p.mask != nullptr || n0 + BN > p.S || (p.causal && n0 + BN - 1 > m0) ||
        !(f >= 0.f && f < INFINITY)) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          s[i][j] = masked_score<T, float>(p, moff, m0 + row0 + 4 * i,
                                           n0 + kg + 8 * j, s[i][j] * f,
                                           float(kLog2e));
      f = 1.f;
    }

    // Online softmax; a row lives in the 8 lanes of one row group. O is
    // rescaled only when some row of the warp has a new max (rarely, after
    // the first tiles).
    float alpha[TM];
    bool grew = false;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < TN; ++j)
        mx = fmaxf(mx, s[i][j]);
#pragma unroll
      for (int r = 0; r < 3; ++r)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, kRowLanes[r]));
      const float m_new = fmaxf(row_max[i], mx * f);
      const float m_use = m_new == -INFINITY ? 0.f : m_new;
      alpha[i] = exp2_approx(row_max[i] - m_use);
      grew |= m_new != row_max[i];
      row_max[i] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        s[i][j] = exp2_approx(fmaf(s[i][j], f, -m_use));
        sum += s[i][j];
      }
      row_sum[i] = row_sum[i] * alpha[i] + sum;
    }
    // An unchanged max has alpha 1; one that stays -inf has alpha 0 but O
    // still 0 (only zero weights so far).
    if (__any_sync(0xffffffffu, grew)) {
#pragma unroll
      for (int c = 0; c < CV; ++c)
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int x = 0; x < 8; ++x)
            o[c][i][x] *= alpha[i];
    }
    // P to this warp's P^T (the warp's previous reads of it are behind the
    // barrier in next_chunk).
#pragma unroll
    for (int j = 0; j < TN; ++j)
      *reinterpret_cast<float4 *>(p_warp + (kg + 8 * j) * PLD + 4 * rg) =
          make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);

    // O += P V, one 64-column chunk of V at a time (P is visible to the
    // warp after the barrier in next_chunk).
    const float *pt = p_warp + 4 * rg;
#pragma unroll
    for (int c = 0; c < CV; ++c) {
      const float *vt = next_chunk() + 4 * kg;
#pragma unroll Sh::kUnroll
      for (int n = 0; n < BN; n += 4) {
        float pv[4][4], vv[4][8];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          load4(pt + (n + e) * PLD, pv[e]);
          load4(vt + (n + e) * LD, *reinterpret_cast<float(*)[4]>(&vv[e][0]));
          load4(vt + (n + e) * LD + 32,
                *reinterpret_cast<float(*)[4]>(&vv[e][4]));
        }
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int x = 0; x < 8; ++x)
              o[c][i][x] = fmaf(pv[e][i], vv[e][x], o[c][i][x]);
      }
    }
  }
  cp_async_wait_all(); // nothing may be in flight when the CTA exits

  T *out =
      static_cast<T *>(p.out) + (bh / p.Hq) * p.os[0] + (bh % p.Hq) * p.os[1];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    float l = row_sum[i];
#pragma unroll
    for (int r = 0; r < 3; ++r)
      l += __shfl_xor_sync(0xffffffffu, l, kRowLanes[r]);
    const float inv = l == 0.f ? 0.f : 1.f / l;
    const int row = m0 + row0 + 4 * i;
    if (row >= p.L)
      continue;
    T *dst = out + int64_t(row) * p.os[2];
#pragma unroll
    for (int c = 0; c < CV; ++c)
#pragma unroll
      for (int x = 0; x < 8; ++x) {
        const int col = 64 * c + 32 * (x >> 2) + 4 * kg + (x & 3);
        if (col < p.Dv)
          dst[col] = scalar::store<T>(o[c][i][x] * inv);
      }
  }
}

// --- host side ---

namespace {

// True when every (batch, head, row) start of an operand is 16-byte aligned
// and its rows are whole 16-byte pieces (e elements each) of unit stride.
bool rows_vectorizable(const void *base, const int64_t *st, int64_t B,
                       int64_t H, int64_t rows, int64_t cols, int64_t e) {
  return st[3] == 1 && cols % e == 0 && rows_aligned16(base, st, B, H, rows, e);
}

// The first launch on `device` needing more than the default 48 KB of
// dynamic shared memory raises the kernel's limit (`granted`: the kernel's
// own record, per device).
void allow_smem(const void *kernel, size_t bytes,
                std::atomic<size_t> *granted, int device) {
  if (bytes <= 48 * 1024 || granted[device].load(std::memory_order_relaxed) >= bytes)
    return;
  cuda_check(cudaFuncSetAttribute(kernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(bytes)),
             kFn, "cudaFuncSetAttribute");
  granted[device].store(bytes, std::memory_order_relaxed);
}

unsigned grid_blocks(const AttnParams &p) {
  const int64_t blocks = p.bh_count * p.mblocks;
  if (blocks > INT_MAX)
    fail("%s: %lld thread blocks is more than one CUDA launch takes", kFn,
         (long long)blocks);
  return unsigned(blocks);
}

template <class T, int D>
void launch_flash(const AttnArgs &a, AttnParams &p, int device) {
  using Sh = FlashShape<D>;
  p.mblocks = int((a.L + Sh::kBlockM - 1) / Sh::kBlockM);
  static std::atomic<size_t> granted[kMaxDevices];
  allow_smem(reinterpret_cast<const void *>(&attn_flash_kernel<T, D>),
             Sh::kSmemBytes, granted, device);
  dim3 grid(grid_blocks(p)), block(Sh::kThreads);
  attn_flash_kernel<T, D>
      <<<grid, block, Sh::kSmemBytes, stream_of(device)>>>(p);
  after_launch(kWhat, "flash", a.dtype, a.B * a.Hq * a.L * a.Dv, grid, block,
               device);
}

// The general and tiled kernels' shared-memory layout of Q and K/V chunks
// (E elements per 16 bytes of the compute type A) and which operands
// stage by 16-byte cp.async. Q rows are padded by 16 bytes and chosen so
// that 4 consecutive rows fall in distinct bank groups.
template <class T>
void chunk_layout(const AttnArgs &a, AttnParams &p) {
  using A = scalar::opmath_t<T>;
  constexpr int E = int(16 / sizeof(A));
  p.D4 = int((a.D + 3) / 4 * 4);
  p.Dv4 = int((a.Dv + 3) / 4 * 4);
  p.dc = std::max(1, (p.D4 + 63) / 64);
  p.q_ld = p.D4 + E;
  while (p.q_ld * int(sizeof(A)) % 64 == 0)
    p.q_ld += E;
  constexpr bool same = std::is_same_v<T, A>;
  p.q_vec = same && rows_vectorizable(a.q, a.q_stride, a.B, a.Hq, a.L, a.D, E);
  p.k_vec = same && rows_vectorizable(a.k, a.k_stride, a.B, a.Hkv, a.S, a.D, E);
  p.v_vec =
      same && rows_vectorizable(a.v, a.v_stride, a.B, a.Hkv, a.S, a.Dv, E);
}

// The tiled kernel (f32 math: f32 and the 16-bit shapes flash does not
// take) and the general one (f64): CV chunks of value columns through a
// two-slot ring, launched alike.
template <class T, int CV>
void launch_chunked(const AttnArgs &a, AttnParams &p, int device) {
  constexpr bool tiled = std::is_same_v<scalar::opmath_t<T>, float>;
  using Sh = std::conditional_t<tiled, TiledShape<CV>,
                                GeneralShape<scalar::opmath_t<T>>>;
  void (*kernel)(const AttnParams);
  if constexpr (tiled)
    kernel = attn_tiled_kernel<T, CV>;
  else
    kernel = attn_general_kernel<T, CV>;
  chunk_layout<T>(a, p);
  p.mblocks = int((a.L + Sh::kBlockM - 1) / Sh::kBlockM);
  const size_t smem = Sh::smem_bytes(p.q_ld);
  static std::atomic<size_t> granted[kMaxDevices];
  allow_smem(reinterpret_cast<const void *>(kernel), smem, granted, device);
  dim3 grid(grid_blocks(p)), block(Sh::kThreads);
  kernel<<<grid, block, smem, stream_of(device)>>>(p);
  after_launch(kWhat, tiled ? "tiled" : "general", a.dtype,
               a.B * a.Hq * a.L * a.Dv, grid, block, device);
}

// Path 1's conditions (see the top of this file).
bool flash_fits(const AttnArgs &a) {
  if (a.D != a.Dv || (a.D != 64 && a.D != 128))
    return false;
  return rows_vectorizable(a.q, a.q_stride, a.B, a.Hq, a.L, a.D, 8) &&
         rows_vectorizable(a.k, a.k_stride, a.B, a.Hkv, a.S, a.D, 8) &&
         rows_vectorizable(a.v, a.v_stride, a.B, a.Hkv, a.S, a.D, 8) &&
         rows_vectorizable(a.out, a.o_stride, a.B, a.Hq, a.L, a.Dv, 8);
}

template <class T>
void launch_attention(const AttnArgs &a, AttnParams &p, int device) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    if (flash_fits(a)) {
      if (a.D == 64)
        launch_flash<T, 64>(a, p, device);
      else
        launch_flash<T, 128>(a, p, device);
      return;
    }
  }
  switch (int((std::max<int64_t>(a.Dv, 1) + 63) / 64)) {
  case 1: launch_chunked<T, 1>(a, p, device); return;
  case 2: launch_chunked<T, 2>(a, p, device); return;
  case 3: launch_chunked<T, 3>(a, p, device); return;
  default: launch_chunked<T, 4>(a, p, device); return;
  }
}

// Few query rows a key/value head (decoding: L * Hq / Hkv <= 8), no mask,
// not causal: the split-key decode kernels (attention_decode.cu), which
// spread a head's keys over many CTAs where the kernels above give one CTA
// all of them. False (nothing queued) where they do not take the case.
// (cuda_decode_attention checks the heads, rows, head dims and alignment.)
bool few_rows(const AttnArgs &a) {
  if (a.mask || a.causal || a.q_stride[3] != 1 || a.k_stride[3] != 1 ||
      a.v_stride[3] != 1)
    return false;
  DecodeArgs d;
  d.dtype = a.dtype;
  d.B = a.B, d.Hq = a.Hq, d.Hkv = a.Hkv, d.L = a.L, d.S = a.S;
  d.D = a.D, d.Dv = a.Dv;
  d.q = a.q, d.out = a.out;
  d.pieces = 1;
  d.k[0] = a.k, d.v[0] = a.v;
  d.start[0] = 0, d.start[1] = a.S;
  for (int i = 0; i < 3; ++i) {
    d.q_stride[i] = a.q_stride[i], d.o_stride[i] = a.o_stride[i];
    d.k_stride[0][i] = a.k_stride[i], d.v_stride[0][i] = a.v_stride[i];
  }
  d.scale = a.scale;
  d.device = a.device;
  return cuda_decode_attention(d);
}

} // namespace

void cuda_attention(const AttnArgs &a) {
  const int device = a.device.index;
  set_device(device, kFn);
  if (a.D > kMaxHeadDim || a.Dv > kMaxHeadDim)
    fail("%s: the CUDA kernel takes head dims up to %d (query/key %lld, "
         "value %lld)",
         kFn, kMaxHeadDim, (long long)a.D, (long long)a.Dv);
  if (a.L > INT_MAX || a.S > INT_MAX)
    fail("%s: sequence lengths beyond 2^31 - 1 (L %lld, S %lld)", kFn,
         (long long)a.L, (long long)a.S);
  if (cudnn_attention(a))
    return;
  if (few_rows(a))
    return;

  AttnParams p{};
  p.q = a.q, p.k = a.k, p.v = a.v, p.mask = a.mask, p.out = a.out;
  for (int d = 0; d < 4; ++d) {
    p.qs[d] = a.q_stride[d], p.ks[d] = a.k_stride[d];
    p.vs[d] = a.v_stride[d], p.ms[d] = a.m_stride[d];
    p.os[d] = a.o_stride[d];
  }
  p.Hq = a.Hq, p.group = a.Hq / a.Hkv, p.bh_count = a.B * a.Hq;
  p.L = int(a.L), p.S = int(a.S), p.D = int(a.D), p.Dv = int(a.Dv);
  p.mask_bool = a.mask_bool, p.causal = a.causal;
  p.scale = a.scale;
  p.scale_log2 = float(a.scale * kLog2e);

  switch (a.dtype) {
  case DType::f32: launch_attention<float>(a, p, device); return;
  case DType::f16: launch_attention<half>(a, p, device); return;
  case DType::bf16: launch_attention<bfloat16>(a, p, device); return;
  case DType::f64: launch_attention<double>(a, p, device); return;
  default:
    fail("%s: no CUDA kernel for %s", kFn, dtype_name(a.dtype));
  }
}

} // namespace kiln::detail
