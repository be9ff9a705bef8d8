// What the hand-built CUDA experiments of bench/experiments share: CK (a
// CUDA call that must succeed), median, and kernel time as the benchmarks
// take it (5 calls to warm up, then 20 back-to-back calls between one pair
// of CUDA events, / 20, the median of 30 such pairs).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
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
