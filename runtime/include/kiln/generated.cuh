// Device-side helpers for the CUDA kernels the Kiln plugin generates:
// 16-byte vector loads and stores, the op table's reduction combines as
// functors, and the reduction over a row's thread group. The generated .cu
// file includes this header (nvcc's cache key hashes it with the source);
// test/unit/Inputs/launch_kernels.cu tests it on the GPU. The host side is
// kiln/generated.h.
#pragma once

#include <kiln/kernel_abi.h>
#include <kiln/scalar.h>

namespace kiln::gen {

// V elements of T moved as one access (narrower operands of a kernel move
// V elements in 8, 4, 2 or 1 bytes).
template <class T, int V> struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// What the rows kernel holds of a row's input for its passes: the Vec it
// loaded, except for bool, whose V bytes stay packed in 32-bit words and
// are tested in place (one LOP3 with the byte's mask): as a Vec<bool, V>,
// nvcc split each byte into a register of its own, so a bf16 masked
// softmax over rows of 1024 (a warp a row, 32 bools a lane) took 118
// registers, 22 % of the warps active (ncu on an H200;
// bench/results/2026-11-30-h200-masked.md).
template <int V> struct PackedBools {
  struct Bytes {
    unsigned w[(V + 3) / 4];
    __device__ __forceinline__ bool operator[](int j) const {
      return (w[j >> 2] >> (8 * (j & 3))) & 0xffu;
    }
  } v;
  __device__ __forceinline__ PackedBools &operator=(const Vec<bool, V> &x) {
    if constexpr (V % 4 != 0)
      v.w[V / 4] = 0;
    memcpy(v.w, &x, V);
    return *this;
  }
};
template <class T, int V> struct HeldOf { using type = Vec<T, V>; };
template <int V> struct HeldOf<bool, V> { using type = PackedBools<V>; };
template <class T, int V> using Held = typename HeldOf<T, V>::type;

template <int B> struct BitsOf;
template <> struct BitsOf<16> { using type = uint4; };
template <> struct BitsOf<8> { using type = uint2; };
template <> struct BitsOf<4> { using type = unsigned; };
template <> struct BitsOf<2> { using type = unsigned short; };
template <> struct BitsOf<1> { using type = unsigned char; };

// p is aligned to sizeof(T) * V.
template <int V, class T>
__device__ __forceinline__ Vec<T, V> vec_load(const T *p) {
  return *reinterpret_cast<const Vec<T, V> *>(p);
}

// The V elements at p (aligned to sizeof(T) * V) when `contiguous`, else
// *p in each of the V lanes (an operand broadcast along the inner dim).
template <int V, class T>
__device__ __forceinline__ Vec<T, V> vec_load_or_splat(const T *p,
                                                       bool contiguous) {
  if (contiguous)
    return vec_load<V>(p);
  Vec<T, V> r;
  const T x = *p;
#pragma unroll
  for (int j = 0; j < V; ++j)
    r.v[j] = x;
  return r;
}

// Stores go through __stwb (one st.global.wb of the full width): storing
// the struct let nvcc split some into one store per element (the split
// kernels' st.global.f32 x 4 instead of st.global.v4.f32: where(sum)'s
// second pass 0.1420 -> 0.1398 ms on an H200).
template <class T, int V>
__device__ __forceinline__ void vec_store(T *p, const Vec<T, V> &v) {
  using B = typename BitsOf<sizeof(T) * V>::type;
  B b;
  memcpy(&b, &v, sizeof(B));
  __stwb(reinterpret_cast<B *>(p), b);
}

// Cache hints of the loop kernel, which reads a row from memory once per
// pass (kiln::gen::plan_cuda's RedMode::loop). A load of a row that a later
// pass reads again asks L2 to keep it (evict_last, through the policy
// l2_evict_last() makes); the last pass's loads of a row read before are
// streaming (ld.global.cs: evicted first), and so are its stores (the
// kernel does not read its output). On an H200, hand-written variants of
// the loop kernel (bench/results/2026-11-28-h200-loop-lean.md): softmax
// 1048x32000 f32 0.0917 -> 0.0806 ms with these hints.
__device__ __forceinline__ uint64_t l2_evict_last() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

template <int V, class T>
__device__ __forceinline__ Vec<T, V> vec_load_keep(const T *p, uint64_t policy) {
  using B = typename BitsOf<sizeof(T) * V>::type;
  B b;
  if constexpr (sizeof(B) == 16)
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(b.x), "=r"(b.y), "=r"(b.z), "=r"(b.w)
                 : "l"(p), "l"(policy));
  else if constexpr (sizeof(B) == 8)
    asm volatile("ld.global.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
                 : "=r"(b.x), "=r"(b.y)
                 : "l"(p), "l"(policy));
  else if constexpr (sizeof(B) == 4)
    asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;"
                 : "=r"(b)
                 : "l"(p), "l"(policy));
  else if constexpr (sizeof(B) == 2)
    asm volatile("ld.global.L2::cache_hint.u16 %0, [%1], %2;"
                 : "=h"(b)
                 : "l"(p), "l"(policy));
  else
    b = *reinterpret_cast<const B *>(p);
  Vec<T, V> r;
  memcpy(&r, &b, sizeof(B));
  return r;
}

template <int V, class T>
__device__ __forceinline__ Vec<T, V> vec_load_last(const T *p) {
  using B = typename BitsOf<sizeof(T) * V>::type;
  const B b = __ldcs(reinterpret_cast<const B *>(p));
  Vec<T, V> r;
  memcpy(&r, &b, sizeof(B));
  return r;
}

template <class T, int V>
__device__ __forceinline__ void vec_store_stream(T *p, const Vec<T, V> &v) {
  using B = typename BitsOf<sizeof(T) * V>::type;
  B b;
  memcpy(&b, &v, sizeof(B));
  __stcs(reinterpret_cast<B *>(p), b);
}

// The same hints element by element (the `loopany` kernel).
template <class T>
__device__ __forceinline__ T load_keep(const T *p, uint64_t policy) {
  return vec_load_keep<1>(p, policy).v[0];
}
template <class T> __device__ __forceinline__ T load_last(const T *p) {
  return vec_load_last<1>(p).v[0];
}
template <class T> __device__ __forceinline__ void store_stream(T *p, T v) {
  Vec<T, 1> x;
  x.v[0] = v;
  vec_store_stream(p, x);
}

// The op table's reduction combines as functors: red_sum, red_amax, ...
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition)
#define KILN_REDUCTION(Name, name, rule, init_expr, combine_expr)             \
  struct red_##name {                                                          \
    template <class A> __device__ static A combine(A a, A b) {                 \
      return kiln::scalar::combine_##name(a, b);                               \
    }                                                                          \
  };
#include <kiln/ops.def>

template <class T> __device__ __forceinline__ T shfl_xor(T v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ bool shfl_xor(bool v, int m) {
  return __shfl_xor_sync(0xffffffffu, int(v), m) != 0;
}
template <class A>
__device__ __forceinline__ kiln::scalar::ArgAcc<A>
shfl_xor(kiln::scalar::ArgAcc<A> v, int m) {
  return {shfl_xor(v.value, m), shfl_xor(v.index, m)};
}

template <class A>
__device__ __forceinline__ kiln::scalar::MomentAcc<A>
shfl_xor(kiln::scalar::MomentAcc<A> v, int m) {
  return {shfl_xor(v.shift, m), shfl_xor(v.mean, m), shfl_xor(v.m2, m),
          shfl_xor(v.n, m)};
}
// sum_sq_dev, a reduction of the compiler's, not of the op table.
struct red_sum_sq_dev {
  template <class A> __device__ static A combine(A a, A b) {
    return kiln::scalar::combine_sum_sq_dev(a, b);
  }
};

// Reduces v over the tpr threads of a row (a power of two; consecutive
// threads, the group aligned to tpr): the lanes of a warp when tpr <= 32,
// else the whole block (tpr == blockDim.x) through smem, which holds
// blockDim.x / 32 values. Every thread of the row gets the result, by a
// fixed tree: deterministic. Every lane shuffles at every step and a
// step past the group's width keeps v (a select): a shuffle under the
// run-time `m < width` was a branch and a divergence check around each
// (6 instructions a step where this takes 3; the bias + head split +
// softmax kernel's warp-per-row reductions, H200 ncu).
template <class Op, class A>
__device__ __forceinline__ A row_reduce(A v, int tpr, A *smem) {
  const int width = tpr < 32 ? tpr : 32;
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    const A other = shfl_xor(v, m);
    v = m < width ? Op::combine(v, other) : v;
  }
  if (tpr <= 32)
    return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = tpr / 32;
  __syncthreads(); // smem may still be read by the previous reduction
  if (lane == 0)
    smem[warp] = v;
  __syncthreads();
  v = smem[lane & (nw - 1)];
#pragma unroll
  for (int m = 16; m > 0; m /= 2)
    if (m < nw)
      v = Op::combine(v, shfl_xor(v, m));
  return v;
}

// One step of row_moments_equal: the moments of this thread's half and of
// lane ^ m's, merged where `active`.
template <class A>
__device__ __forceinline__ void merge_equal_halves(A &mean, A &m2, A &n, int m,
                                                   bool active) {
  const A om = shfl_xor(mean, m), oq = shfl_xor(m2, m);
  const A d = om - mean;
  if (active) {
    m2 = m2 + oq + d * d * (A(0.5) * n);
    mean = A(0.5) * (mean + om);
    n = n + n;
  }
}
// A row's mean and m2 (the sum of squared deviations from the mean) from
// its tpr threads' (a power of two, the whole block when more than a
// warp, as row_reduce), each thread's over the same n elements: Chan's
// merge of two halves of equal counts, the mean their average and m2 +=
// d^2 n / 2, no division. Both partners of a step compute the same sums,
// so every thread ends with the row's values (deterministic). smem holds
// two values per warp. The rows kernel that re-reads the row
// (LowerReduceCuda.cpp, cuda_rows_reread) merges its threads' moments
// with it; kiln::scalar::MomentAcc's merge (a division and four shuffles
// a step) ran 2.9x the instructions (bench/results/2026-12-01-h200-ln-rows.md).
template <class A>
__device__ __forceinline__ void row_moments_equal(A &mean, A &m2, A n, int tpr,
                                                  A *smem) {
  const int width = tpr < 32 ? tpr : 32;
#pragma unroll
  for (int m = 1; m < 32; m *= 2)
    merge_equal_halves(mean, m2, n, m, m < width);
  if (tpr <= 32)
    return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = tpr / 32;
  __syncthreads(); // smem may still be read by a previous reduction
  if (lane == 0) {
    smem[warp] = mean;
    smem[16 + warp] = m2;
  }
  __syncthreads();
  mean = smem[lane & (nw - 1)];
  m2 = smem[16 + (lane & (nw - 1))];
#pragma unroll
  for (int m = 1; m < 16; m *= 2)
    merge_equal_halves(mean, m2, n, m, m < nw);
}

// Reduces v over the tpr threads of a column-mode row (RedMode::cols): a
// block of cx * tpr threads (both powers of two, cx <= 32), thread t of row
// t % cx, so that a warp's loads of one position along R read cx
// neighbours in memory. Within a warp the lanes of a row are cx apart (a
// shuffle for each m >= cx); across warps, through smem, which holds
// blockDim.x / 32 * cx values, each row's combined in warp order (the
// result does not depend on timing). Every thread of the row gets it.
template <class Op, class A>
__device__ __forceinline__ A col_reduce(A v, int tpr, int cx, A *smem) {
  const int threads = tpr * cx;
#pragma unroll
  for (int m = 16; m > 0; m /= 2)
    if (m >= cx && m < threads)
      v = Op::combine(v, shfl_xor(v, m));
  if (threads <= 32)
    return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = threads / 32;
  __syncthreads(); // smem may still be read by the previous reduction
  if (lane < cx)
    smem[warp * cx + lane] = v;
  __syncthreads();
  const int c = threadIdx.x % cx;
  v = smem[c];
  for (int w = 1; w < nw; ++w)
    v = Op::combine(v, smem[w * cx + c]);
  return v;
}

} // namespace kiln::gen
