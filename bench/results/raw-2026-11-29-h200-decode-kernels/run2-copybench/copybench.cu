// Copy kernels for a cat's big piece: k_cache [16,32,2048,128] bf16 into
// keys [16,32,2049,128] (rows of 512 KiB, 512 rows), and a 1 GiB contiguous copy.
#include <kiln/kernel_abi.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
using namespace kiln;
struct alignas(16) V16 { uint4 b; };

template <int U, bool HINT, class Index>
__global__ void __launch_bounds__(256) copy_calc(Index nv, const uint4 *in, uint4 *out, OffsetCalc<2> calc) {
  const Index step = Index(gridDim.x) * blockDim.x * U;
  for (Index t0 = Index(blockIdx.x) * blockDim.x * U + threadIdx.x; t0 < nv; t0 += step) {
    uint4 r[U]; Index o[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      Index t = t0 + Index(u) * blockDim.x;
      if (t < nv) {
        Index off[2];
        calc.get(Index(t * 8), off);
        r[u] = HINT ? __ldcs(in + off[1] / 8) : in[off[1] / 8];
        o[u] = off[0] / 8;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      Index t = t0 + Index(u) * blockDim.x;
      if (t < nv) { if (HINT) __stcs(out + o[u], r[u]); else out[o[u]] = r[u]; }
    }
  }
}
// rows: each block a chunk of U*256 vectors of one row; grid-stride over (row, chunk)
template <int U, bool HINT>
__global__ void __launch_bounds__(256) copy_rows(int64_t rows, int64_t rowv, int64_t ostride_v, int64_t istride_v,
                                                 const uint4 *in, uint4 *out) {
  const int64_t chunks = (rowv + U * 256 - 1) / (U * 256);
  for (int64_t c = blockIdx.x; c < rows * chunks; c += gridDim.x) {
    const int64_t row = c / chunks, col0 = (c - row * chunks) * (U * 256) + threadIdx.x;
    const uint4 *src = in + row * istride_v;
    uint4 *dst = out + row * ostride_v;
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int64_t col = col0 + u * 256;
      if (col < rowv) r[u] = HINT ? __ldcs(src + col) : src[col];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int64_t col = col0 + u * 256;
      if (col < rowv) { if (HINT) __stcs(dst + col, r[u]); else dst[col] = r[u]; }
    }
  }
}
template <int U, bool HINT>
__global__ void __launch_bounds__(256) copy_flat(int64_t nv, const uint4 *in, uint4 *out) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x * U;
  for (int64_t t0 = int64_t(blockIdx.x) * blockDim.x * U + threadIdx.x; t0 < nv; t0 += step) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { int64_t t = t0 + u * blockDim.x; if (t < nv) r[u] = HINT ? __ldcs(in + t) : in[t]; }
#pragma unroll
    for (int u = 0; u < U; ++u) { int64_t t = t0 + u * blockDim.x; if (t < nv) { if (HINT) __stcs(out + t, r[u]); else out[t] = r[u]; } }
  }
}

template <class F> float timeit(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) f();
  std::vector<float> v;
  for (int r = 0; r < 15; ++r) {
    cudaEventRecord(a); for (int i = 0; i < 20; ++i) f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms / 20);
  }
  std::sort(v.begin(), v.end()); return v[v.size() / 2];
}

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int64_t R = 16 * 32, S = 2048, D = 128;
  const int64_t inner = S * D;              // elements of a row
  const int64_t n = R * inner, nv = n / 8;
  uint16_t *in, *out;
  cudaMalloc(&in, n * 2); cudaMalloc(&out, R * (S + 1) * D * 2);
  cudaMemset(in, 1, n * 2);
  OffsetCalc<2> calc{}; calc.rank = 2;
  calc.sizes[0] = R; calc.sizes[1] = inner;
  calc.strides[0][0] = (S + 1) * D; calc.strides[0][1] = inner;
  calc.strides[1][0] = 1; calc.strides[1][1] = 1;
  calc.set_divisors();
  const double bytes = 2.0 * n * 2;
  auto rep = [&](const char *name, float ms) { std::printf("%-40s %8.2f us  %6.3f TB/s\n", name, ms * 1e3, bytes / ms / 1e9); };
  auto g = [&](int64_t work) { int64_t b = (work + 255) / 256, cap = int64_t(sms) * 8; return unsigned(std::max<int64_t>(1, std::min(b, cap))); };
  auto G = [&](int64_t work, int mult) { int64_t b = (work + 255) / 256, cap = int64_t(sms) * 8 * mult; return unsigned(std::max<int64_t>(1, std::min(b, cap))); };
  const uint4 *vi = (const uint4 *)in; uint4 *vo = (uint4 *)out;
  rep("calc U1 (today's kernel)", timeit([&] { copy_calc<1, false, int32_t><<<g(nv), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U1 hints", timeit([&] { copy_calc<1, true, int32_t><<<g(nv), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U2", timeit([&] { copy_calc<2, false, int32_t><<<g(nv / 2), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U4", timeit([&] { copy_calc<4, false, int32_t><<<g(nv / 4), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U4 hints", timeit([&] { copy_calc<4, true, int32_t><<<g(nv / 4), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U2 hints", timeit([&] { copy_calc<2, true, int32_t><<<g(nv / 2), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U4 hints, no grid cap", timeit([&] { copy_calc<4, true, int32_t><<<unsigned((nv / 4 + 255) / 256), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U1, no grid cap", timeit([&] { copy_calc<1, false, int32_t><<<unsigned((nv + 255) / 256), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U1 hints, no grid cap", timeit([&] { copy_calc<1, true, int32_t><<<unsigned((nv + 255) / 256), 256>>>(int32_t(nv), vi, vo, calc); }));
  rep("calc U4, 4x grid", timeit([&] { copy_calc<4, false, int32_t><<<G(nv / 4, 4), 256>>>(int32_t(nv), vi, vo, calc); }));
  const int64_t rowv = inner / 8;
  rep("rows U4", timeit([&] { copy_rows<4, false><<<g(nv / 4), 256>>>(R, rowv, (S + 1) * D / 8, rowv, vi, vo); }));
  rep("rows U4 hints", timeit([&] { copy_rows<4, true><<<g(nv / 4), 256>>>(R, rowv, (S + 1) * D / 8, rowv, vi, vo); }));
  rep("rows U8 hints", timeit([&] { copy_rows<8, true><<<g(nv / 8), 256>>>(R, rowv, (S + 1) * D / 8, rowv, vi, vo); }));
  rep("rows U4 hints no cap", timeit([&] { copy_rows<4, true><<<unsigned(nv / 4 / 256), 256>>>(R, rowv, (S + 1) * D / 8, rowv, vi, vo); }));
  rep("cudaMemcpy2DAsync", timeit([&] { cudaMemcpy2DAsync(out, (S + 1) * D * 2, in, inner * 2, inner * 2, R, cudaMemcpyDeviceToDevice); }));
  // contiguous
  rep("flat U1 (copy_vec_kernel)", timeit([&] { copy_flat<1, false><<<g(nv), 256>>>(nv, vi, vo); }));
  rep("flat U4 hints", timeit([&] { copy_flat<4, true><<<g(nv / 4), 256>>>(nv, vi, vo); }));
  rep("flat U2 hints", timeit([&] { copy_flat<2, true><<<g(nv / 2), 256>>>(nv, vi, vo); }));
  rep("cudaMemcpyAsync", timeit([&] { cudaMemcpyAsync(out, in, n * 2, cudaMemcpyDeviceToDevice); }));
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("status %s\n", cudaGetErrorString(e));
}
