// CPU scaled dot-product attention (attention_impl.h): one query row per
// OpenMP work item; its S scores in a per-thread buffer (never the L x S
// matrix), a max-shifted softmax, then the weighted sum of v's rows.
#include "attention_impl.h"

#include <kiln/rt.h>
#include <kiln/scalar.h>
#include <kiln/stats.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kiln::detail {

namespace {

template <class T> void run(const AttnArgs &a) {
  using C = scalar::opmath_t<T>; // float, or double for f64
  const T *q = static_cast<const T *>(a.q);
  const T *k = static_cast<const T *>(a.k);
  const T *v = static_cast<const T *>(a.v);
  T *out = static_cast<T *>(a.out);
  const int64_t G = a.Hq / a.Hkv, rows = a.B * a.Hq * a.L;
  const C scale = C(a.scale), ninf = -std::numeric_limits<C>::infinity();
#pragma omp parallel
  {
    std::vector<C> s(size_t(a.S)), qr(size_t(a.D)), acc(size_t(a.Dv));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % a.L, bh = r / a.L, h = bh % a.Hq, b = bh / a.Hq,
                    hk = h / G;
      const T *qi = q + b * a.q_stride[0] + h * a.q_stride[1] + i * a.q_stride[2];
      const T *kb = k + b * a.k_stride[0] + hk * a.k_stride[1];
      const T *vb = v + b * a.v_stride[0] + hk * a.v_stride[1];
      for (int64_t d = 0; d < a.D; ++d)
        qr[d] = scalar::load(qi[d * a.q_stride[3]]);
      // The row's max is NaN when a score is (exp(x - NaN) then makes the
      // row NaN, as torch's softmax does), -inf when every key is masked.
      C m = ninf;
      for (int64_t j = 0; j < a.S; ++j) {
        C bias = 0;
        if (a.causal && j > i)
          bias = ninf;
        else if (a.mask) {
          const int64_t o = b * a.m_stride[0] + h * a.m_stride[1] +
                            i * a.m_stride[2] + j * a.m_stride[3];
          if (a.mask_bool)
            bias = static_cast<const bool *>(a.mask)[o] ? C(0) : ninf;
          else
            bias = scalar::load(static_cast<const T *>(a.mask)[o]);
        }
        if (bias == ninf) {
          s[j] = ninf;
          continue;
        }
        const T *kj = kb + j * a.k_stride[2];
        C dot = 0;
        for (int64_t d = 0; d < a.D; ++d)
          dot += qr[d] * scalar::load(kj[d * a.k_stride[3]]);
        s[j] = dot * scale + bias;
        if (std::isnan(s[j]) || s[j] > m)
          m = std::isnan(m) ? m : s[j];
      }
      T *oi = out + b * a.o_stride[0] + h * a.o_stride[1] + i * a.o_stride[2];
      if (m == ninf) { // every key masked out: 0, as torch
        for (int64_t d = 0; d < a.Dv; ++d)
          oi[d] = scalar::store<T>(C(0));
        continue;
      }
      std::fill(acc.begin(), acc.end(), C(0));
      C sum = 0;
      for (int64_t j = 0; j < a.S; ++j) {
        if (s[j] == ninf)
          continue;
        const C p = std::exp(s[j] - m);
        sum += p;
        const T *vj = vb + j * a.v_stride[2];
        for (int64_t d = 0; d < a.Dv; ++d)
          acc[d] += p * scalar::load(vj[d * a.v_stride[3]]);
      }
      for (int64_t d = 0; d < a.Dv; ++d)
        oi[d] = scalar::store<T>(acc[d] / sum);
    }
  }
}

} // namespace

void cpu_attention(const AttnArgs &a) {
  rt::bump(rt::kLaunches);
  switch (a.dtype) {
  case DType::f32:
    return run<float>(a);
  case DType::f64:
    return run<double>(a);
  case DType::f16:
    return run<half>(a);
  case DType::bf16:
    return run<bfloat16>(a);
  default:
    break; // attention.cpp admits floating dtypes only
  }
}

} // namespace kiln::detail
