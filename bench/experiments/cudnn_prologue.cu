// Can a library fuse layer norm -> tanh-GELU into the GEMM that reads it
// (issue 13's "layer norm -> GELU -> matmul", 8192x4096 @ 4096x4096 bf16)?
// cuBLASLt has epilogues only. cuDNN's graph API takes pointwise operations
// on a matmul's operand ("g1 -> matmul") in its runtime fusion engines. This
// asks cuDNN's heuristics for every engine configuration of:
//
//   plain:  C = X @ W^T
//   gelu:   C = gelu_tanh(X) @ W^T
//   affine: C = relu(X * g + b) @ W^T          g, b per column of X (per k)
//   ln:     C = gelu_tanh((X - mu) * rstd * g + b) @ W^T
//                                              mu, rstd per row (a stats
//                                              pass before, as Kiln's plan
//                                              would have it)
//
// finalizes each, checks the result against the unfused path, and times it
// (kernel time: 20 back-to-back calls per event pair, median of 30) beside
// the path Kiln runs today: one row kernel writing gelu(ln(X)) in bf16, then
// cuBLASLt's heuristic algorithm.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 bench/experiments/cudnn_prologue.cu
//        -lcudnn -lcublasLt -o cudnn_prologue
#include "kernel_time.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cudnn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

constexpr int64_t M = 8192, N = 4096, K = 4096;

#define DNN(e)                                                                 \
  do {                                                                         \
    cudnnStatus_t s_ = (e);                                                    \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #e,           \
                   cudnnGetErrorString(s_));                                   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define LT(e)                                                                  \
  do {                                                                         \
    cublasStatus_t s_ = (e);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
      std::fprintf(stderr, "%s: %d\n", #e, int(s_));                           \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// ---------------------------------------------------------------- kernels

__device__ float gelu_tanh(float v) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f;
  return 0.5f * v * (1.f + tanhf(k0 * (v + k1 * v * v * v)));
}

// One row of 4096 a block of 512 threads, 8 bf16 a thread: the row's mean
// and rstd (eps 1e-5), then, when y is given, gelu(ln(x)) in bf16.
__global__ void __launch_bounds__(512)
    ln_rows(const __nv_bfloat16 *x, const float *g, const float *b,
            float *mu_out, float *rs_out, __nv_bfloat16 *y) {
  const int64_t row = blockIdx.x;
  const int t = threadIdx.x;
  const uint4 raw =
      reinterpret_cast<const uint4 *>(x + row * K)[t];
  const __nv_bfloat16 *h = reinterpret_cast<const __nv_bfloat16 *>(&raw);
  float v[8], s = 0;
  for (int i = 0; i < 8; ++i)
    s += v[i] = __bfloat162float(h[i]);
  __shared__ float red[16];
  __shared__ float stat[2];
  for (int m = 16; m; m /= 2)
    s += __shfl_xor_sync(~0u, s, m);
  if (t % 32 == 0)
    red[t / 32] = s;
  __syncthreads();
  if (t < 32) {
    float a = t < 16 ? red[t] : 0.f;
    for (int m = 16; m; m /= 2)
      a += __shfl_xor_sync(~0u, a, m);
    if (t == 0)
      stat[0] = a / K;
  }
  __syncthreads();
  const float mean = stat[0];
  float q = 0;
  for (int i = 0; i < 8; ++i)
    q += (v[i] - mean) * (v[i] - mean);
  for (int m = 16; m; m /= 2)
    q += __shfl_xor_sync(~0u, q, m);
  __syncthreads();
  if (t % 32 == 0)
    red[t / 32] = q;
  __syncthreads();
  if (t < 32) {
    float a = t < 16 ? red[t] : 0.f;
    for (int m = 16; m; m /= 2)
      a += __shfl_xor_sync(~0u, a, m);
    if (t == 0)
      stat[1] = rsqrtf(a / K + 1e-5f);
  }
  __syncthreads();
  const float rs = stat[1];
  if (t == 0 && mu_out) {
    mu_out[row] = mean;
    rs_out[row] = rs;
  }
  if (!y)
    return;
  uint4 out;
  __nv_bfloat16 *o = reinterpret_cast<__nv_bfloat16 *>(&out);
  for (int i = 0; i < 8; ++i) {
    const int c = t * 8 + i;
    o[i] = __float2bfloat16(gelu_tanh((v[i] - mean) * rs * g[c] + b[c]));
  }
  reinterpret_cast<uint4 *>(y + row * K)[t] = out;
}

__global__ void gelu_only(const __nv_bfloat16 *x, __nv_bfloat16 *y,
                          int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(gelu_tanh(__bfloat162float(x[i])));
}

__global__ void affine_relu(const __nv_bfloat16 *x, const float *g,
                            const float *b, __nv_bfloat16 *y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % K;
    y[i] = __float2bfloat16(fmaxf(__bfloat162float(x[i]) * g[c] + b[c], 0.f));
  }
}

// ---------------------------------------------------------------- cuBLASLt

struct Lt {
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo;
  void *ws;
  size_t ws_size = 64 << 20;

  // C[rows,N] (row-major) = A[rows,K] @ W[N,K]^T, as column-major
  // C^T = W A^T.
  explicit Lt(int64_t rows = M) {
    LT(cublasLtCreate(&h));
    LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t,
                                      sizeof t));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &n,
                                      sizeof n));
    LT(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, K, N, K)); // W as KxN
    LT(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, K, rows, K)); // A^T
    LT(cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, N, rows, N));
    CK(cudaMalloc(&ws, ws_size));
    cublasLtMatmulPreference_t pref;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size,
        sizeof ws_size));
    cublasLtMatmulHeuristicResult_t r;
    int got = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(h, op, a, b, c, c, pref, 1, &r, &got));
    if (!got) {
      std::fprintf(stderr, "no cuBLASLt algorithm\n");
      std::exit(1);
    }
    algo = r.algo;
  }
  void run(const __nv_bfloat16 *A, const __nv_bfloat16 *W, __nv_bfloat16 *C,
           cudaStream_t s = 0) {
    const float one = 1, zero = 0;
    LT(cublasLtMatmul(h, op, &one, W, a, A, b, &zero, C, c, C, c, &algo, ws,
                      ws_size, s));
  }
};

// ---------------------------------------------------------------- cuDNN

struct Desc {
  cudnnBackendDescriptor_t d = nullptr;
  explicit Desc(cudnnBackendDescriptorType_t t) {
    DNN(cudnnBackendCreateDescriptor(t, &d));
  }
  Desc(Desc &&o) noexcept : d(o.d) { o.d = nullptr; }
  ~Desc() {
    if (d)
      cudnnBackendDestroyDescriptor(d);
  }
  Desc &set(cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t t,
            int64_t c, const void *v) {
    DNN(cudnnBackendSetAttribute(d, n, t, c, v));
    return *this;
  }
  Desc &desc(cudnnBackendAttributeName_t n, const Desc &o) {
    return set(n, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o.d);
  }
  Desc &type(cudnnBackendAttributeName_t n, cudnnDataType_t t) {
    return set(n, CUDNN_TYPE_DATA_TYPE, 1, &t);
  }
  Desc &i64(cudnnBackendAttributeName_t n, int64_t v) {
    return set(n, CUDNN_TYPE_INT64, 1, &v);
  }
  Desc &fin() {
    DNN(cudnnBackendFinalize(d));
    return *this;
  }
};

enum : int64_t { uX = 1, uMu, uRs, uG, uB, uW, uC, uVirt = 100 };

struct Graph {
  std::deque<Desc> keep, ops;
  int64_t next = uVirt;

  const Desc &tensor(int64_t uid, cudnnDataType_t t,
                     std::vector<int64_t> dims, std::vector<int64_t> strides,
                     bool virt) {
    Desc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    d.type(CUDNN_ATTR_TENSOR_DATA_TYPE, t)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 3, dims.data())
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 3, strides.data())
        .i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
        .i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt)
        .fin();
    keep.push_back(std::move(d));
    return keep.back();
  }
  const Desc &temp(cudnnDataType_t t) {
    return tensor(next++, t, {1, M, K}, {M * K, K, 1}, true);
  }
  const Desc &pw(cudnnPointwiseMode_t mode, const Desc &x, const Desc *b,
                 cudnnDataType_t out = CUDNN_DATA_FLOAT) {
    const Desc &y = temp(out);
    Desc p(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    p.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
        .type(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_DATA_FLOAT)
        .fin();
    Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p)
        .desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b)
      op.desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    op.fin();
    keep.push_back(std::move(p));
    ops.push_back(std::move(op));
    return y;
  }
  void matmul(const Desc &a, const Desc &w, const Desc &c) {
    Desc m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    m.type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).fin();
    Desc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, w)
        .desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .fin();
    keep.push_back(std::move(m));
    ops.push_back(std::move(op));
  }
};

enum class Kind { Plain, Gelu, Affine, Ln };
const char *name(Kind k) {
  return k == Kind::Plain ? "plain" : k == Kind::Gelu ? "gelu"
                                    : k == Kind::Affine ? "affine" : "ln";
}

struct Bufs {
  __nv_bfloat16 *x, *w, *c, *ref, *y;
  float *mu, *rs, *g, *b;
};

// Builds the graph of `kind` (the operand fed to the matmul in `mid`), tries
// every configuration the heuristics propose and times those that finalize.
void try_graph(cudnnHandle_t h, Kind kind, cudnnDataType_t mid, Bufs &m) {
  Graph g;
  const cudnnDataType_t bf = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT;
  const Desc &x = g.tensor(uX, bf, {1, M, K}, {M * K, K, 1}, false);
  const Desc &w = g.tensor(uW, bf, {1, K, N}, {N * K, 1, K}, false);
  const Desc &c = g.tensor(uC, bf, {1, M, N}, {M * N, N, 1}, false);
  const Desc *a = &x;
  if (kind == Kind::Gelu) {
    a = &g.pw(CUDNN_POINTWISE_GELU_APPROX_TANH_FWD, x, nullptr, mid);
  } else if (kind == Kind::Affine) {
    const Desc &gg = g.tensor(uG, f32, {1, 1, K}, {K, K, 1}, false);
    const Desc &bb = g.tensor(uB, f32, {1, 1, K}, {K, K, 1}, false);
    const Desc &t1 = g.pw(CUDNN_POINTWISE_MUL, x, &gg);
    const Desc &t2 = g.pw(CUDNN_POINTWISE_ADD, t1, &bb);
    a = &g.pw(CUDNN_POINTWISE_RELU_FWD, t2, nullptr, mid);
  } else if (kind == Kind::Ln) {
    const Desc &mu = g.tensor(uMu, f32, {1, M, 1}, {M, 1, 1}, false);
    const Desc &rs = g.tensor(uRs, f32, {1, M, 1}, {M, 1, 1}, false);
    const Desc &gg = g.tensor(uG, f32, {1, 1, K}, {K, K, 1}, false);
    const Desc &bb = g.tensor(uB, f32, {1, 1, K}, {K, K, 1}, false);
    const Desc &t1 = g.pw(CUDNN_POINTWISE_SUB, x, &mu);
    const Desc &t2 = g.pw(CUDNN_POINTWISE_MUL, t1, &rs);
    const Desc &t3 = g.pw(CUDNN_POINTWISE_MUL, t2, &gg);
    const Desc &t4 = g.pw(CUDNN_POINTWISE_ADD, t3, &bb);
    a = &g.pw(CUDNN_POINTWISE_GELU_APPROX_TANH_FWD, t4, nullptr, mid);
  }
  g.matmul(*a, w, c);

  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> ops;
  for (const Desc &d : g.ops)
    ops.push_back(d.d);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            int64_t(ops.size()), ops.data())
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  const char *mids = mid == CUDNN_DATA_FLOAT ? "f32" : "bf16";
  if (cudnnStatus_t s = cudnnBackendFinalize(graph.d)) {
    std::printf("%-6s A in %-4s: graph rejected: %s\n", name(kind), mids,
                cudnnGetErrorString(s));
    return;
  }
  int tried = 0, ok = 0;
  for (cudnnBackendHeurMode_t mode :
       {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (cudnnBackendFinalize(heur.d) != CUDNN_STATUS_SUCCESS)
      continue;
    int64_t n = 0;
    cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr);
    std::vector<Desc> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < n; ++i) {
      cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(cfgs.back().d);
    }
    if (n)
      cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n,
                               raw.data());
    for (int64_t i = 0; i < n && i < 12; ++i) {
      ++tried;
      // The engine's global index, for the record.
      Desc eng(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      int64_t cnt = 0, gidx = -1;
      cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &eng.d);
      cudnnBackendGetAttribute(eng.d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                               CUDNN_TYPE_INT64, 1, &cnt, &gidx);
      Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[i]);
      if (cudnnStatus_t s = cudnnBackendFinalize(plan.d)) {
        std::printf("%-6s A in %-4s: %s engine %lld: plan: %s\n", name(kind),
                    mids, mode == CUDNN_HEUR_MODE_A ? "A" : "fallback",
                    (long long)gidx, cudnnGetErrorString(s));
        continue;
      }
      int64_t wsz = 0;
      cudnnBackendGetAttribute(plan.d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                               CUDNN_TYPE_INT64, 1, &cnt, &wsz);
      void *ws = nullptr;
      if (wsz)
        CK(cudaMalloc(&ws, wsz));
      int64_t uids[7] = {uX, uW, uC, uMu, uRs, uG, uB};
      void *ptrs[7] = {m.x, m.w, m.c, m.mu, m.rs, m.g, m.b};
      const int nb = kind == Kind::Ln ? 7 : kind == Kind::Affine ? 5 : 3;
      if (kind == Kind::Affine) {
        uids[3] = uG, uids[4] = uB, ptrs[3] = m.g, ptrs[4] = m.b;
      }
      Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, nb, uids)
          .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, nb,
               ptrs)
          .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
          .fin();
      CK(cudaMemset(m.c, 0xff, size_t(M) * N * 2));
      if (cudnnStatus_t s = cudnnBackendExecute(h, plan.d, pack.d)) {
        std::printf("%-6s engine %lld: execute: %s\n", name(kind),
                    (long long)gidx, cudnnGetErrorString(s));
        continue;
      }
      CK(cudaDeviceSynchronize());
      // Against the unfused result in m.ref.
      std::vector<__nv_bfloat16> got(size_t(M) * N), want(size_t(M) * N);
      CK(cudaMemcpy(got.data(), m.c, got.size() * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(want.data(), m.ref, want.size() * 2,
                    cudaMemcpyDeviceToHost));
      double err = 0, mag = 0;
      for (size_t i = 0; i < got.size(); i += 97) {
        const double a1 = __bfloat162float(got[i]),
                     b1 = __bfloat162float(want[i]);
        err = std::fmax(err, std::isnan(a1) ? 1e30 : std::fabs(a1 - b1));
        mag = std::fmax(mag, std::fabs(b1));
      }
      const float ms = kernel_time_ms(
          [&] { DNN(cudnnBackendExecute(h, plan.d, pack.d)); });
      ++ok;
      std::printf("%-6s A in %-4s: %s engine %lld: %.4f ms  %.0f TFLOP/s  "
                  "max err %.3g of %.3g\n",
                  name(kind), mids,
                  mode == CUDNN_HEUR_MODE_A ? "A" : "fallback",
                  (long long)gidx, ms, 2.0 * M * N * K / ms / 1e9, err, mag);
      if (ws)
        CK(cudaFree(ws));
    }
  }
  std::printf("%-6s A in %-4s: %d configurations proposed, %d ran\n",
              name(kind), mids, tried, ok);
}

int main() {
  std::printf("cuDNN %zu, cuBLASLt %zu\n", cudnnGetVersion(),
              cublasLtGetVersion());
  Bufs m;
  CK(cudaMalloc(&m.x, M * K * 2));
  CK(cudaMalloc(&m.y, M * K * 2));
  CK(cudaMalloc(&m.w, N * K * 2));
  CK(cudaMalloc(&m.c, M * N * 2));
  CK(cudaMalloc(&m.ref, M * N * 2));
  CK(cudaMalloc(&m.mu, M * 4));
  CK(cudaMalloc(&m.rs, M * 4));
  CK(cudaMalloc(&m.g, K * 4));
  CK(cudaMalloc(&m.b, K * 4));
  fill_bf16<<<1024, 256>>>(m.x, M * K, 1, 4.f, 0.f);
  fill_bf16<<<1024, 256>>>(m.w, N * K, 2, 0.06f, 0.f);
  {
    std::vector<float> g(K), b(K);
    for (int i = 0; i < K; ++i)
      g[i] = 0.5f + (i % 13) / 13.f, b[i] = ((i % 7) - 3) / 10.f;
    CK(cudaMemcpy(m.g, g.data(), K * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(m.b, b.data(), K * 4, cudaMemcpyHostToDevice));
  }
  Lt lt;
  cudnnHandle_t h;
  DNN(cudnnCreate(&h));

  // Today's path, and each graph's reference.
  const float t_gemm = kernel_time_ms([&] { lt.run(m.x, m.w, m.ref); });
  const float t_stats = kernel_time_ms(
      [&] { ln_rows<<<M, 512>>>(m.x, m.g, m.b, m.mu, m.rs, nullptr); });
  const float t_ln = kernel_time_ms(
      [&] { ln_rows<<<M, 512>>>(m.x, m.g, m.b, nullptr, nullptr, m.y); });
  const float t_path = kernel_time_ms([&] {
    ln_rows<<<M, 512>>>(m.x, m.g, m.b, nullptr, nullptr, m.y);
    lt.run(m.y, m.w, m.ref);
  });
  std::printf("cuBLASLt X@W^T                 %.4f ms  %.0f TFLOP/s\n", t_gemm,
              2.0 * M * N * K / t_gemm / 1e9);
  std::printf("row kernel: stats only         %.4f ms\n", t_stats);
  std::printf("row kernel: gelu(ln(x)) bf16   %.4f ms\n", t_ln);
  std::printf("row kernel + cuBLASLt (today)  %.4f ms\n", t_path);
  std::fflush(stdout);

  // The row kernel of chunk i+1 on a second stream while the GEMM of chunk
  // i runs: does the GEMM leave room for it?
  for (int chunks : {2, 4, 8}) {
    const int64_t rows = M / chunks;
    Lt part(rows);
    cudaStream_t s1;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(chunks + 1);
    for (cudaEvent_t &e : ev)
      CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const float t = kernel_time_ms([&] {
      CK(cudaEventRecord(ev[chunks], 0)); // s1 after the previous call
      CK(cudaStreamWaitEvent(s1, ev[chunks]));
      for (int i = 0; i < chunks; ++i) {
        ln_rows<<<rows, 512, 0, s1>>>(m.x + i * rows * K, m.g, m.b, nullptr,
                                      nullptr, m.y + i * rows * K);
        CK(cudaEventRecord(ev[i], s1));
      }
      for (int i = 0; i < chunks; ++i) {
        CK(cudaStreamWaitEvent(0, ev[i]));
        part.run(m.y + i * rows * K, m.w, m.c + i * rows * N, 0);
      }
    });
    const float t1 = kernel_time_ms([&] {
      for (int i = 0; i < chunks; ++i) {
        ln_rows<<<rows, 512>>>(m.x + i * rows * K, m.g, m.b, nullptr, nullptr,
                               m.y + i * rows * K);
        part.run(m.y + i * rows * K, m.w, m.c + i * rows * N, 0);
      }
    });
    std::printf("%d chunks: two streams %.4f ms, one stream %.4f ms\n",
                chunks, t, t1);
    std::fflush(stdout);
  }

  if (std::getenv("NO_GRAPHS")) // the library's graphs take a minute
    return 0;
  for (Kind k : {Kind::Plain, Kind::Gelu, Kind::Affine, Kind::Ln}) {
    // The reference: the prologue in its own kernel, then cuBLASLt.
    const int64_t n = M * K;
    if (k == Kind::Plain)
      lt.run(m.x, m.w, m.ref);
    else if (k == Kind::Gelu)
      gelu_only<<<4096, 256>>>(m.x, m.y, n), lt.run(m.y, m.w, m.ref);
    else if (k == Kind::Affine)
      affine_relu<<<4096, 256>>>(m.x, m.g, m.b, m.y, n),
          lt.run(m.y, m.w, m.ref);
    else {
      ln_rows<<<M, 512>>>(m.x, m.g, m.b, m.mu, m.rs, m.y);
      lt.run(m.y, m.w, m.ref);
    }
    CK(cudaDeviceSynchronize());
    for (cudnnDataType_t mid : {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT}) {
      if (k == Kind::Plain && mid == CUDNN_DATA_FLOAT)
        continue;
      try_graph(h, k, mid, m);
    }
  }
  std::printf("floor (790 TFLOP/s): %.4f ms\n", 2.0 * M * N * K / 790e9);
  return 0;
}
