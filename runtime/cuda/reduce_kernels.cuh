// reduce_kernels.cuh - the eager CUDA reductions and row-wise ops over a
// contiguous [outer, R, inner], for any program of reduce_programs.h:
//   - warp_rows_kernel: inner == 1 and R <= kWarpRowMax: a warp per line,
//     several lines per block, shuffles.
//   - block_kernel: a block per unit, where a unit is one line (inner == 1,
//     block 1 x by) or a tile of bx adjacent columns of one outer slab
//     (block bx x by, threads along x read adjacent columns: coalesced; the
//     by threads of a column split R and combine through shared memory).
//   - split_partial_kernel + split_final_kernel: reductions with few units
//     and long lines: chunks of each line reduced by separate blocks into
//     partials, then combined in chunk order by a second kernel (two
//     launches per pass; no atomics, so results are the same bits run to
//     run).
// Programs of two passes (var, logsumexp) and row-wise ones keep up to
// kItems elements per thread in registers, so a line of up to by * kItems
// elements is read from global memory once (and written once).
#pragma once

#include "cuda_util.cuh"
#include "reduce_programs.h"

#include <kiln/rt.h>

#include <algorithm>

namespace kiln::detail {

inline constexpr int kWarpRowMax = 512;
inline constexpr int kWarpItems = kWarpRowMax / 32;
inline constexpr int kWarpBlock = 256; // 8 lines per block
inline constexpr int kMaxBlock = 512;
inline constexpr int kColBlock = 256;
inline constexpr int kItems = 16;
// Reductions whose units (blocks) are fewer than the multiprocessors are
// split when each chunk still gets at least this many elements (and at
// least one row per thread).
inline constexpr int64_t kMinChunkElems = 8192;

template <class V> __device__ inline V shfl_down(V v, int d) {
  return __shfl_down_sync(0xffffffffu, v, d);
}
template <class A>
__device__ inline scalar::ArgAcc<A> shfl_down(scalar::ArgAcc<A> v, int d) {
  return {__shfl_down_sync(0xffffffffu, v.value, d),
          __shfl_down_sync(0xffffffffu, v.index, d)};
}
template <class V> __device__ inline V shfl_lane0(V v) {
  return __shfl_sync(0xffffffffu, v, 0);
}
template <class A>
__device__ inline scalar::ArgAcc<A> shfl_lane0(scalar::ArgAcc<A> v) {
  return {__shfl_sync(0xffffffffu, v.value, 0),
          __shfl_sync(0xffffffffu, v.index, 0)};
}

// The warp's total, in a fixed tree order, given to every lane.
template <class S, class Acc> __device__ inline Acc warp_reduce(Acc a) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1)
    a = S::comb(a, shfl_down(a, d));
  return shfl_lane0(a);
}

// The total over threadIdx.y of each column threadIdx.x, given to every
// thread of the column. Every thread of the block must call it. blockDim.y
// is a power of two (and a multiple of 32 when blockDim.x == 1); buf holds
// blockDim.x * blockDim.y accumulators.
template <class S, class Acc> __device__ Acc block_reduce(Acc a, Acc *buf) {
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  if (bx == 1) {
    const int lane = ty & 31, warp = ty >> 5, warps = by >> 5;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
      a = S::comb(a, shfl_down(a, d));
    if (lane == 0)
      buf[warp] = a;
    __syncthreads();
    if (warp == 0) {
      a = lane < warps ? buf[lane] : S::init();
#pragma unroll
      for (int d = 16; d > 0; d >>= 1)
        a = S::comb(a, shfl_down(a, d));
      if (lane == 0)
        buf[0] = a;
    }
    __syncthreads();
    Acc r = buf[0];
    __syncthreads(); // buf is reused by the next call
    return r;
  }
  buf[ty * bx + tx] = a;
  __syncthreads();
  for (int s = by / 2; s > 0; s >>= 1) {
    if (ty < s)
      buf[ty * bx + tx] = S::comb(buf[ty * bx + tx], buf[(ty + s) * bx + tx]);
    __syncthreads();
  }
  Acc r = buf[tx];
  __syncthreads();
  return r;
}

template <class P>
inline constexpr bool kCaches = P::kPasses == 2 || P::kRowwise;

// N: the elements of a line each lane keeps in registers (1: none kept;
// else the fewest of 4, 8 and kWarpItems that hold the line).
template <class P, int N>
__global__ void __launch_bounds__(kWarpBlock)
    warp_rows_kernel(P p, const typename P::T *in, void *out, int64_t lines,
                     int64_t R) {
  using T = typename P::T;
  using A = typename P::A;
  using S1 = PassOf<P, 1>;
  using S2 = PassOf<P, 2>;
  const int lane = threadIdx.x & 31;
  const int64_t per_block = blockDim.x >> 5;
  const int64_t step = int64_t(gridDim.x) * per_block;
  for (int64_t line = int64_t(blockIdx.x) * per_block + (threadIdx.x >> 5);
       line < lines; line += step) {
    const T *x = in + line * R;
    typename S1::Acc a1 = S1::init();
    A v[N];
    if constexpr (kCaches<P>) {
#pragma unroll
      for (int k = 0; k < N; ++k) {
        int64_t r = lane + 32 * k;
        v[k] = r < R ? P::load(x[r]) : A(0);
        if (r < R)
          a1 = S1::comb(a1, S1::elem(p, v[k], r, A(0)));
      }
    } else {
      for (int64_t r = lane; r < R; r += 32)
        a1 = S1::comb(a1, S1::elem(p, P::load(x[r]), r, A(0)));
    }
    a1 = warp_reduce<S1>(a1);
    if constexpr (!kCaches<P>) {
      if (lane == 0)
        static_cast<typename P::Out *>(out)[line] = p.done(a1);
    } else {
      A p1 = p.mid(a1), p2 = A(0);
      if constexpr (P::kPasses == 2) {
        typename S2::Acc a2 = S2::init();
#pragma unroll
        for (int k = 0; k < N; ++k) {
          int64_t r = lane + 32 * k;
          if (r < R)
            a2 = S2::comb(a2, S2::elem(p, v[k], r, p1));
        }
        a2 = warp_reduce<S2>(a2);
        if constexpr (P::kRowwise)
          p2 = p.mid2(p1, a2);
        else if (lane == 0)
          static_cast<typename P::Out *>(out)[line] = p.done(p1, a2);
      }
      if constexpr (P::kRowwise) {
        T *y = static_cast<T *>(out) + line * R;
#pragma unroll
        for (int k = 0; k < N; ++k) {
          int64_t r = lane + 32 * k;
          if (r < R)
            y[r] = p.write(v[k], r, p1, p2);
        }
      }
    }
  }
}

// Pass `Pass` over rows [r0, r1) of one column, from registers when
// `cached` (rows ty + by * k) or from global memory.
template <class P, int Pass, int N>
__device__ inline typename PassOf<P, Pass>::Acc
column_pass(const P &p, const typename P::T *x, int64_t inner, int64_t r0,
            int64_t r1, bool active, bool cached, const typename P::A (&v)[N],
            typename P::A p1) {
  using S = PassOf<P, Pass>;
  typename S::Acc a = S::init();
  if (!active)
    return a;
  const int by = blockDim.y;
  if (cached) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      int64_t r = r0 + threadIdx.y + int64_t(by) * k;
      if (r < r1)
        a = S::comb(a, S::elem(p, v[k], r, p1));
    }
  } else {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += by)
      a = S::comb(a, S::elem(p, P::load(x[r * inner]), r, p1));
  }
  return a;
}

// N: the elements of a line each thread keeps in registers (1: none kept),
// chosen by launch_reduce as the fewest of 4, 8 and kItems that hold the
// line: every one of the N is an unrolled, predicated load and a register.
// Up to 8, two 512-thread blocks fit a multiprocessor (64 registers: ptxas
// spills nothing for the row programs); 16 keeps 128 (64 spills).
template <class P, int N>
__global__ void __launch_bounds__(kMaxBlock, N <= 8 ? 2 : 1)
    block_kernel(P p, const typename P::T *in, void *out, int64_t outer,
                 int64_t R, int64_t inner, int64_t tiles) {
  using T = typename P::T;
  using A = typename P::A;
  using S1 = PassOf<P, 1>;
  using S2 = PassOf<P, 2>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *buf1 = reinterpret_cast<typename S1::Acc *>(smem);
  auto *buf2 = reinterpret_cast<typename S2::Acc *>(smem);
  const int bx = blockDim.x, by = blockDim.y, ty = threadIdx.y;
  const bool cached = kCaches<P> && N > 1 && R <= int64_t(by) * N;
  const int64_t units = outer * tiles;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t o = u / tiles, c = (u % tiles) * bx + threadIdx.x;
    const bool active = c < inner;
    const int64_t base = o * R * inner + c; // element (o, 0, c)
    const T *x = in + base;
    A v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      int64_t r = ty + int64_t(by) * k;
      v[k] = cached && active && r < R ? P::load(x[r * inner]) : A(0);
    }
    auto a1 = column_pass<P, 1>(p, x, inner, 0, R, active, cached, v, A(0));
    a1 = block_reduce<S1>(a1, buf1);
    if constexpr (!kCaches<P>) {
      if (ty == 0 && active)
        static_cast<typename P::Out *>(out)[o * inner + c] = p.done(a1);
    } else {
      A p1 = p.mid(a1), p2 = A(0);
      if constexpr (P::kPasses == 2) {
        auto a2 = column_pass<P, 2>(p, x, inner, 0, R, active, cached, v, p1);
        a2 = block_reduce<S2>(a2, buf2);
        if constexpr (P::kRowwise)
          p2 = p.mid2(p1, a2);
        else if (ty == 0 && active)
          static_cast<typename P::Out *>(out)[o * inner + c] = p.done(p1, a2);
      }
      if constexpr (P::kRowwise) {
        T *y = static_cast<T *>(out) + base;
        if (active && cached) {
#pragma unroll
          for (int k = 0; k < N; ++k) {
            int64_t r = ty + int64_t(by) * k;
            if (r < R)
              y[r * inner] = p.write(v[k], r, p1, p2);
          }
        } else if (active) {
          for (int64_t r = ty; r < R; r += by)
            y[r * inner] = p.write(P::load(x[r * inner]), r, p1, p2);
        }
      }
    }
  }
}

// Block b = (unit, chunk) reduces pass `Pass` over rows [chunk * len,
// (chunk + 1) * len) of the unit's columns into part[b * bx + tx]. Pass 2
// reads each column's pass-1 result from p1buf[o * inner + c].
template <class P, int Pass>
__global__ void __launch_bounds__(kMaxBlock)
    split_partial_kernel(P p, const typename P::T *in, int64_t outer,
                         int64_t R, int64_t inner, int64_t tiles,
                         int64_t chunks, int64_t len,
                         const typename P::A *p1buf,
                         typename PassOf<P, Pass>::Acc *part) {
  using A = typename P::A;
  using S = PassOf<P, Pass>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *buf = reinterpret_cast<typename S::Acc *>(smem);
  const int bx = blockDim.x;
  const A none[1] = {A(0)};
  const int64_t blocks = outer * tiles * chunks;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const int64_t u = b / chunks, s = b % chunks;
    const int64_t o = u / tiles, c = (u % tiles) * bx + threadIdx.x;
    const bool active = c < inner;
    const int64_t r0 = s * len, r1 = r0 + len < R ? r0 + len : R;
    A q = Pass == 2 && active ? p1buf[o * inner + c] : A(0);
    auto a = column_pass<P, Pass>(p, in + o * R * inner + c, inner, r0, r1,
                                  active, false, none, q);
    a = block_reduce<S>(a, buf);
    if (threadIdx.y == 0)
      part[b * bx + threadIdx.x] = a;
  }
}

// Block u combines unit u's chunk partials (thread ty takes chunks ty,
// ty + by, ..., then the tree of block_reduce) and finishes pass `Pass`:
// the output for the last pass, the per-column p1buf after pass 1 of two.
template <class P, int Pass>
__global__ void __launch_bounds__(kMaxBlock)
    split_final_kernel(P p, int64_t outer, int64_t inner, int64_t tiles,
                       int64_t chunks, const typename PassOf<P, Pass>::Acc *part,
                       typename P::A *p1buf, void *out) {
  using S = PassOf<P, Pass>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *buf = reinterpret_cast<typename S::Acc *>(smem);
  const int bx = blockDim.x, by = blockDim.y;
  const int64_t units = outer * tiles;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t o = u / tiles, c = (u % tiles) * bx + threadIdx.x;
    typename S::Acc a = S::init();
    for (int64_t s = threadIdx.y; s < chunks; s += by)
      a = S::comb(a, part[(u * chunks + s) * bx + threadIdx.x]);
    a = block_reduce<S>(a, buf);
    if (threadIdx.y == 0 && c < inner) {
      auto *y = static_cast<typename P::Out *>(out);
      if constexpr (P::kPasses == 1)
        y[o * inner + c] = p.done(a);
      else if constexpr (Pass == 1)
        p1buf[o * inner + c] = p.mid(a);
      else
        y[o * inner + c] = p.done(p1buf[o * inner + c], a);
    }
  }
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Calls run.template operator()<N>() with N the elements of a line each of
// `lanes` threads keeps in registers for program P: the fewest of 4, 8 and
// Most that hold a line of R (1 for programs that keep none).
template <class P, int Most, class Run>
void with_items(int64_t R, int64_t lanes, Run &&run) {
  if constexpr (!kCaches<P>)
    run.template operator()<1>();
  else if (R <= lanes * 4)
    run.template operator()<4>();
  else if (R <= lanes * 8)
    run.template operator()<8>();
  else
    run.template operator()<Most>();
}

// The split reduction of launch_reduce: per pass, partials of `chunks`
// chunks of every line, then their combination (two launches per pass).
template <class P>
void launch_split(const ReduceLaunch &l, const P &p, dim3 block, int64_t tiles,
                  int64_t chunks, int64_t cap) {
  using Acc1 = typename P::Acc1;
  using Acc2 = typename P::Acc2;
  const char *name = reduce_kind_name(l.kind);
  const int bx = int(block.x), threads = int(block.x * block.y);
  const int64_t units = l.outer * tiles, n = l.outer * l.R * l.inner;
  const dim3 shown{unsigned(threads), 1u, 1u};
  // Workspace: partials [units * chunks * bx] of the wider accumulator,
  // then (two passes) one pass-1 result per output.
  const int64_t len = ceil_div(l.R, chunks);
  const size_t acc_bytes = std::max(sizeof(Acc1), sizeof(Acc2));
  const size_t part_bytes = (size_t(units * chunks * bx) * acc_bytes + 15) / 16 * 16;
  const size_t p1_bytes = size_t(l.outer * l.inner) * sizeof(typename P::A);
  std::string fn = std::string("kiln::") + name;
  Tensor ws = empty_for(fn.c_str(), Dims{int64_t(part_bytes + p1_bytes)},
                        DType::b8, Device::cuda(l.device));
  auto *part = static_cast<unsigned char *>(ws.data_ptr());
  auto *p1buf = reinterpret_cast<typename P::A *>(part + part_bytes);
  const auto *in = static_cast<const typename P::T *>(l.in);
  dim3 pgrid(unsigned(std::min(units * chunks, cap)));
  dim3 fgrid(unsigned(std::min(units, cap)));
  auto pass = [&]<int Pass>() {
    using Acc = typename PassOf<P, Pass>::Acc;
    size_t smem = size_t(threads) * sizeof(Acc);
    split_partial_kernel<P, Pass><<<pgrid, block, smem, stream_of(l.device)>>>(
        p, in, l.outer, l.R, l.inner, tiles, chunks, len, p1buf,
        reinterpret_cast<Acc *>(part));
    after_launch(name, "split-partial", l.dtype, n, pgrid, shown, l.device);
    split_final_kernel<P, Pass><<<fgrid, block, smem, stream_of(l.device)>>>(
        p, l.outer, l.inner, tiles, chunks, reinterpret_cast<const Acc *>(part),
        p1buf, l.out);
    after_launch(name, "split-final", l.dtype, n, fgrid, shown, l.device);
  };
  pass.template operator()<1>();
  if constexpr (P::kPasses == 2)
    pass.template operator()<2>();
}

// Runs program P for launch l on its device (see the top of this file).
template <class P> void launch_reduce(const ReduceLaunch &l) {
  using T = typename P::T;
  using Acc1 = typename P::Acc1;
  using Acc2 = typename P::Acc2;
  const char *name = reduce_kind_name(l.kind);
  std::string fn = std::string("kiln::") + name;
  set_device(l.device, fn.c_str());
  const int sms = rt::multiprocessor_count(Device::cuda(l.device));
  const P p = make_prog<P>(l);
  const T *in = static_cast<const T *>(l.in);
  const int64_t n = l.outer * l.R * l.inner;

  if (l.inner == 1 && l.R <= kWarpRowMax) {
    const int64_t per_block = kWarpBlock / 32;
    dim3 grid(unsigned(std::min<int64_t>(ceil_div(l.outer, per_block),
                                         int64_t(sms) * (2048 / kWarpBlock))));
    dim3 block(kWarpBlock);
    with_items<P, kWarpItems>(l.R, 32, [&]<int N>() {
      warp_rows_kernel<P, N>
          <<<grid, block, 0, stream_of(l.device)>>>(p, in, l.out, l.outer, l.R);
    });
    after_launch(name, "warp-rows", l.dtype, n, grid, block, l.device);
    return;
  }

  // Block shape: a line per block, or bx adjacent columns per block.
  int bx = 1, by = 64;
  if (l.inner == 1) {
    while (by < kMaxBlock && by * 8 < l.R)
      by *= 2;
  } else {
    while (bx < 32 && bx < l.inner)
      bx *= 2;
    by = kColBlock / bx;
  }
  const int threads = bx * by;
  const int64_t tiles = ceil_div(l.inner, bx);
  const int64_t units = l.outer * tiles;
  const int64_t cap = int64_t(sms) * std::max(1, 2048 / threads);
  dim3 block{unsigned(bx), unsigned(by), 1u};
  dim3 shown{unsigned(threads), 1u, 1u}; // logged block size

  if constexpr (!P::kRowwise) {
    const int64_t min_rows = std::max<int64_t>(by, kMinChunkElems / bx);
    if (units < sms && l.R >= 2 * min_rows) {
      int64_t chunks = std::min(ceil_div(4 * int64_t(sms), units), l.R / min_rows);
      launch_split<P>(l, p, block, tiles, chunks, cap);
      return;
    }
  }
  size_t smem = size_t(threads) * std::max(sizeof(Acc1), sizeof(Acc2));
  dim3 grid(unsigned(std::min(units, cap)));
  // The fewest elements per thread that hold the line. kItems for every
  // line, as before, ran RMS norm over 8192x4096 bf16 at 16 % of the copy
  // floor on an H100 (ncu: 93 registers, one 512-thread block per
  // multiprocessor, 95 instructions per element, half of them the 8 slots
  // no thread of a 4096 line fills).
  with_items<P, kItems>(l.R, by, [&]<int N>() {
    block_kernel<P, N><<<grid, block, smem, stream_of(l.device)>>>(
        p, in, l.out, l.outer, l.R, l.inner, tiles);
  });
  after_launch(name, l.inner == 1 ? "block-rows" : "columns", l.dtype, n,
               grid, shown, l.device);
}

// Group G of reduce_programs.h's reduce_group, instantiated in reduce_G.cu.
template <int G> void cuda_reduce_group(const ReduceLaunch &l);

} // namespace kiln::detail
