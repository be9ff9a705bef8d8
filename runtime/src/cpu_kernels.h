// cpu_kernels.h - the eager CPU kernels: element-wise ops (a contiguous
// loop the compiler vectorises, a strided/broadcast loop), converting
// copies and fills. Each runs through rt::cpu_launch (one launch).
#pragma once

#include "kernel_types.h"
#include "vecmath.h"

#include <algorithm>
#include <utility>

namespace kiln::detail {

// OpenMP splits a kernel into chunks of at least this many elements.
inline constexpr int64_t kCpuGrain = 32768;

void cpu_pointwise(const PwLaunch &l);
void cpu_copy(const CopyLaunch &l);
// `counted`: as cuda_fill's (cuda_backend.h).
void cpu_fill(void *out, DType dtype, double value, int64_t n, bool counted = true);

using RowFn = void (*)(int64_t begin, int64_t end, void *ctx);

// Walks output elements [b, e) row by row: `body(off, step, count)` gets
// the offsets of the row's first element and the innermost strides.
template <int N, class Body>
inline void for_each_row(const OffsetCalc<N> &calc, int64_t b, int64_t e,
                         Body &&body) {
  int r = calc.rank;
  int64_t inner = r ? calc.sizes[r - 1] : 1;
  int64_t step[N];
  for (int k = 0; k < N; ++k)
    step[k] = r ? calc.strides[r - 1][k] : 0;
  for (int64_t i = b; i < e;) {
    int64_t off[N];
    calc.get(i, off);
    int64_t count = std::min(inner - i % inner, e - i);
    body(off, step, count);
    i += count;
  }
}

// Operand K of element i: the weak scalar, or the loaded tensor element.
template <int K, unsigned Mask, class A, class S>
inline A fetch(const S *p, A s, int64_t i) {
  if constexpr ((Mask >> K) & 1u)
    return s;
  else
    return A(scalar::load(p[i]));
}

template <OpId Op, class In, class Common, unsigned Mask>
void pw_contiguous(int64_t b, int64_t e, void *ctx) {
  using T = PwTypes<Op, In, Common>;
  using Out = typename T::Out;
  using A0 = typename T::template Arg<0>;
  using A1 = typename T::template Arg<1>;
  using A2 = typename T::template Arg<2>;
  const PwLaunch &l = *static_cast<const PwLaunch *>(ctx);
  Out *out = static_cast<Out *>(l.args.out);
  auto *p0 = static_cast<const typename T::template Src<0> *>(l.args.in[0]);
  auto *p1 = static_cast<const typename T::template Src<1> *>(l.args.in[1]);
  auto *p2 = static_cast<const typename T::template Src<2> *>(l.args.in[2]);
  A0 s0 = A0(l.args.scalar[0]);
  A1 s1 = A1(l.args.scalar[1]);
  A2 s2 = A2(l.args.scalar[2]);
  constexpr auto vector_fn = direct_vector_math<Op, A0>();
  if constexpr (T::arity == 1 && Mask == 0 && vector_fn != nullptr) {
    // A vector at a time (vecmath.h); the last, partial one padded.
    constexpr int64_t lanes = 16 / sizeof(A0);
    for (int64_t i = b; i < e; i += lanes) {
      int64_t m = std::min(lanes, e - i);
      A0 __attribute__((vector_size(16))) v = {};
      for (int64_t k = 0; k < m; ++k)
        v[k] = A0(scalar::load(p0[i + k]));
      v = vector_fn(v);
      for (int64_t k = 0; k < m; ++k)
        out[i + k] = convert<Out>(v[k]);
    }
  } else if constexpr (T::arity == 1) {
#pragma omp simd
    for (int64_t i = b; i < e; ++i)
      out[i] = convert<Out>(T::Info::apply(fetch<0, Mask>(p0, s0, i)));
  } else if constexpr (T::arity == 2) {
#pragma omp simd
    for (int64_t i = b; i < e; ++i)
      out[i] = convert<Out>(T::Info::apply(fetch<0, Mask>(p0, s0, i),
                                           fetch<1, Mask>(p1, s1, i)));
  } else {
#pragma omp simd
    for (int64_t i = b; i < e; ++i)
      out[i] = convert<Out>(T::Info::apply(fetch<0, Mask>(p0, s0, i),
                                           fetch<1, Mask>(p1, s1, i),
                                           fetch<2, Mask>(p2, s2, i)));
  }
}

template <OpId Op, class In, class Common>
void pw_strided(int64_t b, int64_t e, void *ctx) {
  using T = PwTypes<Op, In, Common>;
  using Out = typename T::Out;
  using A0 = typename T::template Arg<0>;
  using A1 = typename T::template Arg<1>;
  using A2 = typename T::template Arg<2>;
  const PwLaunch &l = *static_cast<const PwLaunch *>(ctx);
  Out *out = static_cast<Out *>(l.args.out);
  auto *p0 = static_cast<const typename T::template Src<0> *>(l.args.in[0]);
  auto *p1 = static_cast<const typename T::template Src<1> *>(l.args.in[1]);
  auto *p2 = static_cast<const typename T::template Src<2> *>(l.args.in[2]);
  unsigned m = l.args.scalar_mask;
  A0 s0 = A0(l.args.scalar[0]);
  A1 s1 = A1(l.args.scalar[1]);
  A2 s2 = A2(l.args.scalar[2]);
  for_each_row<4>(l.calc, b, e, [&](const int64_t(&off)[4],
                                    const int64_t(&st)[4], int64_t count) {
    for (int64_t j = 0; j < count; ++j) {
      A0 x0 = (m & 1u) ? s0 : A0(scalar::load(p0[off[1] + j * st[1]]));
      if constexpr (T::arity == 1) {
        out[off[0] + j * st[0]] = convert<Out>(T::Info::apply(x0));
      } else {
        A1 x1 = (m & 2u) ? s1 : A1(scalar::load(p1[off[2] + j * st[2]]));
        if constexpr (T::arity == 2) {
          out[off[0] + j * st[0]] = convert<Out>(T::Info::apply(x0, x1));
        } else {
          A2 x2 = (m & 4u) ? s2 : A2(scalar::load(p2[off[3] + j * st[3]]));
          out[off[0] + j * st[0]] = convert<Out>(T::Info::apply(x0, x1, x2));
        }
      }
    }
  });
}

// Kernels of one (op, In, Common): the contiguous loop per scalar mask
// (the all-scalar mask has no tensor and never runs) and the strided loop.
struct CpuPwEntry {
  RowFn contiguous[8] = {};
  RowFn strided = nullptr;
};
struct CpuPwTable {
  CpuPwEntry e[int(OpId::NumPointwise)][kNumDTypes][kNumDTypes];
};

template <OpId Op, class In, class Common, unsigned... Masks>
void add_masks(CpuPwEntry &entry, std::integer_sequence<unsigned, Masks...>) {
  ((entry.contiguous[Masks] = &pw_contiguous<Op, In, Common, Masks>), ...);
}

template <OpId Op> void add_op(CpuPwTable &t) {
  for_each_combo<Op>([&]<class In, class Common>() {
    CpuPwEntry &entry =
        t.e[int(Op)][int(dtype_of<In>())][int(dtype_of<Common>())];
    entry.strided = &pw_strided<Op, In, Common>;
    add_masks<Op, In, Common>(
        entry, std::make_integer_sequence<unsigned,
                                          (1u << OpInfo<Op>::arity) - 1>());
  });
}

// Group G instantiates the ops whose index is G modulo kPwGroups; each
// group lives in its own file (pointwise_cpu_G.cpp).
template <int G> void add_group(CpuPwTable &t) {
#define KILN_POINTWISE(Name, name, ar, rl, traits, identity, cxx, formula,     \
                       decomposition)                                          \
  if constexpr (int(OpId::Name) % kPwGroups == G)                              \
    add_op<OpId::Name>(t);
#include <kiln/ops.def>
}
template <int G> void fill_cpu_pointwise(CpuPwTable &t);

} // namespace kiln::detail
