// reduce_programs.h - the arithmetic of the eager reductions and row-wise
// ops, shared by the CPU loops (reduce_cpu.cpp) and the CUDA kernels
// (cuda/reduce_kernels.cuh), so both follow the op table (kiln/ops.def)
// step by step.
//
// A reduction runs over a contiguous input seen as [outer, R, inner],
// reducing R. Each op is a "program" of one or two reduction passes over a
// line of R elements and a finish:
//   pass 1   acc1 = comb1 over r of elem1(x_r, r)         (from init1)
//   mid      p1 = mid(acc1)                 (two-pass or row-wise programs)
//   pass 2   acc2 = comb2 over r of elem2(x_r, p1)        (from init2)
//   finish   reductions: out = done(acc1) or done(p1, acc2)
//            row-wise:   p2 = mid2(p1, acc2); out_r = write(x_r, r, p1, p2)
// The identities and combines are kiln::scalar::init_<name> / combine_<name>
// (KILN_REDUCTION); every other step is one kiln::scalar::op_<name> of a
// KILN_COMPOSITE decomposition, in its order, in the compute type A.
#pragma once

#include "detail.h"
#include "kernel_types.h"

#include <kiln/op_traits.h>
#include <kiln/scalar.h>

#include <math.h>
#include <type_traits>

namespace kiln::detail {

// The eager reductions and row-wise ops: the KILN_REDUCTION entries of
// kiln/ops.def, then the KILN_COMPOSITE ones, in the table's order.
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,         \
                       formula, decomposition)
#define KILN_REDUCTION(Name, name, rule, identity, combine) Name,
#define KILN_COMPOSITE(Name, name, arity, form, operands, decomposition) Name,
enum class ReduceKind : uint8_t {
#include <kiln/ops.def>
};

// What the eager checks and the kernel groups need of a ReduceKind.
enum class ReduceRule : uint8_t { SUM, SAME, INDEX, COMPOSITE };
struct ReduceKindInfo {
  const char *name; // as kiln/ops.h spells the op ("log_softmax")
  ReduceRule rule;  // KILN_REDUCTION's rule (SUM, SAME, INDEX) or COMPOSITE
  op_traits::Form form; // KILN_COMPOSITE's; REDUCE for KILN_REDUCTION's
};
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,         \
                       formula, decomposition)
#define KILN_REDUCTION(Name, name, rule, identity, combine)                    \
  {#name, ReduceRule::rule, op_traits::Form::REDUCE},
#define KILN_COMPOSITE(Name, name, arity, form, operands, decomposition)       \
  {#name, ReduceRule::COMPOSITE, op_traits::Form::form},
inline constexpr ReduceKindInfo kReduceKinds[] = {
#include <kiln/ops.def>
};

constexpr const ReduceKindInfo &reduce_kind_info(ReduceKind k) {
  return kReduceKinds[int(k)];
}
constexpr const char *reduce_kind_name(ReduceKind k) {
  return reduce_kind_info(k).name;
}
// The result has the input's shape (softmax, the norms), rather than one
// value per reduced line.
constexpr bool is_rowwise(ReduceKind k) {
  return reduce_kind_info(k).form != op_traits::Form::REDUCE;
}

// One eager reduction or row-wise op as the host prepared it. `in` is
// contiguous [outer, R, inner]; `out` is contiguous [outer, inner] for
// reductions, [outer, R, inner] for row-wise ops.
struct ReduceLaunch {
  ReduceKind kind = ReduceKind::Sum;
  DType dtype = DType::f32; // the input's
  const void *in = nullptr;
  void *out = nullptr;
  int64_t outer = 1, R = 1, inner = 1;
  int64_t correction = 1; // var
  double eps = 0;         // layer_norm, rms_norm
  const void *weight = nullptr, *bias = nullptr; // norms; null for none
  int64_t weight_stride = 1, bias_stride = 1;
  int device = 0;
};

// Runs one reduction on the CPU (reduce_cpu.cpp) or on CUDA device
// l.device (cuda/reduce*.cu): one launch; the CUDA split reduction of few
// long lines takes two per pass (see cuda/reduce_kernels.cuh).
void cpu_reduce(const ReduceLaunch &l);
void cuda_reduce(const ReduceLaunch &l);

template <class T>
inline constexpr bool is_float_storage =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// Accumulator type: the compute type of floats, i64 for integers and bools.
template <class T>
using acc_t = std::conditional_t<is_float_storage<T>, scalar::opmath_t<T>,
                                 int64_t>;

// Common parts of every program over storage type T.
template <class T_> struct ProgBase {
  using T = T_;
  using A = acc_t<T>;
  using Acc2 = A;
  static constexpr int kPasses = 1;
  static constexpr bool kRowwise = false;
  int64_t n = 0; // R, the reduce_size of the decompositions

  KILN_HD static A load(T v) { return A(scalar::load(v)); }
  KILN_HD static A init2() { return scalar::init_sum<A>(); }
  KILN_HD static A comb2(A a, A b) { return scalar::combine_sum(a, b); }
  KILN_HD A elem2(A x, A) const { return x; }
  KILN_HD A mid(A a) const { return a; }
  KILN_HD A mid2(A, A a) const { return a; }
};

// Primitive reductions: one pass, and the table's identity and combine.
template <class T> struct SumProg : ProgBase<T> {
  using A = acc_t<T>;
  using Acc1 = A;
  using Out = std::conditional_t<is_float_storage<T>, T, int64_t>;
  KILN_HD static Acc1 init1() { return scalar::init_sum<A>(); }
  KILN_HD static Acc1 comb1(Acc1 a, Acc1 b) { return scalar::combine_sum(a, b); }
  KILN_HD static Acc1 elem1(A x, int64_t) { return x; }
  KILN_HD Out done(Acc1 s) const { return scalar::store<Out>(s); }
};

template <class T> struct AmaxProg : ProgBase<T> {
  using A = acc_t<T>;
  using Acc1 = A;
  using Out = T;
  KILN_HD static Acc1 init1() { return scalar::init_amax<A>(); }
  KILN_HD static Acc1 comb1(Acc1 a, Acc1 b) { return scalar::combine_amax(a, b); }
  KILN_HD static Acc1 elem1(A x, int64_t) { return x; }
  KILN_HD Out done(Acc1 m) const { return scalar::store<Out>(m); }
};

template <class T> struct AminProg : ProgBase<T> {
  using A = acc_t<T>;
  using Acc1 = A;
  using Out = T;
  KILN_HD static Acc1 init1() { return scalar::init_amin<A>(); }
  KILN_HD static Acc1 comb1(Acc1 a, Acc1 b) { return scalar::combine_amin(a, b); }
  KILN_HD static Acc1 elem1(A x, int64_t) { return x; }
  KILN_HD Out done(Acc1 m) const { return scalar::store<Out>(m); }
};

template <class T> struct ArgmaxProg : ProgBase<T> {
  using A = acc_t<T>;
  using Acc1 = scalar::ArgAcc<A>;
  using Out = int64_t;
  KILN_HD static Acc1 init1() { return scalar::init_argmax<A>(); }
  KILN_HD static Acc1 comb1(Acc1 a, Acc1 b) { return scalar::combine_argmax(a, b); }
  KILN_HD static Acc1 elem1(A x, int64_t r) { return Acc1{x, r}; }
  KILN_HD Out done(Acc1 a) const { return a.index; }
};

// Composites (KILN_COMPOSITE), floating types only.

// mean: %s = sum %a; %n = reduce_size %a; %r = div %s, %n
template <class T> struct MeanProg : SumProg<T> {
  using A = acc_t<T>;
  using Out = T;
  KILN_HD Out done(A s) const { return scalar::store<T>(scalar::op_div(s, A(this->n))); }
};

// var: %m = mean %a; %d = sub %a, %m; %q = mul %d, %d; %s = sum %q;
// %k = sub %n, %b; %z = maximum %k, 0; %r = div %s, %z
template <class T> struct VarProg : SumProg<T> {
  using A = acc_t<T>;
  using Out = T;
  static constexpr int kPasses = 2;
  int64_t correction = 1;
  KILN_HD A mid(A s) const { return scalar::op_div(s, A(this->n)); }
  KILN_HD A elem2(A x, A m) const {
    A d = scalar::op_sub(x, m);
    return scalar::op_mul(d, d);
  }
  KILN_HD Out done(A, A s) const {
    int64_t k = scalar::op_maximum(scalar::op_sub(this->n, correction), int64_t(0));
    return scalar::store<T>(scalar::op_div(s, A(k)));
  }
};

// logsumexp: %m = amax %a; %f = abs %m; %i = eq %f, inf;
// %z = where %i, 0.0, %m; %d = sub %a, %z; %e = exp %d; %s = sum %e;
// %l = log %s; (%z2 = %z); %r = add %l, %z2
template <class T> struct LogsumexpProg : AmaxProg<T> {
  using A = acc_t<T>;
  static constexpr int kPasses = 2;
  KILN_HD A mid(A m) const {
    return scalar::op_where(scalar::op_eq(scalar::op_abs(m), A(INFINITY)), A(0), m);
  }
  KILN_HD A elem2(A x, A z) const { return scalar::op_exp(scalar::op_sub(x, z)); }
  KILN_HD T done(A z, A s) const {
    return scalar::store<T>(scalar::op_add(scalar::op_log(s), z));
  }
};

// softmax: %m = amax %a; %d = sub %a, %m; %e = exp %d; %s = sum %e;
// %r = div %e, %s
template <class T> struct SoftmaxProg : AmaxProg<T> {
  using A = acc_t<T>;
  static constexpr int kPasses = 2;
  static constexpr bool kRowwise = true;
  KILN_HD A elem2(A x, A m) const { return scalar::op_exp(scalar::op_sub(x, m)); }
  KILN_HD T write(A x, int64_t, A m, A s) const {
    return scalar::store<T>(scalar::op_div(scalar::op_exp(scalar::op_sub(x, m)), s));
  }
};

// log_softmax: ... %s = sum %e; %l = log %s; %r = sub %d, %l
template <class T> struct LogSoftmaxProg : SoftmaxProg<T> {
  using A = acc_t<T>;
  KILN_HD A mid2(A, A s) const { return scalar::op_log(s); }
  KILN_HD T write(A x, int64_t, A m, A l) const {
    return scalar::store<T>(scalar::op_sub(scalar::op_sub(x, m), l));
  }
};

// Weight and bias of the norms: one element per position along R.
template <class T> struct Affine {
  const T *weight = nullptr, *bias = nullptr;
  int64_t weight_stride = 1, bias_stride = 1;
};

// layer_norm: %m = mean %a; %x = sub %a, %m; %q = mul %x, %x;
// %v = mean %q; %e = add %v, eps; %s = rsqrt %e; %y = mul %x, %s;
// %w = mul %y, weight; %r = add %w, bias
template <class T> struct LayerNormProg : SumProg<T> {
  using A = acc_t<T>;
  using Out = T;
  static constexpr int kPasses = 2;
  static constexpr bool kRowwise = true;
  double eps = 0;
  Affine<T> affine;
  KILN_HD A mid(A s) const { return scalar::op_div(s, A(this->n)); }
  KILN_HD A elem2(A x, A m) const {
    A d = scalar::op_sub(x, m);
    return scalar::op_mul(d, d);
  }
  KILN_HD A mid2(A, A q) const {
    A v = scalar::op_div(q, A(this->n));
    return scalar::op_rsqrt(scalar::op_add(v, A(eps)));
  }
  KILN_HD T write(A x, int64_t r, A m, A s) const {
    A y = scalar::op_mul(scalar::op_sub(x, m), s);
    if (affine.weight)
      y = scalar::op_mul(y, A(scalar::load(affine.weight[r * affine.weight_stride])));
    if (affine.bias)
      y = scalar::op_add(y, A(scalar::load(affine.bias[r * affine.bias_stride])));
    return scalar::store<T>(y);
  }
};

// rms_norm: %q = mul %a, %a; %m = mean %q; %e = add %m, eps;
// %s = rsqrt %e; %y = mul %a, %s; %r = mul %y, weight
template <class T> struct RmsNormProg : SumProg<T> {
  using A = acc_t<T>;
  using Out = T;
  static constexpr bool kRowwise = true;
  double eps = 0;
  Affine<T> affine;
  KILN_HD static A elem1(A x, int64_t) { return scalar::op_mul(x, x); }
  KILN_HD A mid(A q) const {
    A m = scalar::op_div(q, A(this->n));
    return scalar::op_rsqrt(scalar::op_add(m, A(eps)));
  }
  KILN_HD T write(A x, int64_t r, A s, A) const {
    A y = scalar::op_mul(x, s);
    if (affine.weight)
      y = scalar::op_mul(y, A(scalar::load(affine.weight[r * affine.weight_stride])));
    return scalar::store<T>(y);
  }
};

// Pass 1 or 2 of program P, for code generic over the pass.
template <class P, int Pass> struct PassOf;
template <class P> struct PassOf<P, 1> {
  using A = typename P::A;
  using Acc = typename P::Acc1;
  KILN_HD static Acc init() { return P::init1(); }
  KILN_HD static Acc comb(Acc a, Acc b) { return P::comb1(a, b); }
  KILN_HD static Acc elem(const P &p, A x, int64_t r, A) { return p.elem1(x, r); }
};
template <class P> struct PassOf<P, 2> {
  using A = typename P::A;
  using Acc = typename P::Acc2;
  KILN_HD static Acc init() { return P::init2(); }
  KILN_HD static Acc comb(Acc a, Acc b) { return P::comb2(a, b); }
  KILN_HD static Acc elem(const P &p, A x, int64_t, A p1) { return p.elem2(x, p1); }
};

// Program P with the launch's parameters filled in.
template <class P> P make_prog(const ReduceLaunch &l) {
  using T = typename P::T;
  P p;
  p.n = l.R;
  if constexpr (requires(P q) { q.correction; })
    p.correction = l.correction;
  if constexpr (requires(P q) { q.eps; }) {
    p.eps = l.eps;
    p.affine.weight = static_cast<const T *>(l.weight);
    p.affine.bias = static_cast<const T *>(l.bias);
    p.affine.weight_stride = l.weight_stride;
    p.affine.bias_stride = l.bias_stride;
  }
  return p;
}

// Kernels are instantiated in three groups (separate CUDA files):
// primitive reductions, composite reductions, row-wise ops.
constexpr int reduce_group(ReduceKind k) {
  return reduce_kind_info(k).rule != ReduceRule::COMPOSITE ? 0
         : is_rowwise(k)                                   ? 2
                                                           : 1;
}

// Calls f.template operator()<Prog<T>>() for the launch's kind and dtype
// (T its storage type), instantiating the programs of group G (all for
// G < 0). Fails for a kind and dtype with no kernel.
template <int G, class F> void dispatch_reduce(const ReduceLaunch &l, F &&f) {
  bool done = false;
  auto call = [&]<template <class> class Prog, class T, ReduceKind K>() {
    if constexpr (G < 0 || G == reduce_group(K)) {
      if (l.kind == K && !done) {
        f.template operator()<Prog<T>>();
        done = true;
      }
    }
  };
  dispatch_dtype(l.dtype, [&]<class T>() {
    call.template operator()<SumProg, T, ReduceKind::Sum>();
    call.template operator()<AmaxProg, T, ReduceKind::Amax>();
    call.template operator()<AminProg, T, ReduceKind::Amin>();
    call.template operator()<ArgmaxProg, T, ReduceKind::Argmax>();
    if constexpr (is_float_storage<T>) {
      call.template operator()<MeanProg, T, ReduceKind::Mean>();
      call.template operator()<VarProg, T, ReduceKind::Var>();
      call.template operator()<LogsumexpProg, T, ReduceKind::Logsumexp>();
      call.template operator()<SoftmaxProg, T, ReduceKind::Softmax>();
      call.template operator()<LogSoftmaxProg, T, ReduceKind::LogSoftmax>();
      call.template operator()<LayerNormProg, T, ReduceKind::LayerNorm>();
      call.template operator()<RmsNormProg, T, ReduceKind::RmsNorm>();
    }
  });
  if (!done)
    fail("kiln::%s: no kernel for %s", reduce_kind_name(l.kind),
         dtype_name(l.dtype));
}

} // namespace kiln::detail
