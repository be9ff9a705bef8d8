// kiln/kernel_abi.h - data passed from host code to kernels by value.
//
// Shared by host code (eager runtime, generated launchers) and device code
// (eager CUDA kernels, generated kernels), so both sides agree on layout.
#pragma once

#include <kiln/dtype.h>

#include <cstdint>

namespace kiln {

inline constexpr int kMaxRank = 8;

// Maps a linear index over an output iteration space to element offsets
// of N operands (operand 0 is usually the output). Broadcast dims have
// stride 0. Dims are innermost last, already collapsed where contiguous.
template <int N> struct OffsetCalc {
  int rank = 0;
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank][N];

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
      Index q = linear / size;
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
};
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
// row's offset is then their sum (row_base: a few divisions per row).
// Only the operands that need it walk them (walk[op]), and each only as far
// out as its outermost non-zero stride (from[op]): beside [B, H, T, T]
// scores a [T, T] mask costs one division per row, the scores none.
template <int N> struct RowStrides {
  int64_t s[N][3];
  int nouter = 0;
  int64_t outer_size[kMaxRank];
  int64_t outer_stride[N][kMaxRank];
  bool walk[N] = {};
  int from[N] = {};
};

// Operand op's offset of row (o, i): o the outer index, i the inner. The
// outer dims are walked with 32-bit division (a few instructions and
// registers, where 64-bit division is a call): kiln::gen::row_operand
// refuses an outer extent of 2^32 or more when nouter > 0.
template <int N>
KILN_HD inline int64_t row_base(const RowStrides<N> &st, int op, int64_t o,
                                int64_t i) {
  int64_t b = i * st.s[op][2];
  if (!st.walk[op])
    return b + o * st.s[op][0];
  uint32_t rest = uint32_t(o);
#ifdef __CUDACC__
#pragma unroll 1
#endif
  for (int d = st.nouter - 1; d >= st.from[op]; --d) {
    const uint32_t size = uint32_t(st.outer_size[d]), q = rest / size;
    b += int64_t(rest - q * size) * st.outer_stride[op][d];
    rest = q;
  }
  return b;
}

} // namespace kiln
