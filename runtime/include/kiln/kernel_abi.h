// kiln/kernel_abi.h - data passed from host code to kernels by value.
//
// Shared by host code (eager runtime, generated launchers) and device code
// (eager CUDA kernels, generated kernels), so both sides agree on layout.
#pragma once

#include <kiln/dtype.h>

#include <cstdint>

namespace kiln {

inline constexpr int kMaxRank = 8;

// Unsigned 32-bit division by a divisor known only at run time, as a
// multiply-high, an add and a shift (Granlund and Montgomery's round-up
// method; PyTorch's IntDivider does the same). The host makes it once per
// launch; a kernel divides a few instructions where `n / d` is a sequence
// of some twenty (a float reciprocal and corrections) - per element of a
// strided pointwise kernel, per dim; per row of a reduction over a view.
// Exact for every n and 1 <= d < 2^32: with s = ceil(log2 d) and
// m = ceil(2^(32+s) / d), m d - 2^(32+s) < d <= 2^s, so n m / 2^(32+s)
// is n / d plus less than n / 2^32 < 1 divided by d's spacing; `mul` is m
// less its 2^32 bit, added back as `+ n`.
struct U32Div {
  uint32_t mul = 0, shift = 0; // the default divides by 1

  U32Div() = default;
  explicit U32Div(uint64_t d) {
    if (d <= 1)
      return;
    while ((uint64_t(1) << shift) < d)
      ++shift;
    mul = uint32_t(((unsigned __int128)(1) << 32) *
                       ((uint64_t(1) << shift) - d) / d +
                   1);
  }
  KILN_HD uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t hi = __umulhi(n, mul);
#else
    const uint32_t hi = uint32_t((uint64_t(n) * mul) >> 32);
#endif
    return uint32_t((uint64_t(hi) + n) >> shift);
  }
};

// The most operands (outputs and inputs) of a pointwise kernel: the
// largest N of OffsetCalc that kiln::rt::make_offset_calc is built for.
// The scheduler keeps every pointwise kernel within it.
inline constexpr int kMaxPointwiseOperands = 32;

// Maps a linear index over an output iteration space to element offsets
// of N operands (operand 0 is usually the output). Broadcast dims have
// stride 0. Dims are innermost last, already collapsed where contiguous.
// `divs` divide by `sizes` (set_divisors, which whoever fills sizes
// calls); a 32-bit index divides by them.
template <int N> struct OffsetCalc {
  int rank = 0;
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank][N];
  U32Div divs[kMaxRank];

  // After sizes[0, rank) are written: their divisors.
  void set_divisors() {
    for (int d = 0; d < rank; ++d)
      divs[d] = U32Div(uint64_t(sizes[d]));
  }

  template <class Index>
  KILN_HD void get(Index linear, Index (&offsets)[N]) const {
#pragma unroll
    for (int i = 0; i < N; ++i)
      offsets[i] = 0;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d >= rank)
        continue;
      Index size = Index(sizes[d]);
      Index q;
      if constexpr (sizeof(Index) == 4)
        q = Index(divs[d].div(uint32_t(linear)));
      else
        q = linear / size;
      Index r = linear - q * size;
      linear = q;
#pragma unroll
      for (int i = 0; i < N; ++i)
        offsets[i] += r * Index(strides[d][i]);
    }
  }
};

// A fused reduction kernel's canonical space [outer, R, inner] (R is the
// reduced extent; a "row" is one (outer, inner) pair) and how the host
// code chose to launch it. Elements of a row are handed out in 16-byte
// "slots" of V elements: thread `lane` of a row owns slots lane,
// lane + tpr, lane + 2 tpr, ...
struct RowSpace {
  int64_t outer = 1, R = 1, inner = 1, rows = 1;
  int tpr = 32;      // threads per row
  int vpt = 1;       // slots per thread kept in registers (register mode)
  int vec = 0;       // 1: every full operand is contiguous along R, aligned
  int splits = 1;    // split mode: blocks (CPU: work items) per row
  int64_t chunk = 0; // split mode: elements of a row per split (slot multiple)
  int pass = 0;      // split mode: the pass this launch runs
  int rpg = 1;       // register mode: rows a thread group holds at once
  int cols = 0;      // column mode: rows of a block (neighbours in memory)
  U32Div inner_div; // divides by inner (row_space sets it)
};

// Row `row`'s outer index: row / inner, by inner_div while rows fit 32 bits.
KILN_HD inline int64_t row_outer(const RowSpace &sp, int64_t row) {
  if (sp.inner == 1)
    return row;
  if (sp.rows <= int64_t(UINT32_MAX))
    return int64_t(sp.inner_div.div(uint32_t(row)));
  return row / sp.inner;
}
// The most rows a group of the one-slot rows kernel holds at once (sp.rpg;
// many short rows: kiln::gen::plan_cuda).
inline constexpr int kRowsPerGroup = 4;
// The threads of a loop kernel's block (a row per block; RedMode::loop).
inline constexpr int kLoopThreads = 512;

// Element strides of N operands along outer, R and inner (0: broadcast).
// When some operand's offsets along the outer dims do not follow one
// stride (a [T, T] mask or a [1, H, 1, 1] per-head scale beside [B, H, T,
// T] scores, reduced over the last dim), nouter > 0: the outer dims that
// are not 1, outermost first, and every operand's stride along each; a
// row's offset is then their sum (row_bases: a multiply-high per dim).
// Only the operands that need it walk them (walk[op]), and each only as far
// out as its outermost non-zero stride (from[op]): beside [B, H, T, T]
// scores a [T, T] mask costs one division per row, the scores none.
template <int N> struct RowStrides {
  int64_t s[N][3];
  int nouter = 0;
  int64_t outer_size[kMaxRank];
  U32Div outer_div[kMaxRank]; // divides by outer_size
  int64_t outer_stride[N][kMaxRank];
  bool walk[N] = {};
  int from[N] = {};
};

// The offsets of row (o, i) (o the outer index, i the inner) of the
// operands in `Want` (bit op for operand op) into b[op]. The outer dims
// are walked once for all of them, with 32-bit division by U32Div (a
// multiply-high and a shift each, where 64-bit division is a call;
// kiln::gen::row_operand refuses an outer extent of 2^32 or more when
// nouter > 0): a division per dim and a multiply-add per operand. Operands
// not in Want are left alone (a kernel asks for the ones a phase reads).
template <uint64_t Want, int N>
KILN_HD inline void row_bases(const RowStrides<N> &st, int64_t o, int64_t i,
                              int64_t (&b)[N]) {
  static_assert(N <= 64, "row_bases: at most 64 operands");
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
#ifdef __CUDACC__
#pragma unroll 1
#endif
  for (int d = st.nouter - 1; d >= lo; --d) {
    const uint32_t q = st.outer_div[d].div(rest);
    const int64_t r = int64_t(rest - q * uint32_t(st.outer_size[d]));
#pragma unroll
    for (int op = 0; op < N; ++op)
      if ((Want >> op & 1) && st.walk[op])
        b[op] += r * st.outer_stride[op][d];
    rest = q;
  }
}

// Row `row`'s operand bases (those in Want). Rows of a plain [rows, R]
// space (inner 1, no operand walking outer dims) start at row * s[op][0]:
// a multiply and one stride read per operand, where the general path
// reads every operand's strides and divisors before the row's first
// load (a decode's RMS norm, 16 rows of 4096 bf16 on an H200: 2.85 ->
// 2.43 us; bench/results/2026-11-30-h200-rows-lean.md).
template <uint64_t Want, int N>
KILN_HD inline void row_bases_at(const RowSpace &sp, const RowStrides<N> &st,
                                 int64_t row, int64_t (&b)[N]) {
  if (sp.inner == 1 && st.nouter == 0) {
#pragma unroll
    for (int op = 0; op < N; ++op)
      if (Want >> op & 1)
        b[op] = row * st.s[op][0];
    return;
  }
  const int64_t o = row_outer(sp, row);
  row_bases<Want>(st, o, row - o * sp.inner, b);
}

} // namespace kiln
