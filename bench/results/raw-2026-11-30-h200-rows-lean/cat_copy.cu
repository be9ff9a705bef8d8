// Decode's cache cat, [16, 32, 2048, 128] bf16 into a [16, 32, 2049, 128]
// (plus the new token's [16, 32, 1, 128] piece), copied by variants of
// the runtime's copy kernels: block size, vectors per thread, output- or
// input-indexed, cache hints. Kernel time: 20 back-to-back calls per event
// pair, median of 30, three rounds alternating the variants.
#include <kiln/kernel_abi.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using kiln::OffsetCalc;
struct alignas(16) V16 { uint4 u; };

constexpr int B = 16, H = 32, S = 2048, D = 128;
constexpr int64_t kIn = int64_t(B) * H * S * D, kNew = int64_t(B) * H * D;
constexpr int64_t kOut = int64_t(B) * H * (S + 1) * D;

// As runtime/cuda/copy_fill.cu's copy_inner_vec_kernel (8 bf16 a vector).
template <int VPT>
__global__ void inner_vec(int32_t nv, const __nv_bfloat16 *in, __nv_bfloat16 *out, OffsetCalc<2> calc) {
  const int32_t stride = int32_t(gridDim.x) * int32_t(blockDim.x);
  const int32_t t0 = (int32_t(blockIdx.x) * int32_t(blockDim.x)) * VPT + int32_t(threadIdx.x);
  if constexpr (VPT == 1) {
    for (int32_t t = t0; t < nv; t += stride) {
      int32_t off[2];
      calc.get(int32_t(t * 8), off);
      *reinterpret_cast<V16 *>(out + off[0]) = *reinterpret_cast<const V16 *>(in + off[1]);
    }
  } else {
    V16 r[VPT];
    int32_t o[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int32_t t = t0 + k * int32_t(blockDim.x);
      if (t < nv) {
        int32_t off[2];
        calc.get(int32_t(t * 8), off);
        o[k] = off[0];
        r[k] = *reinterpret_cast<const V16 *>(in + off[1]);
      }
    }
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int32_t t = t0 + k * int32_t(blockDim.x);
      if (t < nv)
        *reinterpret_cast<V16 *>(out + o[k]) = r[k];
    }
  }
}

// As copy_pieces_kernel: block ranges select the piece.
struct Pieces {
  const __nv_bfloat16 *in[2];
  __nv_bfloat16 *out[2];
  OffsetCalc<2> calc[2];
  int64_t nv[2];
  int64_t first_block[3];
  int count;
};
__global__ void pieces(const Pieces p) {
  int k = 0;
  if (1 < p.count && int64_t(blockIdx.x) >= p.first_block[1])
    k = 1;
  const int32_t t = int32_t(int64_t(blockIdx.x) - p.first_block[k]) * int32_t(blockDim.x) + int32_t(threadIdx.x);
  if (t >= int32_t(p.nv[k]))
    return;
  int32_t off[2];
  p.calc[k].get(int32_t(t * 8), off);
  *reinterpret_cast<V16 *>(p.out[k] + off[0]) = *reinterpret_cast<const V16 *>(p.in[k] + off[1]);
}
// The same with the piece's parameters copied to registers by a switch.
__global__ void pieces_switch(const Pieces p) {
  const bool second = 1 < p.count && int64_t(blockIdx.x) >= p.first_block[1];
  const int32_t t = int32_t(int64_t(blockIdx.x) - (second ? p.first_block[1] : 0)) * int32_t(blockDim.x) + int32_t(threadIdx.x);
  int32_t off[2];
  if (!second) {
    if (t >= int32_t(p.nv[0])) return;
    p.calc[0].get(int32_t(t * 8), off);
    *reinterpret_cast<V16 *>(p.out[0] + off[0]) = *reinterpret_cast<const V16 *>(p.in[0] + off[1]);
  } else {
    if (t >= int32_t(p.nv[1])) return;
    p.calc[1].get(int32_t(t * 8), off);
    *reinterpret_cast<V16 *>(p.out[1] + off[0]) = *reinterpret_cast<const V16 *>(p.in[1] + off[1]);
  }
}

// Output-indexed, as Inductor's cat: each output vector picks its source.
__global__ void out_indexed(int32_t nv, const __nv_bfloat16 *cache, const __nv_bfloat16 *knew, __nv_bfloat16 *out) {
  const int32_t t = int32_t(blockIdx.x) * int32_t(blockDim.x) + int32_t(threadIdx.x);
  if (t >= nv) return;
  const int32_t e = t * 8;
  const int32_t d = e % D, s = (e / D) % (S + 1), bh = e / (D * (S + 1));
  V16 v;
  if (s < S)
    v = *reinterpret_cast<const V16 *>(cache + (int64_t(bh) * S + s) * D + d);
  else
    v = *reinterpret_cast<const V16 *>(knew + int64_t(bh) * D + d);
  *reinterpret_cast<V16 *>(out + e) = v;
}

// Input-indexed with a 2-D grid (y: a head's block of S x D), no division.
__global__ void grid2d(const __nv_bfloat16 *in, __nv_bfloat16 *out) {
  const int32_t t = int32_t(blockIdx.x) * int32_t(blockDim.x) + int32_t(threadIdx.x);
  const int64_t h = blockIdx.y;
  *reinterpret_cast<V16 *>(out + h * (S + 1) * D + t * 8) = *reinterpret_cast<const V16 *>(in + h * S * D + t * 8);
}

// Streaming hints: loads not kept in L1, stores evict-first.
__global__ void inner_vec_cs(int32_t nv, const __nv_bfloat16 *in, __nv_bfloat16 *out, OffsetCalc<2> calc) {
  const int32_t t = int32_t(blockIdx.x) * int32_t(blockDim.x) + int32_t(threadIdx.x);
  if (t >= nv) return;
  int32_t off[2];
  calc.get(int32_t(t * 8), off);
  const uint4 r = __ldcs(reinterpret_cast<const uint4 *>(in + off[1]));
  __stcs(reinterpret_cast<uint4 *>(out + off[0]), r);
}

static float time_ms(const std::function<void()> &f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int r = 0; r < 30; ++r) {
    cudaEventRecord(a);
    for (int i = 0; i < 20; ++i) f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms / 20);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const bool ncu_mode = argc > 1 && std::string(argv[1]) == "--once";
  __nv_bfloat16 *in, *knew, *out, *ref, *big_a, *big_b;
  cudaMalloc(&in, kIn * 2); cudaMalloc(&knew, kNew * 2); cudaMalloc(&out, kOut * 2); cudaMalloc(&ref, kOut * 2);
  cudaMalloc(&big_a, 1ll << 30); cudaMalloc(&big_b, 1ll << 30);
  { std::vector<uint16_t> h(kIn); for (int64_t i = 0; i < kIn; ++i) h[i] = uint16_t(i * 2654435761u >> 7);
    cudaMemcpy(in, h.data(), kIn * 2, cudaMemcpyHostToDevice);
    std::vector<uint16_t> n(kNew); for (int64_t i = 0; i < kNew; ++i) n[i] = uint16_t(i * 40503u + 7);
    cudaMemcpy(knew, n.data(), kNew * 2, cudaMemcpyHostToDevice); }
  // The reference: cudaMemcpy2D per piece.
  cudaMemcpy2D(ref, (S + 1) * D * 2, in, S * D * 2, S * D * 2, B * H, cudaMemcpyDeviceToDevice);
  cudaMemcpy2D(ref + S * D, (S + 1) * D * 2, knew, D * 2, D * 2, B * H, cudaMemcpyDeviceToDevice);

  OffsetCalc<2> cin{}, cnew{};
  cin.rank = 2; cin.sizes[0] = B * H; cin.sizes[1] = int64_t(S) * D;
  cin.strides[0][0] = (S + 1) * D; cin.strides[0][1] = S * D; cin.strides[1][0] = 1; cin.strides[1][1] = 1;
  cin.set_divisors();
  cnew.rank = 2; cnew.sizes[0] = B * H; cnew.sizes[1] = D;
  cnew.strides[0][0] = (S + 1) * D; cnew.strides[0][1] = D; cnew.strides[1][0] = 1; cnew.strides[1][1] = 1;
  cnew.set_divisors();
  const int32_t nv = int32_t(kIn / 8), nvn = int32_t(kNew / 8);
  auto piece_new = [&](int threads) { // the new token's piece, 1 vector a thread
    inner_vec<1><<<(nvn + threads - 1) / threads, threads>>>(nvn, knew, out + S * D, cnew);
  };
  auto make_pieces = [&](int threads) {
    Pieces p{};
    p.in[0] = in; p.out[0] = out; p.calc[0] = cin; p.nv[0] = nv;
    p.in[1] = knew; p.out[1] = out + S * D; p.calc[1] = cnew; p.nv[1] = nvn;
    p.count = 2; p.first_block[0] = 0; p.first_block[1] = (nv + threads - 1) / threads;
    p.first_block[2] = p.first_block[1] + (nvn + threads - 1) / threads;
    return p;
  };
  struct Variant { std::string name; std::function<void()> f; bool whole; };
  std::vector<Variant> vs;
  for (int th : {128, 256, 512})
    vs.push_back({"inner_vec 1/thread, " + std::to_string(th) + " threads", [=] {
      inner_vec<1><<<(nv + th - 1) / th, th>>>(nv, in, out, cin); }, false});
  for (int th : {128, 256})
    for (int vpt : {2, 4}) {
      const int blocks = (nv + th * vpt - 1) / (th * vpt);
      vs.push_back({"inner_vec " + std::to_string(vpt) + "/thread, " + std::to_string(th) + " threads", [=] {
        if (vpt == 2) inner_vec<2><<<blocks, th>>>(nv, in, out, cin);
        else inner_vec<4><<<blocks, th>>>(nv, in, out, cin); }, false});
    }
  vs.push_back({"inner_vec grid-stride 132*16 blocks, 256", [=] { inner_vec<1><<<132 * 8, 256>>>(nv, in, out, cin); }, false});
  vs.push_back({"inner_vec __ldcs/__stcs, 256", [=] { inner_vec_cs<<<(nv + 255) / 256, 256>>>(nv, in, out, cin); }, false});
  vs.push_back({"grid2d, 256", [=] { grid2d<<<dim3(S * D / 8 / 256, B * H), 256>>>(in, out); }, false});
  vs.push_back({"grid2d, 128", [=] { grid2d<<<dim3(S * D / 8 / 128, B * H), 128>>>(in, out); }, false});
  for (int th : {128, 256}) {
    Pieces p = make_pieces(th);
    vs.push_back({"pieces (whole cat), " + std::to_string(th), [=] { pieces<<<unsigned(p.first_block[2]), th>>>(p); }, true});
    vs.push_back({"pieces_switch (whole cat), " + std::to_string(th), [=] { pieces_switch<<<unsigned(p.first_block[2]), th>>>(p); }, true});
  }
  const int32_t nvo = int32_t(kOut / 8);
  for (int th : {128, 256})
    vs.push_back({"out_indexed (whole cat), " + std::to_string(th), [=] { out_indexed<<<(nvo + th - 1) / th, th>>>(nvo, in, knew, out); }, true});
  vs.push_back({"cudaMemcpy2DAsync (cache piece)", [=] {
    cudaMemcpy2DAsync(out, (S + 1) * D * 2, in, S * D * 2, S * D * 2, B * H, cudaMemcpyDeviceToDevice); }, false});
  vs.push_back({"1 GiB copy (floor; /4 ≈ 268 MB)", [=] { cudaMemcpyAsync(big_b, big_a, 1ll << 30, cudaMemcpyDeviceToDevice); }, false});

  // Correctness: each variant's output against the reference.
  for (auto &v : vs) {
    if (v.name.rfind("1 GiB", 0) == 0) continue;
    cudaMemset(out, 0xff, kOut * 2);
    if (!v.whole) piece_new(256);
    v.f();
    cudaDeviceSynchronize();
    std::vector<uint16_t> a(kOut), b(kOut);
    cudaMemcpy(a.data(), out, kOut * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(b.data(), ref, kOut * 2, cudaMemcpyDeviceToHost);
    if (std::memcmp(a.data(), b.data(), kOut * 2) != 0) { std::printf("MISMATCH %s\n", v.name.c_str()); return 1; }
    if (ncu_mode) { v.f(); cudaDeviceSynchronize(); }
  }
  if (cudaGetLastError() != cudaSuccess) { std::printf("CUDA error\n"); return 1; }
  if (ncu_mode) return 0;
  std::vector<std::vector<float>> t(vs.size());
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < vs.size(); ++i) t[i].push_back(time_ms(vs[i].f));
  std::printf("%-44s %10s %10s %10s %9s\n", "variant", "r1 us", "r2 us", "r3 us", "GB/s");
  for (size_t i = 0; i < vs.size(); ++i) {
    std::vector<float> s = t[i]; std::sort(s.begin(), s.end());
    const double bytes = vs[i].name.rfind("1 GiB", 0) == 0 ? 2.0 * (1ll << 30) : vs[i].whole ? 2.0 * kOut * 2 : 2.0 * kIn * 2;
    std::printf("%-44s %10.2f %10.2f %10.2f %9.0f\n", vs[i].name.c_str(), t[i][0] * 1e3, t[i][1] * 1e3, t[i][2] * 1e3, bytes / (s[1] * 1e-3) / 1e9);
  }
  return 0;
}
