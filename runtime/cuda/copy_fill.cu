// Eager CUDA kernels: converting copies and fills, and the dispatch of the
// element-wise ops (instantiated in pointwise_*.cu).
#include "cuda_backend.h"
#include "pointwise_kernels.cuh"

#include <kiln/generated.h>

namespace kiln::detail {

// --- element-wise ops ---

static const CudaPwTable &cuda_pw_table() {
  static const CudaPwTable *table = [] {
    auto *t = new CudaPwTable;
    fill_cuda_pointwise<0>(*t);
    fill_cuda_pointwise<1>(*t);
    fill_cuda_pointwise<2>(*t);
    fill_cuda_pointwise<3>(*t);
    return t;
  }();
  return *table;
}
static_assert(kPwGroups == 4, "cuda_pw_table fills four groups");

void cuda_pointwise(const PwLaunch &l) {
  CudaPwFn fn = cuda_pw_table().fn[int(l.op)][int(l.in)][int(l.common)];
  if (!fn)
    fail("kiln::%s: no CUDA kernel for %s operands computed as %s",
         op_name(l.op), dtype_name(l.in), dtype_name(l.common));
  fn(l);
}

// --- converting copies ---

template <class S, class D>
__global__ void __launch_bounds__(kThreads)
    copy_vec_kernel(int64_t n, CopyArgs a) {
  constexpr int V = vec_width<S, D>();
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nv = n / V;
  for (int64_t v = tid; v < nv; v += stride) {
    Vec<S, V> r = static_cast<const Vec<S, V> *>(a.in)[v];
    Vec<D, V> o;
#pragma unroll
    for (int j = 0; j < V; ++j)
      o.v[j] = convert<D>(r.v[j]);
    static_cast<Vec<D, V> *>(a.out)[v] = o;
  }
  for (int64_t i = nv * V + tid; i < n; i += stride)
    static_cast<D *>(a.out)[i] = convert<D>(static_cast<const S *>(a.in)[i]);
}

template <class S, class D, class Index>
__global__ void __launch_bounds__(kThreads)
    copy_strided_kernel(Index n, CopyArgs a, OffsetCalc<2> calc) {
  const Index stride = Index(gridDim.x) * Index(blockDim.x);
  for (Index i = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
       i < n; i += stride) {
    Index off[2];
    calc.get(i, off);
    static_cast<D *>(a.out)[off[0]] =
        convert<D>(static_cast<const S *>(a.in)[off[1]]);
  }
}

// Strided copies whose innermost (collapsed) dim is contiguous on both
// sides (a transposed view's rows of head_dim, a slice's rows): V elements
// per thread with one offset computation and vector accesses, where
// copy_strided_kernel divides per element (ncu on an H100: a 16 MB
// heads-merging copy took 58 us, 0.55 TB/s).
template <class S, class D, class Index>
__global__ void __launch_bounds__(kThreads)
    copy_inner_vec_kernel(Index nv, CopyArgs a, OffsetCalc<2> calc) {
  constexpr int V = vec_width<S, D>();
  const Index stride = Index(gridDim.x) * Index(blockDim.x);
  for (Index t = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
       t < nv; t += stride) {
    Index off[2];
    calc.get(Index(t * V), off);
    const Vec<S, V> r =
        *reinterpret_cast<const Vec<S, V> *>(static_cast<const S *>(a.in) + off[1]);
    Vec<D, V> o;
#pragma unroll
    for (int j = 0; j < V; ++j)
      o.v[j] = convert<D>(r.v[j]);
    *reinterpret_cast<Vec<D, V> *>(static_cast<D *>(a.out) + off[0]) = o;
  }
}

// Whether copy_inner_vec_kernel fits: the generated kernels' rule
// (kiln::gen::inner_vec: innermost dim a multiple of V, rows on V-element
// boundaries, pointers aligned), with both sides contiguous along that dim
// (this kernel does not splat a broadcast operand).
template <class S, class D> bool inner_vec_copy(const CopyLaunch &l) {
  constexpr int V = vec_width<S, D>();
  const OffsetCalc<2> &c = l.calc;
  return c.rank >= 1 && c.strides[c.rank - 1][0] == 1 &&
         c.strides[c.rank - 1][1] == 1 &&
         gen::inner_vec(c, V, {l.args.out, l.args.in},
                        {int(sizeof(D)), int(sizeof(S))});
}

template <class S, class D> void launch_copy(const CopyLaunch &l) {
  constexpr int V = vec_width<S, D>();
  const char *name = std::is_same_v<S, D> ? "copy" : "cast";
  set_device(l.device, "kiln::Tensor::copy_");
  dim3 block(kThreads);
  if (l.contiguous && is_aligned(l.args.out, sizeof(D) * V) &&
      is_aligned(l.args.in, sizeof(S) * V)) {
    dim3 grid(unsigned(grid_for((l.n + V - 1) / V, kThreads)));
    copy_vec_kernel<S, D><<<grid, block, 0, stream_of(l.device)>>>(l.n, l.args);
    after_launch(name, "contiguous", dtype_of<D>(), l.n, grid, block,
                 l.device);
    return;
  }
  if (inner_vec_copy<S, D>(l)) {
    const int64_t nv = l.n / V;
    dim3 grid(unsigned(grid_for(nv, kThreads)));
    if (fits_32bit(l.calc, l.n, int64_t(grid.x) * kThreads * V))
      copy_inner_vec_kernel<S, D, int32_t>
          <<<grid, block, 0, stream_of(l.device)>>>(int32_t(nv), l.args, l.calc);
    else
      copy_inner_vec_kernel<S, D, int64_t>
          <<<grid, block, 0, stream_of(l.device)>>>(nv, l.args, l.calc);
    after_launch(name, "strided_vec", dtype_of<D>(), l.n, grid, block,
                 l.device);
    return;
  }
  dim3 grid(unsigned(grid_for(l.n, kThreads)));
  bool narrow = fits_32bit(l.calc, l.n, int64_t(grid.x) * kThreads);
  if (narrow)
    copy_strided_kernel<S, D, int32_t>
        <<<grid, block, 0, stream_of(l.device)>>>(int32_t(l.n), l.args, l.calc);
  else
    copy_strided_kernel<S, D, int64_t>
        <<<grid, block, 0, stream_of(l.device)>>>(l.n, l.args, l.calc);
  after_launch(name, narrow ? "strided32" : "strided64", dtype_of<D>(), l.n,
               grid, block, l.device);
}

void cuda_copy(const CopyLaunch &l) {
  using CopyFn = void (*)(const CopyLaunch &);
  static const auto *table = [] {
    auto *t = new CopyFn[kNumDTypes][kNumDTypes];
    for_each_ctype([&]<class S>() {
      for_each_ctype([&]<class D>() {
        t[int(dtype_of<S>())][int(dtype_of<D>())] = &launch_copy<S, D>;
      });
    });
    return t;
  }();
  table[int(l.src)][int(l.dst)](l);
}

// Several copies in one launch (the pieces of a cat): block b belongs to
// the piece whose range of blocks holds it, one 16-byte vector a thread.
// Each piece passed inner_vec_copy. torch's cat copies its inputs in one
// launch the same way (CatArrayBatchedCopy); here a LLaMA decode's value
// cache and new value were two launches.
constexpr int kMaxPieces = 4;
struct CopyPieces {
  CopyArgs args[kMaxPieces];
  OffsetCalc<2> calc[kMaxPieces];
  int64_t nv[kMaxPieces];
  int64_t first_block[kMaxPieces + 1];
  int count;
};

template <class T, class Index>
__global__ void __launch_bounds__(kThreads) copy_pieces_kernel(const CopyPieces p) {
  constexpr int V = vec_width<T, T>();
  int k = 0;
#pragma unroll
  for (int j = 1; j < kMaxPieces; ++j)
    if (j < p.count && int64_t(blockIdx.x) >= p.first_block[j])
      k = j;
  const Index t = Index(int64_t(blockIdx.x) - p.first_block[k]) * Index(blockDim.x) +
                  Index(threadIdx.x);
  if (t >= Index(p.nv[k]))
    return;
  Index off[2];
  p.calc[k].get(Index(t * V), off);
  *reinterpret_cast<Vec<T, V> *>(static_cast<T *>(p.args[k].out) + off[0]) =
      *reinterpret_cast<const Vec<T, V> *>(static_cast<const T *>(p.args[k].in) + off[1]);
}

void cuda_copy_many(std::span<const CopyLaunch> ls) {
  auto batchable = [&](const CopyLaunch &l) {
    bool ok = l.src == l.dst && l.device == ls[0].device && l.src == ls[0].src;
    if (ok)
      dispatch_dtype(l.src, [&]<class T>() { ok = inner_vec_copy<T, T>(l); });
    return ok;
  };
  std::vector<const CopyLaunch *> batch;
  for (const CopyLaunch &l : ls)
    if (ls.size() > 1 && batchable(l))
      batch.push_back(&l);
    else
      cuda_copy(l);
  if (batch.size() == 1)
    cuda_copy(*batch[0]);
  if (batch.size() < 2)
    return;
  set_device(ls[0].device, "kiln::cat");
  for (size_t at = 0; at < batch.size(); at += kMaxPieces) {
    CopyPieces p{};
    p.count = int(std::min<size_t>(kMaxPieces, batch.size() - at));
    bool narrow = true;
    int64_t blocks = 0, n = 0;
    dispatch_dtype(ls[0].src, [&]<class T>() {
      constexpr int V = vec_width<T, T>();
      for (int k = 0; k < p.count; ++k) {
        const CopyLaunch &l = *batch[at + size_t(k)];
        p.args[k] = l.args;
        p.calc[k] = l.calc;
        p.nv[k] = l.n / V;
        p.first_block[k] = blocks;
        blocks += grid_for(p.nv[k], kThreads);
        n += l.n;
        narrow = narrow && fits_32bit(l.calc, l.n, int64_t(kThreads) * V);
      }
      p.first_block[p.count] = blocks;
      const dim3 grid{unsigned(blocks)}, block{unsigned(kThreads)};
      if (narrow)
        copy_pieces_kernel<T, int32_t><<<grid, block, 0, stream_of(ls[0].device)>>>(p);
      else
        copy_pieces_kernel<T, int64_t><<<grid, block, 0, stream_of(ls[0].device)>>>(p);
      after_launch("cat", "pieces", dtype_of<T>(), n, grid, block, ls[0].device);
    });
  }
}

// --- fills ---

template <class T>
__global__ void __launch_bounds__(kThreads)
    fill_kernel(int64_t n, T *out, T value) {
  constexpr int V = int(16 / sizeof(T));
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nv = n / V;
  Vec<T, V> o;
#pragma unroll
  for (int j = 0; j < V; ++j)
    o.v[j] = value;
  for (int64_t v = tid; v < nv; v += stride)
    reinterpret_cast<Vec<T, V> *>(out)[v] = o;
  for (int64_t i = nv * V + tid; i < n; i += stride)
    out[i] = value;
}

void cuda_fill(void *out, DType dtype, double value, int64_t n, int device,
               bool counted) {
  set_device(device, "kiln::full");
  // Allocations are at least 512-byte aligned: vector stores are safe.
  dispatch_dtype(dtype, [&]<class T>() {
    constexpr int V = int(16 / sizeof(T));
    dim3 block(kThreads);
    dim3 grid(unsigned(grid_for((n + V - 1) / V, kThreads)));
    fill_kernel<T><<<grid, block, 0, stream_of(device)>>>(
        n, static_cast<T *>(out), convert<T>(value));
    after_launch("fill", "contiguous", dtype, n, grid, block, device, counted);
  });
}

} // namespace kiln::detail
