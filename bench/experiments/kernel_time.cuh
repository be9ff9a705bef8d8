// What the hand-built CUDA experiments of bench/experiments share: CK (a
// CUDA call that must succeed), median, fill_bf16 (inputs from a hash of
// the index), and kernel time as the benchmarks
// take it (5 calls to warm up, then 20 back-to-back calls between one pair
// of CUDA events, / 20, the median of 30 such pairs).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(e)                                                                  \
  do {                                                                         \
    cudaError_t err_ = (e);                                                    \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s: %s\n", #e, cudaGetErrorString(err_));          \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#ifdef __CUDACC__ // (also included by host-only programs: gemm_streams.cpp)
#include <cuda_bf16.h>
// p[i] = scale * (u - 0.5) + shift, u in [0, 1) from a hash of i and seed:
// the same inputs in every run, without a host-side generator.
__global__ void fill_bf16(__nv_bfloat16 *p, int64_t n, uint32_t seed, float scale,
                          float shift) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(scale * ((h & 0xffff) / 65536.f - 0.5f) + shift);
  }
}
#endif

inline float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F> float kernel_time_ms(F &&launch) {
  static cudaEvent_t e0, e1;
  static const bool made = [] {
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    return true;
  }();
  (void)made;
  for (int i = 0; i < 5; ++i)
    launch();
  std::vector<float> t;
  for (int rep = 0; rep < 30; ++rep) {
    CK(cudaEventRecord(e0));
    for (int c = 0; c < 20; ++c)
      launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms / 20);
  }
  return median(t);
}
