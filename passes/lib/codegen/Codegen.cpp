// compile_function: specialise per dtype, optimise, schedule, emit; and the
// per-TU assembly of every function's CUDA and host code.
#include "Emit.h"
#include "Explain.h"

#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallSet.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;

// Tensor arguments used as a `where` condition are b8 in every variant:
// the eager op would reject anything else.
static llvm::SmallSet<NodeId, 4> condition_args(const ir::Graph &g) {
  llvm::SmallSet<NodeId, 4> conds;
  for (const ir::Node &n : g.nodes)
    if (n.op == Op::Where && g.node(n.operands[0]).op == Op::Input)
      conds.insert(n.operands[0]);
  return conds;
}

// The captured graph with every tensor argument given the variant's dtype,
// then the whole pass pipeline.
static llvm::Expected<ir::Graph>
specialise(const ir::Graph &captured, DType dt, const Options &opts,
           std::vector<std::pair<std::string, std::string>> &dumps) {
  ir::Graph g = captured;
  auto conds = condition_args(g);
  for (auto [id, n] : llvm::enumerate(g.nodes))
    if (n.op == Op::Input)
      n.type = ir::Type::tensor(conds.contains(NodeId(id)) ? DType::b8 : dt,
                                n.type.shape);
  passes::PassOptions po;
  po.unsafe_math = opts.unsafe_math;
  int step = 0;
  return passes::run_pipeline(
      g, po, [&](llvm::StringRef pass, const ir::Graph &after) {
        char prefix[8];
        snprintf(prefix, sizeof prefix, "%02d-", ++step);
        dumps.emplace_back(std::string(dtype_name(dt)) + "/" + prefix +
                               pass.str(),
                           ir::print(after));
      });
}

static std::string check_outputs(const ir::Graph &g, ir::Loc &where) {
  if (g.outputs.empty())
    return "it returns no tensor";
  for (NodeId o : g.outputs) {
    const ir::Node &n = g.node(o);
    if (n.type.scalar || n.op == Op::Constant || n.op == Op::ScalarInput) {
      where = n.loc;
      return "it returns a value that is not a tensor of its arguments";
    }
  }
  for (const ir::Node &n : g.nodes)
    if (n.op == Op::Input)
      return "";
  return "it has no tensor argument";
}

FunctionCode compile_function(const FunctionSpec &spec, const Options &opts) {
  FunctionCode fc;
  fc.symbol = spec.symbol;
  fc.user_name = spec.user_name;
  if (std::string err = verify(spec.graph); !err.empty()) {
    fc.error = "internal error: captured graph is malformed: " + err;
    fc.error_loc = spec.loc;
    return fc;
  }

  std::vector<Variant> variants;
  std::string first_error;
  ir::Loc first_error_loc = spec.loc;
  for (DType dt : opts.dtypes) {
    auto g = specialise(spec.graph, dt, opts, fc.pass_dumps);
    if (!g) {
      // A pass error knows the node it failed on; report it there.
      std::string msg;
      ir::Loc at = spec.loc;
      llvm::handleAllErrors(
          g.takeError(),
          [&](const passes::PassError &e) {
            msg = e.message;
            if (e.loc.valid())
              at = e.loc;
          },
          [&](const llvm::ErrorInfoBase &e) { msg = e.message(); });
      fc.remarks.push_back(
          {at, std::string("no ") + dtype_name(dt) + " variant: " + msg});
      if (first_error.empty()) {
        first_error = msg;
        first_error_loc = at;
      }
      continue;
    }
    ir::Loc where = spec.loc;
    if (std::string err = check_outputs(*g, where); !err.empty()) {
      fc.error = "cannot compile '" + spec.user_name + "': " + err;
      fc.error_loc = where;
      return fc;
    }
    llvm::Expected<sched::KernelPlan> plan = sched::schedule(*g);
    if (!plan) {
      fc.error_loc = spec.loc;
      llvm::handleAllErrors(
          plan.takeError(),
          [&](const passes::PassError &e) {
            fc.error = "cannot compile '" + spec.user_name + "': " + e.message;
            if (e.loc.valid())
              fc.error_loc = e.loc;
          },
          [&](const llvm::ErrorInfoBase &e) {
            fc.error = "cannot compile '" + spec.user_name + "': " + e.message();
          });
      return fc;
    }
    variants.push_back({dt, std::move(*g), std::move(*plan)});
  }
  if (variants.empty()) {
    fc.error = "cannot compile '" + spec.user_name + "': " +
               (first_error.empty() ? "no dtype to specialise for" : first_error);
    fc.error_loc = first_error_loc;
    return fc;
  }

  // The plan, once per distinct kernel structure.
  std::string last;
  for (const Variant &v : variants) {
    std::string d = sched::describe(v.graph, v.plan);
    fc.plan += "[" + std::string(dtype_name(v.dtype)) + "] ";
    fc.plan += d == last ? "same plan as above\n" : d;
    last = d;
  }

  if (opts.cuda) {
    for (const Variant &v : variants)
      emit_cuda_kernels(v.graph, v.plan, spec.symbol, v.dtype, fc.cuda,
                        fc.kernel_names);
    fc.has_cuda_kernels = !fc.kernel_names.empty();
  }
  fc.host = emit_host_function(spec, variants, opts);
  fc.kernels = kernel_infos(spec, variants);
  fc.guards = guard_infos(variants, opts);
  fc.graphs = variant_graphs(variants);

  // Remarks: what was fused, and what the compiled code assumes.
  const Variant &v0 = variants.front();
  size_t captured = 0, fused = 0;
  for (const ir::Node &n : spec.graph.nodes)
    captured += ir::op_info(n.op).arity > 0;
  for (const sched::Kernel &k : v0.plan.kernels)
    fused += k.nodes.size();
  auto ops = [](size_t n) {
    return std::to_string(n) + (n == 1 ? " op" : " ops");
  };
  std::string dts;
  for (const Variant &v : variants)
    dts += (dts.empty() ? "" : ", ") + std::string(dtype_name(v.dtype));
  size_t nk = v0.plan.kernels.size();
  fc.remarks.push_back(
      {spec.loc, "compiled '" + spec.user_name + "': " + ops(captured) +
                     " captured" +
                     (fused != captured
                          ? ", " + ops(fused) + " after decomposition and "
                                                "simplification"
                          : "") +
                     ", fused into " + std::to_string(nk) +
                     (nk == 1 ? " kernel" : " kernels") + " (" + dts + "; " +
                     (opts.cuda ? "CUDA and CPU" : "CPU only") + ")"});
  // One remark per guard, from the list explain.json shows too.
  for (const GuardInfo &gi : fc.guards) {
    std::string m = "guard: " + gi.check;
    for (auto [i, dt] : llvm::enumerate(gi.variants))
      m += (i ? ", " : " (") + std::string(dtype_name(dt));
    if (!gi.variants.empty())
      m += gi.variants.size() == 1 ? " variant)" : " variants)";
    fc.remarks.push_back({spec.loc, std::move(m)});
  }
  return fc;
}

std::string cuda_translation_unit(const std::vector<FunctionCode> &fns) {
  std::string s = R"(// Generated by Kiln: fused CUDA kernels. Rebuild instead of editing.
#include <kiln/kernel_abi.h>
#include <kiln/scalar.h>

// 16-byte vector access for the contiguous kernels (narrower operands of a
// kernel move V elements in 8, 4, 2 or 1 bytes). Stores go through __stwb
// (one st.global.wb of that width): storing the struct let nvcc split some
// into one store per element (the split kernels' st.global.f32 x 4 instead
// of st.global.v4.f32: where(sum)'s second pass 0.1420 -> 0.1398 ms).
template <class T, int V> struct alignas(sizeof(T) * V) kiln_vec {
  T v[V];
};
template <int B> struct kiln_bits_of;
template <> struct kiln_bits_of<16> { using type = uint4; };
template <> struct kiln_bits_of<8> { using type = uint2; };
template <> struct kiln_bits_of<4> { using type = unsigned; };
template <> struct kiln_bits_of<2> { using type = unsigned short; };
template <> struct kiln_bits_of<1> { using type = unsigned char; };
template <int V, class T>
__device__ __forceinline__ kiln_vec<T, V> kiln_vec_load(const T *p) {
  return *reinterpret_cast<const kiln_vec<T, V> *>(p);
}
template <class T, int V>
__device__ __forceinline__ void kiln_vec_store(T *p, const kiln_vec<T, V> &v) {
  using B = typename kiln_bits_of<sizeof(T) * V>::type;
  B b;
  memcpy(&b, &v, sizeof(B));
  __stwb(reinterpret_cast<B *>(p), b);
}

// Reductions: the op table's combines as functors, warp shuffles, and the
// reduction over a row's thread group (a fixed tree: deterministic).
#define KILN_POINTWISE(Name, name, arity, rule, formula, decomposition)
#define KILN_REDUCTION(Name, name, rule, init_expr, combine_expr)             \
  struct kiln_red_##name {                                                     \
    template <class A> __device__ static A combine(A a, A b) {                 \
      return kiln::scalar::combine_##name(a, b);                               \
    }                                                                          \
  };
#include <kiln/ops.def>

template <class T> __device__ __forceinline__ T kiln_shfl_xor(T v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ bool kiln_shfl_xor(bool v, int m) {
  return __shfl_xor_sync(0xffffffffu, int(v), m) != 0;
}
template <class A>
__device__ __forceinline__ kiln::scalar::ArgAcc<A>
kiln_shfl_xor(kiln::scalar::ArgAcc<A> v, int m) {
  return {kiln_shfl_xor(v.value, m), kiln_shfl_xor(v.index, m)};
}

// Reduces v over the tpr threads of a row: the lanes of a warp when tpr <=
// 32, else the whole block (tpr == blockDim.x) through shared memory.
// Every thread of the row gets the result.
template <class Op, class A>
__device__ __forceinline__ A kiln_row_reduce(A v, int tpr, A *smem) {
  const int width = tpr < 32 ? tpr : 32;
#pragma unroll
  for (int m = 16; m > 0; m /= 2)
    if (m < width)
      v = Op::combine(v, kiln_shfl_xor(v, m));
  if (tpr <= 32)
    return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = tpr / 32;
  __syncthreads(); // smem may still be read by the previous reduction
  if (lane == 0)
    smem[warp] = v;
  __syncthreads();
  v = smem[lane & (nw - 1)];
#pragma unroll
  for (int m = 16; m > 0; m /= 2)
    if (m < nw)
      v = Op::combine(v, kiln_shfl_xor(v, m));
  return v;
}

)";
  for (const FunctionCode &f : fns)
    if (f.error.empty())
      s += f.cuda;
  return s;
}

// Bytes as a string literal of 3-digit octal escapes (never ambiguous,
// unlike \x, and much faster for the compiler than a brace list).
static void write_bytes(llvm::raw_ostream &os, const std::vector<uint8_t> &b) {
  static const char digits[] = "01234567";
  for (size_t i = 0; i < b.size(); ++i) {
    if (i % 32 == 0)
      os << (i ? "\"\n    \"" : "    \"");
    os << '\\' << digits[b[i] >> 6] << digits[(b[i] >> 3) & 7]
       << digits[b[i] & 7];
  }
  os << "\"";
}

std::string host_translation_unit(const std::vector<FunctionCode> &fns,
                                  const std::vector<uint8_t> &fatbin,
                                  const std::string &module_id,
                                  const std::string &no_cuda_reason) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "// Generated by Kiln for " << module_id
     << ": guards, launches, fused CPU loops.\n"
        "// Rebuild instead of editing.\n"
        "#include <kiln/rt.h>\n"
        "#include <kiln/scalar.h>\n\n"
        "#include <algorithm>\n#include <climits>\n#include <cstdint>\n#include <vector>\n\n"
        "namespace {\n";
  if (!fatbin.empty()) {
    os << "// nvcc's fatbin for the kernels below (" << fatbin.size()
       << " bytes).\nalignas(16) const char kiln_fatbin[] =\n";
    write_bytes(os, fatbin);
    os << ";\nkiln::rt::KernelModule kiln_module{kiln_fatbin, \""
       << llvm::sys::path::filename(module_id) << "\"};\n"
       << "constexpr bool kiln_have_cuda = true;\n";
  } else {
    os << "kiln::rt::KernelModule kiln_module{nullptr, \""
       << llvm::sys::path::filename(module_id) << "\"};\n"
       << "constexpr bool kiln_have_cuda = false;\n";
  }
  os << "[[maybe_unused]] constexpr const char *kiln_no_cuda_reason = \""
     << llvm::StringRef(no_cuda_reason.empty() ? "no CUDA kernels were built"
                                               : no_cuda_reason)
     << "\";\n";
  os << R"(
// A tensor whose elements, in memory order, are the n elements of the
// output in order: contiguous and not broadcast.
[[maybe_unused]] inline bool kiln_dense(const kiln::Tensor &t, int64_t n) {
  return t.is_contiguous() && t.numel() == n;
}
[[maybe_unused]] inline bool kiln_aligned(const void *p, unsigned bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}
// Every offset the strided kernel computes fits in 32 bits.
template <int N>
[[maybe_unused]] bool kiln_fits_u32(const kiln::OffsetCalc<N> &c, int64_t n) {
  if (n > INT32_MAX)
    return false;
  for (int i = 0; i < N; ++i) {
    int64_t last = 0;
    for (int d = 0; d < c.rank; ++d)
      last += (c.sizes[d] - 1) * c.strides[d][i];
    if (last > INT32_MAX)
      return false;
  }
  return true;
}
// Blocks of 256 threads for `threads` work items (the kernels still loop,
// grid-stride, past the largest grid).
[[maybe_unused]] inline unsigned kiln_blocks(int64_t threads, kiln::Device) {
  // One work item per thread: with a grid of one wave looping over the
  // rest, sin(x)+cos(y) on 2^26 floats reached 86% of the copy floor on an
  // H200, with a thread per item 100% (bench/experiments).
  return unsigned(std::clamp<int64_t>((threads + 255) / 256, 1, INT32_MAX));
}

// ---- fused reductions ----

// The reduced dims of the full shape: [d0, d1].
struct kiln_reduce_geom {
  int d0 = 0, d1 = -1;
};

// [outer, R, inner] of reducing `full` over `dims` (empty: all), and the
// reduced shape with the dims kept as 1 and dropped. False when a dim is
// out of range, repeated, or the dims are not adjacent.
[[maybe_unused]] inline bool
kiln_row_space(const kiln::Dims &full, std::initializer_list<int64_t> dims,
               kiln::RowSpace &sp, kiln::Dims &keep, kiln::Dims &drop,
               kiln_reduce_geom &geo) {
  const int rank = full.rank();
  int d0 = 0, d1 = rank - 1;
  if (dims.size() != 0) {
    bool seen[kiln::kMaxRank] = {};
    int lo = rank, hi = -1;
    for (int64_t d : dims) {
      int64_t nd = d < 0 ? d + rank : d;
      if (nd < 0 || nd >= rank || seen[nd])
        return false;
      seen[nd] = true;
      lo = std::min<int>(lo, int(nd));
      hi = std::max<int>(hi, int(nd));
    }
    if (hi - lo + 1 != int(dims.size()))
      return false;
    d0 = lo;
    d1 = hi;
  }
  sp = kiln::RowSpace{};
  keep = kiln::Dims{};
  drop = kiln::Dims{};
  for (int d = 0; d < rank; ++d) {
    (d < d0 ? sp.outer : d <= d1 ? sp.R : sp.inner) *= full[d];
    if (d < d0 || d > d1) {
      keep.push_back(full[d]);
      drop.push_back(full[d]);
    } else {
      keep.push_back(1);
    }
  }
  sp.rows = sp.outer * sp.inner;
  geo = {d0, d1};
  return true;
}

// t's element strides, broadcast to `full`, for each of [outer, R, inner];
// false when a group of dims cannot be walked with one stride.
[[maybe_unused]] inline bool kiln_row_strides(const kiln::Tensor &t,
                                              const kiln::Dims &full,
                                              const kiln_reduce_geom &geo,
                                              int64_t out[3]) {
  const int rank = full.rank(), off = rank - t.dim();
  if (off < 0)
    return false;
  const int lo[3] = {0, geo.d0, geo.d1 + 1}, hi[3] = {geo.d0, geo.d1 + 1, rank};
  for (int gi = 0; gi < 3; ++gi) {
    bool have = false;
    int64_t s = 0, expect = 0;
    for (int d = hi[gi] - 1; d >= lo[gi]; --d) {
      if (full[d] == 1)
        continue;
      const int td = d - off;
      const int64_t sd = td < 0 || t.sizes()[td] == 1 ? 0 : t.strides()[td];
      if (have && sd != expect)
        return false;
      if (!have)
        s = sd;
      have = true;
      expect = sd * full[d];
    }
    out[gi] = s;
  }
  return true;
}

enum kiln_red_mode { kiln_rows, kiln_loop, kiln_split };

// A tuning knob for measurements (-DKILN_ROWS_SLOTS=1|2|4 on the compile
// command reaches this code), not an interface.
#ifndef KILN_ROWS_SLOTS
#define KILN_ROWS_SLOTS 4
#endif

// How to run a reduction kernel on the GPU: a thread group per row with
// the row in registers when it fits (a warp for short rows, a block for
// long ones), a block re-reading the row per pass when it does not, and a
// row split over blocks (one launch per pass) when there are too few rows
// to fill the GPU.
[[maybe_unused]] inline kiln_red_mode
kiln_plan_cuda(kiln::RowSpace &sp, int V, int slots_per_thread,
               kiln::Device dev, unsigned &grid, unsigned &block) {
  const int64_t sms = kiln::rt::multiprocessor_count(dev);
  const int64_t slots = (sp.R + V - 1) / V;
  if (sp.rows < 2 * sms && sp.R >= 16384) {
    // About 32 blocks of 256 threads per multiprocessor in all (a grid of
    // several waves streams memory better than one), tiles of 256 slots.
    sp.tpr = 256;
    block = 256;
    const int64_t want = (32 * sms + sp.rows - 1) / sp.rows;
    const int64_t most = (slots + 255) / 256;
    sp.splits = int(std::max<int64_t>(1, std::min(want, most)));
    grid = unsigned(sp.rows * sp.splits);
    return kiln_split;
  }
  // Rows that fit the rows kernel's registers, and that it can read 16
  // bytes at a time.
  const int64_t most = std::min(slots_per_thread, 2) * 512; // rows1/2: 512 threads
  if (sp.vec && slots <= std::max<int64_t>(most, 256 * slots_per_thread)) {
    // Threads per row: enough for KILN_ROWS_SLOTS slots each (more slots
    // per thread: more bytes in flight per thread, more registers), at
    // least a warp, at most 512 (256 with 4 slots each).
    // Few rows (a small call) are latency-bound: spread each over more
    // threads.
    const int64_t want = sp.rows < 2 * sms
                             ? 1
                             : std::min(KILN_ROWS_SLOTS, slots_per_thread);
    int64_t t = 32;
    while (t * want < slots && (t < 256 || (t < 512 && slots <= most)))
      t *= 2;
    sp.tpr = int(t);
    sp.vpt = int((slots + t - 1) / t);
    block = t == 32 ? 256 : unsigned(t);
    const int64_t groups = block / t;
    grid = unsigned(std::max<int64_t>(
        1, std::min((sp.rows + groups - 1) / groups, sms * 64)));
    return kiln_rows;
  }
  sp.tpr = 512;
  block = 512;
  grid = unsigned(std::max<int64_t>(1, std::min(sp.rows, sms * 8)));
  return kiln_loop;
}

// On the CPU: rows in parallel (true), or each row split into chunks when
// there are few long rows (false; sp.splits and sp.chunk set).
[[maybe_unused]] inline bool kiln_plan_cpu(kiln::RowSpace &sp) {
  if (sp.rows >= 64 || sp.R < 65536)
    return true;
  sp.splits = int(std::min<int64_t>(256, (sp.R + 65535) / 65536));
  sp.chunk = (sp.R + sp.splits - 1) / sp.splits;
  return false;
}
} // namespace

)";
  for (const FunctionCode &f : fns)
    if (f.error.empty())
      os << f.host;
  return s;
}

} // namespace kiln::codegen
