// Decode's RMS norm (16 x 4096 bf16, weight 4096) by the rows kernel the
// plugin generates (g0), and by that kernel less one generality at a time,
// to find what its 1.1 us over Inductor's kernel is made of:
//   g1  one row a thread group (no RPG unroll),
//   l1  offsets row * R (no row_outer/row_bases), 64-bit, the same params,
//   l2  l1 with 32-bit offsets,
//   l3  l2 with the weight loaded before the reduction,
//   l4  l2 with small parameters (R, rows, pointers) instead of RowSpace +
//       RowStrides<3> (~1 KB of kernel parameters),
//   l5  l4 with one barrier reduction (no leading __syncthreads),
//   h   the hand-written Inductor-shaped kernel (rms_variants.cu's).
// Kernel time: 20 back-to-back launches per event pair, median of 30, three
// rounds; `--once` runs each once (for ncu).
#include <kiln/generated.cuh>
#include <kiln/generated.h>
#include <kiln/kiln.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "rms_generated_impl.inc"

using bf = kiln::bfloat16;
#define KARGS const kiln::RowSpace sp, const kiln::RowStrides<3> st, const bf *__restrict__ in0, const bf *__restrict__ in1, bf *__restrict__ out0
extern "C" __global__ void __launch_bounds__(512) g0(KARGS) { g0_impl<1, true>(sp, st, in0, in1, out0); }
extern "C" __global__ void __launch_bounds__(512) g1(KARGS) { g1_impl<1, true>(sp, st, in0, in1, out0); }

template <class Index, bool EARLY, bool SYNC0>
__device__ __forceinline__ void lean_body(int R, int64_t rows, int tpr, const bf *__restrict__ in0,
                                          const bf *__restrict__ in1, bf *__restrict__ out0) {
  constexpr int V = 8;
  __shared__ float smem[32];
  const int tsh = __ffs(tpr) - 1;
  const int lane = threadIdx.x & (tpr - 1);
  const Index row = Index(blockIdx.x) * Index(blockDim.x >> tsh) + Index(threadIdx.x >> tsh);
  if (row >= rows) return;
  const Index e = Index(lane) * V;
  const Index base = row * Index(R);
  const kiln::gen::Vec<bf, V> x = kiln::gen::vec_load<V>(in0 + base + e);
  kiln::gen::Vec<bf, V> w;
  if (EARLY) w = kiln::gen::vec_load<V>(in1 + e);
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < V; ++j) { const float v = kiln::scalar::load(x.v[j]); acc += v * v; }
  // row_reduce, with or without its leading barrier
#pragma unroll
  for (int m = 16; m > 0; m /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  if (tpr > 32) {
    const int warp = threadIdx.x / 32, l = threadIdx.x % 32, nw = tpr / 32;
    if (SYNC0) __syncthreads();
    if (l == 0) smem[warp] = acc;
    __syncthreads();
    acc = smem[l & (nw - 1)];
#pragma unroll
    for (int m = 16; m > 0; m /= 2) if (m < nw) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  }
  const float s = kiln::scalar::op_rsqrt(kiln::scalar::op_div_approx(acc, float(R)) + 1e-6f);
  if (!EARLY) w = kiln::gen::vec_load<V>(in1 + e);
  kiln::gen::Vec<bf, V> y;
#pragma unroll
  for (int j = 0; j < V; ++j)
    y.v[j] = kiln::scalar::store<bf>(kiln::scalar::op_mul(kiln::scalar::op_mul(kiln::scalar::load(x.v[j]), s), kiln::scalar::load(w.v[j])));
  kiln::gen::vec_store(out0 + base + e, y);
}
extern "C" __global__ void __launch_bounds__(512) l1(KARGS) { lean_body<int64_t, false, true>(int(sp.R), sp.rows, sp.tpr, in0, in1, out0); }
extern "C" __global__ void __launch_bounds__(512) l2(KARGS) { lean_body<int32_t, false, true>(int(sp.R), sp.rows, sp.tpr, in0, in1, out0); }
extern "C" __global__ void __launch_bounds__(512) l3(KARGS) { lean_body<int32_t, true, true>(int(sp.R), sp.rows, sp.tpr, in0, in1, out0); }
extern "C" __global__ void __launch_bounds__(512) l4(int R, int rows, int tpr, const bf *__restrict__ in0, const bf *__restrict__ in1, bf *__restrict__ out0) { lean_body<int32_t, false, true>(R, rows, tpr, in0, in1, out0); }
extern "C" __global__ void __launch_bounds__(512) l5(int R, int rows, int tpr, const bf *__restrict__ in0, const bf *__restrict__ in1, bf *__restrict__ out0) { lean_body<int32_t, false, false>(R, rows, tpr, in0, in1, out0); }

// Inductor's shape, hand-written (rms_variants.cu's rms<512, 1, false>).
struct alignas(16) V8 { __nv_bfloat162 h[4]; };
__global__ void __launch_bounds__(512) h(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
                                         __nv_bfloat16 *__restrict__ y, int R, float eps) {
  __shared__ float sm[32];
  const int row = blockIdx.x;
  const V8 a = reinterpret_cast<const V8 *>(x + size_t(row) * R)[threadIdx.x];
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < 4; ++j) { float2 f = __bfloat1622float2(a.h[j]); acc += f.x * f.x + f.y * f.y; }
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
  const int wi = threadIdx.x / 32, l = threadIdx.x % 32;
  if (l == 0) sm[wi] = acc;
  __syncthreads();
  float r = l < 16 ? sm[l] : 0.f;
  for (int o = 8; o; o >>= 1) r += __shfl_xor_sync(0xffffffff, r, o);
  r = __shfl_sync(0xffffffff, r, 0); // lanes 16-31 summed zeros (call 1 ran without this line)
  const float s = rsqrtf(r / R + eps);
  const V8 b = reinterpret_cast<const V8 *>(w)[threadIdx.x];
  V8 o;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 f = __bfloat1622float2(a.h[j]), g = __bfloat1622float2(b.h[j]);
    o.h[j] = __floats2bfloat162_rn(__bfloat162float(__float2bfloat16(f.x * s)) * g.x, __bfloat162float(__float2bfloat16(f.y * s)) * g.y);
  }
  reinterpret_cast<V8 *>(y + size_t(row) * R)[threadIdx.x] = o;
}

static float time_us(const std::function<void()> &f) {
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
    t.push_back(ms * 1000 / 20);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const bool once = argc > 1 && std::string(argv[1]) == "--once";
  const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 16;
  const kiln::Device dev = kiln::Device::cuda(0);
  kiln::Tensor x = kiln::randn({rows, 4096}, kiln::bf16, dev), w = kiln::randn({4096}, kiln::bf16, dev);
  kiln::Tensor out = kiln::empty({rows, 4096}, kiln::bf16, dev);
  kiln::Tensor ref = kiln::rms_norm(x, w, 1e-6);
  // The launch as the generated host code sets it up.
  kiln::Dims full = {rows, 4096}, keep, drop;
  kiln::RowSpace sp;
  kiln::gen::ReduceGeom geo;
  if (!kiln::gen::row_space(full, {-1}, sp, keep, drop, geo)) return 1;
  kiln::RowStrides<3> st;
  kiln::gen::row_operand(out, full, geo, st, 0);
  kiln::gen::row_operand(x, full, geo, st, 1);
  kiln::gen::row_operand(w, full, geo, st, 2);
  sp.vec = 1;
  unsigned grid, block;
  const auto mode = kiln::gen::plan_cuda(sp, 8, 4, kiln::rt::multiprocessor_count(dev), grid, block, false, st.nouter != 0);
  std::printf("mode %d grid %u block %u tpr %d vpt %d rpg %d sizeof params %zu\n", int(mode), grid, block, sp.tpr, sp.vpt, sp.rpg,
              sizeof(sp) + sizeof(st) + 24);
  if (mode != kiln::gen::RedMode::rows || sp.vpt != 1 || sp.R != 8 * sp.tpr) { std::printf("not the rows1full shape\n"); return 1; }
  const bf *in0 = x.data<const bf>(), *in1 = w.data<const bf>();
  bf *o = out.data<bf>();
  struct Variant { const char *name; std::function<void()> f; };
  std::vector<Variant> vs = {
    {"g0 generated", [&] { g0<<<grid, block>>>(sp, st, in0, in1, o); }},
    {"g1 RPG=1", [&] { g1<<<grid, block>>>(sp, st, in0, in1, o); }},
    {"l1 row*R, 64-bit", [&] { l1<<<grid, block>>>(sp, st, in0, in1, o); }},
    {"l2 row*R, 32-bit", [&] { l2<<<grid, block>>>(sp, st, in0, in1, o); }},
    {"l3 l2 + weight early", [&] { l3<<<grid, block>>>(sp, st, in0, in1, o); }},
    {"l4 l2 + small params", [&] { l4<<<grid, block>>>(int(sp.R), int(sp.rows), sp.tpr, in0, in1, o); }},
    {"l5 l4 + one barrier", [&] { l5<<<grid, block>>>(int(sp.R), int(sp.rows), sp.tpr, in0, in1, o); }},
    {"h hand-written", [&] { h<<<unsigned(rows), 512>>>(reinterpret_cast<const __nv_bfloat16 *>(in0), reinterpret_cast<const __nv_bfloat16 *>(in1), reinterpret_cast<__nv_bfloat16 *>(o), 4096, 1e-6f); }},
  };
  for (auto &v : vs) {
    out.copy_(kiln::full({rows, 4096}, std::nan(""), kiln::bf16, dev));
    v.f();
    kiln::synchronize(dev);
    const double d = kiln::max_abs_diff(out, ref);
    if (!(d < 0.07)) { std::printf("MISMATCH %s %g\n", v.name, d); return 1; }
  }
  if (cudaGetLastError() != cudaSuccess) { std::printf("CUDA error\n"); return 1; }
  if (once) { for (auto &v : vs) v.f(); cudaDeviceSynchronize(); return 0; }
  std::vector<std::vector<float>> t(vs.size());
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < vs.size(); ++i) t[i].push_back(time_us(vs[i].f));
  std::printf("%-28s %8s %8s %8s  (us, kernel time, rows=%lld)\n", "variant", "r1", "r2", "r3", (long long)rows);
  for (size_t i = 0; i < vs.size(); ++i)
    std::printf("%-28s %8.2f %8.2f %8.2f\n", vs[i].name, t[i][0], t[i][1], t[i][2]);
  return 0;
}
