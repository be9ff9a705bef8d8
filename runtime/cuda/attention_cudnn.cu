// cuDNN's fused flash attention for kiln::scaled_dot_product_attention:
// kiln::detail::cudnn_attention (attention_impl.h), tried by cuda_attention
// before the runtime's own kernels (attention.cu), as the attention backend
// (kiln::set_attention_backend, kiln/attention.h) says.
//
// Which cases: f16/bf16 q, k, v with unit last strides, the other strides
// multiples of 8 elements and 16-byte aligned pointers, head dims up to 128
// (multiples of 8), no mask or is_causal (top-left, as torch), any query
// and key lengths, grouped-query heads. Everything else, and every case
// cuDNN's heuristics find no engine for, runs the runtime's kernels; so does
// every case when cuDNN cannot be loaded or the backend is Kiln. With the
// backend Cudnn a case cuDNN does not take is an error instead, for tests
// and benchmarks that must know which one ran.
//
// The graph is the one cuDNN's fused attention engines match, built with
// the backend API (cudnn_graph.h; no frontend library):
//
//   S = Q @ K^T            matmul, f32 accumulation, K^T a strided view of K
//   S = S * scale          scale passed by value (not part of the plan key)
//   S = row >= col ? S : -inf        only when causal: two GEN_INDEX, CMP_GE,
//                                    BINARY_SELECT
//   M = max_j S, E = exp(S - M), Z = sum_j E, stats = M + log Z (virtual)
//   P = E / Z              rounded to the operands' dtype
//   O = P @ V              f32 accumulation, written contiguous
//
// cuDNN (libcudnn.so.9) is loaded with dlopen at the first attention that
// could use it, like cuBLASLt (gemm_cublaslt.cu): from $KILN_CUDNN (a path),
// the toolkit Kiln was built with, /usr/local/cuda/lib64, then the library
// search path. Per device: one handle, created once. Per (device, dtype,
// shape, strides, causal): the execution plan, built and finalized at the
// first call and cached for the process (also a "no", so a rejected case
// costs one lookup after the first). A call in the steady state creates one
// variant pack descriptor and takes its workspace from the caching
// allocator, like a GEMM's.
#include "attention_impl.h"
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <kiln/attention.h>
#include <kiln/stats.h>

#if __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>
#define KILN_HAVE_CUDNN_HEADERS 1
#endif

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::detail {

#ifndef KILN_HAVE_CUDNN_HEADERS
// A toolkit without cuDNN's headers: Kiln's kernels take every case.
bool cudnn_attention(const AttnArgs &) { return false; }
#else
namespace {

const char *const kFn = "kiln::scaled_dot_product_attention";
constexpr int kMaxDevices = 128;

// --- loading cuDNN ---

#define KILN_CUDNN_FUNCTIONS(X)                                                \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnSetStream)                                                            \
  X(cudnnBackendCreateDescriptor)                                              \
  X(cudnnBackendDestroyDescriptor)                                             \
  X(cudnnBackendSetAttribute)                                                  \
  X(cudnnBackendGetAttribute)                                                  \
  X(cudnnBackendFinalize)                                                      \
  X(cudnnBackendExecute)

struct DnnApi {
#define KILN_X(name) decltype(&::name) name = nullptr;
  KILN_CUDNN_FUNCTIONS(KILN_X)
#undef KILN_X
};

#define KILN_STR2(x) #x
#define KILN_STR(x) KILN_STR2(x)
const char *const kSoname = "libcudnn.so." KILN_STR(CUDNN_MAJOR);

// nullptr (and `why` says what was tried) when cuDNN cannot be loaded.
const DnnApi *load_cudnn(std::string &why) {
  std::vector<std::string> paths;
  if (const char *env = std::getenv("KILN_CUDNN"); env && *env)
    paths.push_back(env);
#ifdef KILN_CUDNN_PATH
  paths.push_back(KILN_CUDNN_PATH);
#endif
  paths.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  paths.push_back(kSoname);
  void *h = nullptr;
  for (const std::string &p : paths) {
    if ((h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)))
      break;
    const char *e = dlerror();
    why += "\n  " + p + ": " + (e ? e : "?");
  }
  if (!h)
    return nullptr;
  auto api = std::make_unique<DnnApi>();
#define KILN_X(name)                                                           \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(h, #name));          \
  if (!api->name) {                                                            \
    why = "the library has no " #name;                                         \
    return nullptr;                                                            \
  }
  KILN_CUDNN_FUNCTIONS(KILN_X)
#undef KILN_X
  // The backend API's attributes used here are cuDNN 9's.
  if (api->cudnnGetVersion() / 10000 != CUDNN_MAJOR) {
    why = "version " + std::to_string(api->cudnnGetVersion()) +
          ", built against " + std::to_string(CUDNN_VERSION);
    return nullptr;
  }
  return api.release();
}

// Loaded once; nullptr for the process when it cannot be (logged once).
const DnnApi *dnn() {
  static const DnnApi *api = [] {
    std::string why;
    const DnnApi *a = load_cudnn(why);
    if (rt::log_enabled(rt::kLogKernels)) {
      if (a)
        rt::log(rt::kLogKernels, "cuDNN %zu loaded for attention",
                a->cudnnGetVersion());
      else
        rt::log(rt::kLogKernels,
                "cuDNN not loaded (attention runs Kiln's kernels): %s",
                why.c_str());
    }
    return a;
  }();
  return api;
}

// The process's starting backend: KILN_ATTENTION=auto|kiln|cudnn.
AttentionBackend env_backend() {
  const char *e = std::getenv("KILN_ATTENTION");
  if (!e || !*e || !std::strcmp(e, "auto"))
    return AttentionBackend::Auto;
  if (!std::strcmp(e, "kiln"))
    return AttentionBackend::Kiln;
  if (!std::strcmp(e, "cudnn"))
    return AttentionBackend::Cudnn;
  fail("KILN_ATTENTION=%s: expected auto, kiln or cudnn", e);
}

std::atomic<AttentionBackend> &backend() {
  static std::atomic<AttentionBackend> b{env_backend()};
  return b;
}

// A graph that cuDNN does not take (not an error: Kiln's kernel runs).
struct Rejected {
  std::string why;
};

void check(cudnnStatus_t s, const char *what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw Rejected{std::string(what) + ": " + dnn()->cudnnGetErrorString(s)};
}

// One backend descriptor, destroyed with its owner.
class Desc {
public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    check(dnn()->cudnnBackendCreateDescriptor(type, &d_),
          "cudnnBackendCreateDescriptor");
  }
  Desc(Desc &&o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc(const Desc &) = delete;
  Desc &operator=(const Desc &) = delete;
  ~Desc() {
    if (d_)
      dnn()->cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }

  Desc &set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
            int64_t count, const void *values) {
    check(dnn()->cudnnBackendSetAttribute(d_, name, type, count, values),
          "cudnnBackendSetAttribute");
    return *this;
  }
  Desc &set_desc(cudnnBackendAttributeName_t name, const Desc &d) {
    cudnnBackendDescriptor_t v = d.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
  }
  Desc &set_type(cudnnBackendAttributeName_t name, cudnnDataType_t t) {
    return set(name, CUDNN_TYPE_DATA_TYPE, 1, &t);
  }
  Desc &set_i64(cudnnBackendAttributeName_t name, int64_t v) {
    return set(name, CUDNN_TYPE_INT64, 1, &v);
  }
  Desc &finalize(const char *what) {
    check(dnn()->cudnnBackendFinalize(d_), what);
    return *this;
  }

private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims4 = std::array<int64_t, 4>;

// Unique ids of the tensors a call binds (the rest are virtual).
enum : int64_t { kQ = 1, kK, kV, kO, kScale, kNegInf, kVirtual = 100 };

// The graph's tensors and operations, kept alive until the plan is built.
class GraphBuilder {
public:
  const Desc &tensor(int64_t uid, cudnnDataType_t type, const Dims4 &dims,
                     const Dims4 &strides, bool is_virtual,
                     bool by_value = false) {
    Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t align = 16;
    const bool virt = is_virtual, byval = by_value;
    t.set_type(CUDNN_ATTR_TENSOR_DATA_TYPE, type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data())
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data())
        .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
        .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, align)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    if (by_value)
      t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval);
    t.finalize("tensor descriptor");
    keep_.push_back(std::move(t));
    return keep_.back();
  }
  // A virtual tensor of the given type and shape (row-major strides).
  const Desc &temp(cudnnDataType_t type, const Dims4 &dims) {
    Dims4 s{dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
    return tensor(next_uid_++, type, dims, s, true);
  }

  // y = mode(x, b[, t]) with math in `prec` (b, t may be null).
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                 const Desc &x, const Desc *b, const Desc &y,
                 const Desc *t = nullptr, int64_t axis = -1) {
    Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
        .set_type(CUDNN_ATTR_POINTWISE_MATH_PREC, prec);
    if (axis >= 0)
      pw.set_i64(CUDNN_ATTR_POINTWISE_AXIS, axis);
    pw.finalize("pointwise descriptor");
    Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b)
      op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t)
      op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.finalize("pointwise operation");
    keep_.push_back(std::move(pw));
    add(std::move(op));
  }

  void reduce(cudnnReduceTensorOp_t how, const Desc &x, const Desc &y) {
    Desc r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
          &how)
        .set_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
        .finalize("reduction descriptor");
    Desc op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)
        .finalize("reduction operation");
    keep_.push_back(std::move(r));
    add(std::move(op));
  }

  void matmul(const Desc &a, const Desc &b, const Desc &c) {
    Desc m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    m.set_type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT)
        .finalize("matmul descriptor");
    Desc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .finalize("matmul operation");
    keep_.push_back(std::move(m));
    add(std::move(op));
  }

  std::vector<cudnnBackendDescriptor_t> ops() const {
    std::vector<cudnnBackendDescriptor_t> v;
    for (const Desc &d : ops_)
      v.push_back(d.get());
    return v;
  }

private:
  void add(Desc op) { ops_.push_back(std::move(op)); }
  // Deques: the references handed out stay valid as the graph grows.
  std::deque<Desc> keep_, ops_;
  int64_t next_uid_ = kVirtual;
};

// --- the plan cache ---

struct Key {
  int device;
  DType dtype;
  int64_t B, Hq, Hkv, L, S, D, Dv;
  std::array<int64_t, 16> strides; // q, k, v, out
  bool causal;
  auto tie() const {
    return std::tie(device, dtype, B, Hq, Hkv, L, S, D, Dv, strides, causal);
  }
  bool operator<(const Key &o) const { return tie() < o.tie(); }
};

struct Plan {
  Desc plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  int64_t workspace = 0;
};

struct DnnDevice {
  cudnnHandle_t handle = nullptr;
  std::mutex mu; // the handle's stream, and the plans
  std::map<Key, std::shared_ptr<Plan>> plans; // null: cuDNN does not take it
};

DnnDevice &device_state(int device) {
  static std::atomic<DnnDevice *> devs[kMaxDevices];
  static std::mutex mu;
  if (DnnDevice *d = devs[device].load(std::memory_order_acquire))
    return *d;
  std::lock_guard<std::mutex> lock(mu);
  if (DnnDevice *d = devs[device].load(std::memory_order_acquire))
    return *d;
  auto *d = new DnnDevice;
  cudnnStatus_t s = dnn()->cudnnCreate(&d->handle);
  if (s != CUDNN_STATUS_SUCCESS)
    fail("%s: cudnnCreate on cuda:%d failed: %s", kFn, device,
         dnn()->cudnnGetErrorString(s));
  devs[device].store(d, std::memory_order_release);
  return *d;
}

// Strides of a [B, H, rows, cols] operand as cuDNN is given them: a dim of
// size 1 gets the row-major stride (its own stride is arbitrary, 0 included).
Dims4 strides_of(const int64_t s[4], const Dims4 &dims) {
  Dims4 r{s[0], s[1], s[2], s[3]};
  int64_t inner = 1;
  for (int d = 3; d >= 0; --d) {
    if (dims[d] == 1)
      r[d] = inner;
    inner = std::max(inner, r[d] * dims[d]);
  }
  return r;
}

cudnnDataType_t dnn_type(DType t) {
  return t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

std::shared_ptr<Plan> build(const Key &k, cudnnHandle_t handle) {
  const cudnnDataType_t io = dnn_type(k.dtype), f32 = CUDNN_DATA_FLOAT;
  const Dims4 qd{k.B, k.Hq, k.L, k.D}, kd{k.B, k.Hkv, k.S, k.D},
      vd{k.B, k.Hkv, k.S, k.Dv}, od{k.B, k.Hq, k.L, k.Dv},
      sd{k.B, k.Hq, k.L, k.S}, rd{k.B, k.Hq, k.L, 1}, one{1, 1, 1, 1};
  const Dims4 qs = strides_of(&k.strides[0], qd),
              ks = strides_of(&k.strides[4], kd),
              vs = strides_of(&k.strides[8], vd);
  GraphBuilder g;
  const Desc &q = g.tensor(kQ, io, qd, qs, false);
  // K^T: [B, Hkv, D, S], K's strides with the last two swapped.
  const Desc &kt = g.tensor(kK, io, {k.B, k.Hkv, k.D, k.S},
                            {ks[0], ks[1], ks[3], ks[2]}, false);
  const Desc &v = g.tensor(kV, io, vd, vs, false);
  const Desc &o = g.tensor(kO, io, od, strides_of(&k.strides[12], od), false);
  const Desc &scale = g.tensor(kScale, f32, one, one, false, true);

  const Desc &s0 = g.temp(f32, sd);
  g.matmul(q, kt, s0);
  const Desc *s = &g.temp(f32, sd);
  g.pointwise(CUDNN_POINTWISE_MUL, f32, s0, &scale, *s);
  if (k.causal) {
    const Desc &neg_inf = g.tensor(kNegInf, f32, one, one, false, true);
    const Desc &row = g.temp(CUDNN_DATA_INT32, sd);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *s, nullptr, row, nullptr, 2);
    const Desc &col = g.temp(CUDNN_DATA_INT32, sd);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *s, nullptr, col, nullptr, 3);
    const Desc &keep = g.temp(CUDNN_DATA_BOOLEAN, sd);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, &col, keep);
    const Desc &masked = g.temp(f32, sd);
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, *s, &neg_inf, masked,
                &keep);
    s = &masked;
  }
  const Desc &m = g.temp(f32, rd);
  g.reduce(CUDNN_REDUCE_TENSOR_MAX, *s, m);
  const Desc &z = g.temp(f32, sd);
  g.pointwise(CUDNN_POINTWISE_SUB, f32, *s, &m, z);
  const Desc &e = g.temp(f32, sd);
  g.pointwise(CUDNN_POINTWISE_EXP, f32, z, nullptr, e);
  const Desc &sum = g.temp(f32, rd);
  g.reduce(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const Desc &log_sum = g.temp(f32, rd);
  g.pointwise(CUDNN_POINTWISE_LOG, f32, sum, nullptr, log_sum);
  const Desc &stats = g.temp(f32, rd);
  g.pointwise(CUDNN_POINTWISE_ADD, f32, m, &log_sum, stats);
  const Desc &p = g.temp(io, sd);
  g.pointwise(CUDNN_POINTWISE_DIV, f32, e, &sum, p);
  g.matmul(p, v, o);

  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> ops = g.ops();
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            int64_t(ops.size()), ops.data())
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
      .finalize("operation graph");

  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)
      .finalize("engine heuristics");
  int64_t n = 0;
  check(dnn()->cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n,
                                        nullptr),
        "engine heuristics' results");
  if (n <= 0)
    throw Rejected{"no engine for this graph"};
  std::vector<Desc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < n; ++i) {
    cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(cfgs.back().get());
  }
  check(dnn()->cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n,
                                        raw.data()),
        "engine heuristics' results");
  // The first configuration (in the heuristics' order) that finalizes.
  std::string last;
  for (int64_t i = 0; i < n; ++i) {
    auto plan = std::make_shared<Plan>();
    cudnnBackendDescriptor_t cfg = raw[i];
    plan->plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                   &handle)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    cudnnStatus_t st = dnn()->cudnnBackendFinalize(plan->plan.get());
    if (st != CUDNN_STATUS_SUCCESS) {
      last = dnn()->cudnnGetErrorString(st);
      continue;
    }
    int64_t got = 0;
    check(dnn()->cudnnBackendGetAttribute(
              plan->plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
              CUDNN_TYPE_INT64, 1, &got, &plan->workspace),
          "the plan's workspace size");
    return plan;
  }
  throw Rejected{"no engine configuration finalized (last: " + last + ")"};
}

// Why cuDNN's engines cannot take these operands ("" when they can).
const char *unsupported(const AttnArgs &a) {
  if (a.dtype != DType::f16 && a.dtype != DType::bf16)
    return "the dtype is not f16 or bf16";
  if (a.mask)
    return "an attn_mask is given";
  if (a.S == 0)
    return "no keys (S = 0)";
  if (a.D > 128 || a.Dv > 128 || a.D % 8 || a.Dv % 8)
    return "head dims beyond 128 or not multiples of 8";
  const auto ok16 = [](const void *p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
  };
  if (!ok16(a.q) || !ok16(a.k) || !ok16(a.v) || !ok16(a.out))
    return "pointers not 16-byte aligned";
  const int64_t rows[4] = {a.L, a.S, a.S, a.L},
                heads[4] = {a.Hq, a.Hkv, a.Hkv, a.Hq};
  const int64_t *st[4] = {a.q_stride, a.k_stride, a.v_stride, a.o_stride};
  for (int t = 0; t < 4; ++t) {
    if (st[t][3] != 1)
      return "a head dim of stride other than 1";
    const int64_t sizes[3] = {a.B, heads[t], rows[t]};
    for (int d = 0; d < 3; ++d)
      if (sizes[d] > 1 && (st[t][d] <= 0 || st[t][d] % 8))
        return "strides that are not positive multiples of 8";
  }
  return nullptr;
}

// "bf16 B=2 Hq=8 Hkv=2 L=128 S=128 D=64 causal", for the logs.
std::string describe(const AttnArgs &a) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%s B=%lld Hq=%lld Hkv=%lld L=%lld S=%lld D=%lld Dv=%lld%s",
                dtype_name(a.dtype), (long long)a.B, (long long)a.Hq,
                (long long)a.Hkv, (long long)a.L, (long long)a.S,
                (long long)a.D, (long long)a.Dv, a.causal ? " causal" : "");
  return buf;
}

} // namespace

bool cudnn_attention(const AttnArgs &a) {
  const AttentionBackend pol = backend().load(std::memory_order_relaxed);
  if (pol == AttentionBackend::Kiln)
    return false;
  const auto reject = [&](const std::string &why) {
    if (pol == AttentionBackend::Cudnn)
      fail("%s: the attention backend is cuDNN, which does not take this case: %s",
           kFn, why.c_str());
    return false;
  };
  if (const char *why = unsupported(a))
    return reject(why);
  if (!dnn())
    return reject("cuDNN cannot be loaded");
  const int device = a.device.index;
  DnnDevice &dev = device_state(device);
  Key key{device, a.dtype, a.B, a.Hq, a.Hkv, a.L, a.S, a.D, a.Dv, {}, a.causal};
  for (int d = 0; d < 4; ++d) {
    key.strides[d] = a.q_stride[d];
    key.strides[4 + d] = a.k_stride[d];
    key.strides[8 + d] = a.v_stride[d];
    key.strides[12 + d] = a.o_stride[d];
  }
  const cudaStream_t stream = stream_of(device);
  std::lock_guard<std::mutex> lock(dev.mu);
  auto it = dev.plans.find(key);
  if (it == dev.plans.end()) {
    std::shared_ptr<Plan> plan;
    std::string why;
    try {
      plan = build(key, dev.handle);
    } catch (const Rejected &r) {
      why = r.why;
    }
    if (rt::log_enabled(rt::kLogKernels))
      rt::log(rt::kLogKernels, "cuDNN attention %s: %s%s",
              describe(a).c_str(), plan ? "plan built" : "not taken: ",
              why.c_str());
    it = dev.plans.emplace(key, std::move(plan)).first;
    if (!it->second)
      return reject(why);
  }
  if (!it->second)
    return reject("cuDNN found no engine for this case (logged at its first "
                  "call)");
  const Plan &plan = *it->second;

  float scale = float(a.scale);
  float neg_inf = -std::numeric_limits<float>::infinity();
  int64_t uids[6] = {kQ, kK, kV, kO, kScale, kNegInf};
  void *ptrs[6] = {const_cast<void *>(a.q), const_cast<void *>(a.k),
                   const_cast<void *>(a.v), a.out, &scale, &neg_inf};
  const int64_t nbound = a.causal ? 6 : 5;
  void *ws = plan.workspace
                 ? cuda_alloc(size_t(plan.workspace), device, stream, kFn)
                 : nullptr;
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  try {
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, nbound, uids)
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
             nbound, ptrs)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
        .finalize("variant pack");
    st = dnn()->cudnnSetStream(dev.handle, stream);
    if (st == CUDNN_STATUS_SUCCESS)
      st = dnn()->cudnnBackendExecute(dev.handle, plan.plan.get(), pack.get());
  } catch (const Rejected &r) {
    cuda_free(ws, size_t(plan.workspace), device, stream);
    fail("%s: cuDNN: %s", kFn, r.why.c_str());
  }
  cuda_free(ws, size_t(plan.workspace), device, stream);
  if (st != CUDNN_STATUS_SUCCESS)
    fail("%s: cuDNN's attention failed: %s", kFn,
         dnn()->cudnnGetErrorString(st));
  rt::bump(rt::kLaunches);
  if (rt::log_enabled(rt::kLogKernels))
    rt::log(rt::kLogKernels,
            "launch scaled_dot_product_attention [cudnn] %s (cuda:%d)",
            describe(a).c_str(), device);
  return true;
}

#endif // KILN_HAVE_CUDNN_HEADERS

} // namespace kiln::detail

namespace kiln {

void set_attention_backend(AttentionBackend b) {
#ifdef KILN_HAVE_CUDNN_HEADERS
  detail::backend().store(b, std::memory_order_relaxed);
#else
  (void)b;
#endif
}

AttentionBackend attention_backend() {
#ifdef KILN_HAVE_CUDNN_HEADERS
  return detail::backend().load(std::memory_order_relaxed);
#else
  return AttentionBackend::Kiln;
#endif
}

bool cudnn_attention_available() {
#ifdef KILN_HAVE_CUDNN_HEADERS
  return detail::dnn() != nullptr;
#else
  return false;
#endif
}

} // namespace kiln
