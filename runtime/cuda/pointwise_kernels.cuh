// pointwise_kernels.cuh - the eager CUDA kernels of element-wise ops and
// their launchers. Three kernels per (op, In, Common):
//   - a contiguous kernel with 16-byte vector loads and stores (every tensor
//     operand contiguous with the output's shape, pointers aligned);
//   - a strided/broadcast kernel through OffsetCalc, with 32-bit index math
//     when the sizes allow it, 64-bit otherwise.
// All are grid-stride loops with the grid sized from the SM count.
#pragma once

#include "cuda_util.cuh"
#include "kernel_types.h"

#include <climits>
#include <cstdint>
#include <utility>

namespace kiln::detail {

inline constexpr int kThreads = 256;

template <class T, int V> struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Elements per 16-byte access, from the widest storage type involved.
template <class A, class B> constexpr int vec_width() {
  return int(16 / (sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B)));
}

inline bool is_aligned(const void *p, size_t bytes) {
  return (uintptr_t(p) % bytes) == 0;
}

// True when every offset and index of the launch fits in 32 bits.
template <int N>
bool fits_32bit(const OffsetCalc<N> &calc, int64_t n, int64_t threads_total) {
  if (n + threads_total > INT32_MAX)
    return false;
  for (int k = 0; k < N; ++k) {
    int64_t span = 0;
    for (int d = 0; d < calc.rank; ++d) {
      int64_t s = calc.strides[d][k];
      span += (calc.sizes[d] - 1) * (s < 0 ? -s : s);
    }
    if (span > INT32_MAX)
      return false;
  }
  return true;
}

// V elements of operand K: the scalar, or one vector load.
template <int V, class A, class S>
__device__ inline void load_vec(A (&x)[V], const void *p, bool is_scalar,
                                A s, int64_t v) {
  if (is_scalar) {
#pragma unroll
    for (int j = 0; j < V; ++j)
      x[j] = s;
  } else {
    Vec<S, V> r = static_cast<const Vec<S, V> *>(p)[v];
#pragma unroll
    for (int j = 0; j < V; ++j)
      x[j] = A(scalar::load(r.v[j]));
  }
}

template <class A, class S>
__device__ inline A load_one(const void *p, bool is_scalar, A s, int64_t i) {
  return is_scalar ? s : A(scalar::load(static_cast<const S *>(p)[i]));
}

template <OpId Op, class In, class Common>
__global__ void __launch_bounds__(kThreads)
    pw_vec_kernel(int64_t n, PwArgs a) {
  using T = PwTypes<Op, In, Common>;
  using Out = typename T::Out;
  using S0 = typename T::template Src<0>;
  using S1 = typename T::template Src<1>;
  using S2 = typename T::template Src<2>;
  using A0 = typename T::template Arg<0>;
  using A1 = typename T::template Arg<1>;
  using A2 = typename T::template Arg<2>;
  constexpr int V = vec_width<In, Out>();
  const unsigned m = a.scalar_mask;
  const A0 s0 = A0(a.scalar[0]);
  const A1 s1 = A1(a.scalar[1]);
  const A2 s2 = A2(a.scalar[2]);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nv = n / V;
  for (int64_t v = tid; v < nv; v += stride) {
    A0 x0[V];
    A1 x1[V];
    A2 x2[V];
    load_vec<V, A0, S0>(x0, a.in[0], m & 1u, s0, v);
    if constexpr (T::arity > 1)
      load_vec<V, A1, S1>(x1, a.in[1], m & 2u, s1, v);
    if constexpr (T::arity > 2)
      load_vec<V, A2, S2>(x2, a.in[2], m & 4u, s2, v);
    Vec<Out, V> o;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if constexpr (T::arity == 1)
        o.v[j] = convert<Out>(T::Info::apply(x0[j]));
      else if constexpr (T::arity == 2)
        o.v[j] = convert<Out>(T::Info::apply(x0[j], x1[j]));
      else
        o.v[j] = convert<Out>(T::Info::apply(x0[j], x1[j], x2[j]));
    }
    static_cast<Vec<Out, V> *>(a.out)[v] = o;
  }
  for (int64_t i = nv * V + tid; i < n; i += stride) {
    A0 x0 = load_one<A0, S0>(a.in[0], m & 1u, s0, i);
    Out *out = static_cast<Out *>(a.out);
    if constexpr (T::arity == 1) {
      out[i] = convert<Out>(T::Info::apply(x0));
    } else {
      A1 x1 = load_one<A1, S1>(a.in[1], m & 2u, s1, i);
      if constexpr (T::arity == 2) {
        out[i] = convert<Out>(T::Info::apply(x0, x1));
      } else {
        A2 x2 = load_one<A2, S2>(a.in[2], m & 4u, s2, i);
        out[i] = convert<Out>(T::Info::apply(x0, x1, x2));
      }
    }
  }
}

template <OpId Op, class In, class Common, class Index>
__global__ void __launch_bounds__(kThreads)
    pw_strided_kernel(Index n, PwArgs a, OffsetCalc<4> calc) {
  using T = PwTypes<Op, In, Common>;
  using Out = typename T::Out;
  using S0 = typename T::template Src<0>;
  using S1 = typename T::template Src<1>;
  using S2 = typename T::template Src<2>;
  using A0 = typename T::template Arg<0>;
  using A1 = typename T::template Arg<1>;
  using A2 = typename T::template Arg<2>;
  const unsigned m = a.scalar_mask;
  const A0 s0 = A0(a.scalar[0]);
  const A1 s1 = A1(a.scalar[1]);
  const A2 s2 = A2(a.scalar[2]);
  Out *out = static_cast<Out *>(a.out);
  const Index stride = Index(gridDim.x) * Index(blockDim.x);
  for (Index i = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
       i < n; i += stride) {
    Index off[4];
    calc.get(i, off);
    A0 x0 = load_one<A0, S0>(a.in[0], m & 1u, s0, off[1]);
    if constexpr (T::arity == 1) {
      out[off[0]] = convert<Out>(T::Info::apply(x0));
    } else {
      A1 x1 = load_one<A1, S1>(a.in[1], m & 2u, s1, off[2]);
      if constexpr (T::arity == 2) {
        out[off[0]] = convert<Out>(T::Info::apply(x0, x1));
      } else {
        A2 x2 = load_one<A2, S2>(a.in[2], m & 4u, s2, off[3]);
        out[off[0]] = convert<Out>(T::Info::apply(x0, x1, x2));
      }
    }
  }
}

template <OpId Op, class In, class Common>
void launch_pointwise(const PwLaunch &l) {
  using T = PwTypes<Op, In, Common>;
  using Out = typename T::Out;
  constexpr int V = vec_width<In, Out>();
  const char *name = op_name(Op);
  set_device(l.device, "kiln::pointwise");
  bool vec = l.contiguous && is_aligned(l.args.out, sizeof(Out) * V);
  if (vec) {
    size_t bytes[3] = {sizeof(typename T::template Src<0>) * V,
                       sizeof(typename T::template Src<1>) * V,
                       sizeof(typename T::template Src<2>) * V};
    for (int k = 0; k < T::arity; ++k)
      if (!(l.args.scalar_mask & (1u << k)))
        vec = vec && is_aligned(l.args.in[k], bytes[k]);
  }
  dim3 block(kThreads);
  if (vec) {
    dim3 grid(unsigned(grid_for((l.n + V - 1) / V, kThreads)));
    pw_vec_kernel<Op, In, Common>
        <<<grid, block, 0, stream_of(l.device)>>>(l.n, l.args);
    after_launch(name, "contiguous", dtype_of<In>(), l.n, grid, block,
                 l.device);
    return;
  }
  dim3 grid(unsigned(grid_for(l.n, kThreads)));
  bool narrow = fits_32bit(l.calc, l.n, int64_t(grid.x) * kThreads);
  if (narrow)
    pw_strided_kernel<Op, In, Common, int32_t>
        <<<grid, block, 0, stream_of(l.device)>>>(int32_t(l.n), l.args, l.calc);
  else
    pw_strided_kernel<Op, In, Common, int64_t>
        <<<grid, block, 0, stream_of(l.device)>>>(l.n, l.args, l.calc);
  after_launch(name, narrow ? "strided32" : "strided64", dtype_of<In>(), l.n,
               grid, block, l.device);
}

using CudaPwFn = void (*)(const PwLaunch &);
struct CudaPwTable {
  CudaPwFn fn[int(OpId::NumPointwise)][kNumDTypes][kNumDTypes] = {};
};

template <OpId Op> void add_cuda_op(CudaPwTable &t) {
  for_each_combo<Op>([&]<class In, class Common>() {
    t.fn[int(Op)][int(dtype_of<In>())][int(dtype_of<Common>())] =
        &launch_pointwise<Op, In, Common>;
  });
}

// Group G: the ops whose index is G modulo kPwGroups (pointwise_G.cu).
template <int G> void add_cuda_group(CudaPwTable &t) {
#define KILN_POINTWISE(Name, name, ar, rl, traits, identity, cxx, formula,     \
                       decomposition)                                          \
  if constexpr (int(OpId::Name) % kPwGroups == G)                              \
    add_cuda_op<OpId::Name>(t);
#include <kiln/ops.def>
}
template <int G> void fill_cuda_pointwise(CudaPwTable &t);

} // namespace kiln::detail
