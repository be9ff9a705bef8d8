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

} // namespace kiln
