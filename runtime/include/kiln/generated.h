// Host-side helpers for the code the Kiln plugin generates: the layout
// tests its guards make, the launch shapes it picks, and the [outer, R,
// inner] row space of a fused reduction. The generated host file includes
// this header; test/unit/runtime_generated.cpp tests it. The device side is
// kiln/generated.cuh.
#pragma once

#include <kiln/kernel_abi.h>
#include <kiln/rt.h>
#include <kiln/tensor.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>

namespace kiln::gen {

// A tensor whose elements, in memory order, are the n elements of the
// output in order: contiguous and not broadcast.
inline bool dense(const Tensor &t, int64_t n) {
  return t.is_contiguous() && t.numel() == n;
}

// The tensor a kernel writes an in-place update's result into: `dst`,
// the tensor the caller copies it into, itself when the kernel can write
// it element by element (defined, on `dev`, of dtype `dt` and shape
// `shape`, contiguous: no element twice); else a new tensor, which the
// caller copies into `dst` as before.
inline Tensor output_into(const Tensor &dst, const Dims &shape, DType dt,
                          Device dev) {
  if (dst.defined() && dst.device() == dev && dst.dtype() == dt &&
      dst.sizes() == shape && dst.is_contiguous())
    return dst;
  return empty(shape, dt, dev);
}

// An in-place copy into an argument (the compiler's store: dst.copy_(src)),
// checked before a call's first launch: false where Tensor::copy_ raises
// (src does not broadcast to dst's sizes, or dst has two elements at one
// address), so the original body runs and raises there.
inline bool store_fits(const Layout &dst, const Dims &src) {
  return !rt::internal_overlap(dst.sizes, dst.strides) &&
         rt::broadcasts_to(src, dst.sizes);
}
// The tensor a kernel writes a store's source into: the destination
// itself (a view of the argument, written through its strides) where it
// has the source's shape, dtype and device, so the store's copy is of a
// tensor onto itself and does nothing; else a new tensor it copies.
inline Tensor store_target(const Tensor &dst, const Dims &shape, DType dt,
                           Device dev) {
  if (dst.sizes() == shape && dst.dtype() == dt && dst.device() == dev)
    return dst;
  return empty(shape, dt, dev);
}
// The store itself: `base` (the argument dst views) after the copy.
inline const Tensor &store(const Tensor &base, const Tensor &dst,
                           const Tensor &src) {
  Tensor(dst).copy_(src);
  return base;
}

// Layout ops (kiln/ops.def's KILN_VIEW), checked before a call's first
// launch: `out` is the layout op `kind` gives a tensor laid out as `in`;
// false where eager's method raises (the original body then runs, and
// raises there, with its message).
inline bool view_layout(ViewKind kind, const Layout &in,
                        std::initializer_list<int64_t> args, Layout &out) {
  try {
    out = kiln::view_layout(kind, in, {args.begin(), args.size()});
    return true;
  } catch (const Error &) {
    return false;
  }
}
// The number of elements of a tensor of these sizes: the `size` host
// scalar without dims (numel()).
inline int64_t numel_of(const Dims &sizes) {
  int64_t n = 1;
  for (int d = 0; d < sizes.rank(); ++d)
    n *= sizes[d];
  return n;
}
// A tensor's extent along d (negative counts from the end): the `size`
// host scalar; 0 where d is out of range (the op that reads it then fails
// its own check, and the original body raises).
inline int64_t dim_size(const Dims &sizes, int64_t d) {
  const int64_t r = sizes.rank();
  if (d < -r || d >= r)
    return 0;
  return sizes[int(d < 0 ? d + r : d)];
}
// A new tensor of `shape` laid out in the memory order of the first of
// `like` with the same rank and no broadcast dim (its dims sorted by
// stride, as Inductor's pointwise outputs follow their inputs' stride
// order); contiguous when none fits. A concatenation whose pieces kernels
// write takes its pieces' inputs' order: the rotated q of a head split
// ([B, H, T, D] over [B, T, H, D] memory) is then written in long runs.
inline Tensor empty_ordered(const Dims &shape, DType dt, Device dev,
                            std::initializer_list<Layout> like) {
  const int r = shape.rank();
  for (const Layout &l : like) {
    if (l.sizes.rank() != r)
      continue;
    bool fits = true;
    for (int d = 0; d < r; ++d)
      fits &= l.sizes[d] == 1 || l.strides[d] != 0;
    if (!fits)
      continue;
    // Dims by descending stride, ties (and size-1 dims, last) in order:
    // an insertion sort of at most kMaxRank dims.
    auto key = [&](int d) { return l.sizes[d] == 1 ? int64_t(0) : l.strides[d]; };
    int order[kMaxRank];
    for (int d = 0; d < r; ++d) {
      int k = d;
      for (; k > 0 && key(order[k - 1]) < key(d); --k)
        order[k] = order[k - 1];
      order[k] = d;
    }
    Dims physical = shape;
    int64_t inverse[kMaxRank];
    for (int k = 0; k < r; ++k) {
      physical[k] = shape[order[k]];
      inverse[order[k]] = k;
    }
    return empty(physical, dt, dev).permute(Dims(std::span<const int64_t>(inverse, size_t(r))));
  }
  return empty(shape, dt, dev);
}
// The layout of a value a kernel writes: contiguous.
inline Layout dense_layout(const Dims &sizes) {
  return {sizes, contiguous_strides(sizes), 0};
}
// The view itself, once its base is in memory: the method of that name.
inline Tensor view(ViewKind kind, const Tensor &t,
                   std::initializer_list<int64_t> args) {
  return t.apply_view(kind, {args.begin(), args.size()});
}
// `broadcast` (ops.def): the shape its tensors broadcast to, as its
// integer arguments (an empty span where they do not broadcast: the
// layout check then fails, and the original body runs and raises).
inline std::vector<int64_t>
broadcast_of(std::initializer_list<const Dims *> shapes) {
  Dims out;
  if (!rt::broadcast_shapes(shapes, out))
    return {};
  return {out.begin(), out.end()};
}
inline bool view_layout(ViewKind kind, const Layout &in,
                        const std::vector<int64_t> &args, Layout &out) {
  if (kind == ViewKind::Broadcast && args.empty() && in.sizes.rank() > 0)
    return false;
  try {
    out = kiln::view_layout(kind, in, {args.data(), args.size()});
    return true;
  } catch (const Error &) {
    return false;
  }
}
inline Tensor view(ViewKind kind, const Tensor &t,
                   const std::vector<int64_t> &args) {
  return t.apply_view(kind, {args.data(), args.size()});
}

// p is a multiple of `bytes` (a power of two).
inline bool aligned(const void *p, unsigned bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

// Every offset the strided kernel computes for n elements fits in 32 bits.
template <int N> bool fits_u32(const OffsetCalc<N> &c, int64_t n) {
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

// Whether the strided kernel's vector flavour (sv) fits: in the collapsed
// space of make_offset_calc, the innermost dim is a multiple of V long and
// every operand is contiguous along it (stride 1, its rows starting on a
// V-element boundary, its pointer aligned to V elements) or broadcast
// (stride 0). A thread then moves V elements with one offset computation
// and 16-byte accesses, where the element-wise flavours (s32/s64) divide
// per element. ptrs and bytes: the operands in OffsetCalc's order.
template <int N>
bool inner_vec(const OffsetCalc<N> &c, int V, const void *const (&ptrs)[N],
               const int (&bytes)[N]) {
  if (c.rank < 1 || c.sizes[c.rank - 1] % V != 0)
    return false;
  const int r = c.rank - 1;
  for (int i = 0; i < N; ++i) {
    const int64_t s = c.strides[r][i];
    if (s == 0)
      continue;
    if (s != 1 || !aligned(ptrs[i], unsigned(V * bytes[i])))
      return false;
    for (int d = 0; d < r; ++d)
      if (c.strides[d][i] % V != 0)
        return false;
  }
  return true;
}

// Blocks of 256 threads for `threads` work items, one item per thread (the
// kernels still loop, grid-stride, past the largest grid). With a grid of
// one wave looping over the rest, sin(x)+cos(y) on 2^26 floats reached 86%
// of the copy floor on an H200, with a thread per item 100%
// (bench/experiments/pointwise_variants.cu at commit 3ae925a44d).
inline unsigned blocks(int64_t threads, unsigned block = 256) {
  return unsigned(
      std::clamp<int64_t>((threads + block - 1) / block, 1, INT32_MAX));
}

// A measurement knob (-DKILN_POINTWISE_SPREAD=0 keeps every block at 256
// threads), not an interface.
#ifndef KILN_POINTWISE_SPREAD
#define KILN_POINTWISE_SPREAD 1
#endif
// A measurement knob (-DKILN_POINTWISE_SCALAR_SMALL=0 keeps small calls
// on the 16-byte kernels), not an interface.
#ifndef KILN_POINTWISE_SCALAR_SMALL
#define KILN_POINTWISE_SCALAR_SMALL 1
#endif
// Whether a pointwise call of `vthreads` 16-byte items is small enough to
// run an element per thread instead: under a warp per scheduler (four per
// multiprocessor), each warp's instructions run one after another with
// nothing to hide their latency, and a thread's index math over many
// operands and its V elements' arithmetic are the kernel's time. A LLaMA
// decode's q and k rotations (4096 16-byte items, 20 operands) took 5.1 us
// on an H200 so.
inline bool pointwise_small(int64_t vthreads, int64_t sms) {
  return KILN_POINTWISE_SCALAR_SMALL && vthreads < sms * 128;
}
// Threads per block for a pointwise kernel of `threads` work items on
// `sms` multiprocessors: 256, halved (to a warp at least) while the grid
// would leave multiprocessors idle. A small call is latency-bound: 4096
// threads in blocks of 256 (a LLaMA decode's rotary embedding: 16 tokens
// x 32 heads x 128 features, 8 per thread) ran on 16 of an H200's 132
// multiprocessors, each moving 16 times its share.
inline unsigned pointwise_block(int64_t threads, int64_t sms) {
  unsigned block = 256;
  if (KILN_POINTWISE_SPREAD)
    while (block > 32 && (threads + block - 1) / block < sms)
      block /= 2;
  return block;
}

// ---- fused reductions ----

// The reduced dims [d0, d1] of the full shape.
struct ReduceGeom {
  int d0 = 0, d1 = -1;
};

// [outer, R, inner] of reducing `full` over `dims` (empty: all), and the
// reduced shape with the dims kept as 1 (`keep`) and dropped (`drop`).
// False when a dim is out of range, repeated, or the dims are not adjacent.
inline bool row_space(const Dims &full, std::initializer_list<int64_t> dims,
                      RowSpace &sp, Dims &keep, Dims &drop, ReduceGeom &geo) {
  const int rank = full.rank();
  int d0 = 0, d1 = rank - 1;
  if (dims.size() != 0) {
    bool seen[kMaxRank] = {};
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
  sp = RowSpace{};
  keep = Dims{};
  drop = Dims{};
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
  sp.inner_div = U32Div(uint64_t(sp.inner));
  geo = {d0, d1};
  return true;
}

namespace detail {
// t's element stride, broadcast to `full`, along dims [lo, hi) of full
// walked as one index; false when they cannot be walked with one stride.
inline bool group_stride(const Tensor &t, const Dims &full, int lo, int hi,
                         int64_t &s) {
  const int off = full.rank() - t.dim();
  bool have = false;
  int64_t expect = 0;
  s = 0;
  for (int d = hi - 1; d >= lo; --d) {
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
  return true;
}
} // namespace detail

// t's element strides, broadcast to `full`, for each of [outer, R, inner];
// false when a group of dims cannot be walked with one stride.
inline bool row_strides(const Tensor &t, const Dims &full,
                        const ReduceGeom &geo, int64_t out[3]) {
  const int rank = full.rank();
  if (rank < t.dim())
    return false;
  const int lo[3] = {0, geo.d0, geo.d1 + 1}, hi[3] = {geo.d0, geo.d1 + 1, rank};
  for (int gi = 0; gi < 3; ++gi)
    if (!detail::group_stride(t, full, lo[gi], hi[gi], out[gi]))
      return false;
  return true;
}

// Operand op of a fused reduction: t, broadcast to `full`, in st.s[op],
// and its stride along each outer dim. False when R or inner cannot be
// walked with one stride; outer dims that cannot make st walk its outer
// dims one by one (RowStrides::nouter), for every operand.
template <int N>
bool row_operand(const Tensor &t, const Dims &full, const ReduceGeom &geo,
                 RowStrides<N> &st, int op) {
  const int rank = full.rank(), off = rank - t.dim();
  if (off < 0 ||
      !detail::group_stride(t, full, geo.d0, geo.d1 + 1, st.s[op][1]) ||
      !detail::group_stride(t, full, geo.d1 + 1, rank, st.s[op][2]))
    return false;
  int n = 0, from = -1;
  int64_t outer = 1;
  for (int d = 0; d < geo.d0; ++d)
    if (full[d] != 1) {
      const int td = d - off;
      st.outer_size[n] = full[d];
      st.outer_div[n] = U32Div(uint64_t(full[d]));
      const int64_t stride = td < 0 || t.sizes()[td] == 1 ? 0 : t.strides()[td];
      if (stride != 0 && from < 0)
        from = n;
      st.outer_stride[op][n++] = stride;
      outer *= full[d];
    }
  st.walk[op] = !detail::group_stride(t, full, 0, geo.d0, st.s[op][0]);
  if (st.walk[op]) {
    if (outer > int64_t(UINT32_MAX)) // kiln::row_bases divides in 32 bits
      return false;
    st.nouter = n;
    st.from[op] = from < 0 ? n : from;
  }
  return true;
}

// Operand op: a reduced output (the reduced dims kept as 1), contiguous:
// its rows are sp.inner apart, whatever the other operands walk.
template <int N>
void row_reduced(const RowSpace &sp, RowStrides<N> &st, int op) {
  st.s[op][0] = sp.inner;
  st.s[op][1] = 0;
  st.s[op][2] = 1;
  st.walk[op] = false;
}

// Operand op's rows start on multiples of vec elements.
template <int N> bool rows_aligned(const RowStrides<N> &st, int op, int vec) {
  if (!st.walk[op])
    return st.s[op][0] % vec == 0;
  for (int d = st.from[op]; d < st.nouter; ++d)
    if (st.outer_stride[op][d] % vec != 0)
      return false;
  return true;
}

// Split mode's passes that only write: a block of sp.tpr threads per tile
// of sp.tpr x V elements of each row (LowerReduceCuda.cpp's
// split_write_pass), at most 2^31 - 1 blocks (the kernel loops past that).
inline unsigned split_write_grid(const RowSpace &sp, int V) {
  const int64_t tile = int64_t(sp.tpr) * V;
  return blocks(sp.rows * ((sp.R + tile - 1) / tile), 1);
}

// The GPU reduction kernels: a thread group per row holding the row in
// registers (rows), a block re-reading the row per pass (loop), a row
// split over blocks with a launch per pass (split); neighbouring rows per
// block, a warp's loads across rows, re-read per pass (cols), held in
// registers (colsreg) or split over blocks as split mode does (colsplit).
enum class RedMode { rows, loop, split, cols, colsreg, colsplit };

// Whether column mode can read the rows of a reduction: every operand's
// neighbouring rows (along inner) are neighbours in memory, or the same
// element (a tensor broadcast along them). The rows are then far apart
// along R: a reduction over a dim that is not the innermost.
template <int N> bool columns_fit(const RowStrides<N> &st) {
  for (int op = 0; op < N; ++op)
    if (st.s[op][2] != 0 && st.s[op][2] != 1)
      return false;
  return true;
}

// A tuning knob for measurements (-DKILN_ROWS_SLOTS=1|2|4 on the compile
// command reaches the generated code), not an interface.
#ifndef KILN_ROWS_SLOTS
#define KILN_ROWS_SLOTS 4
#endif
// The same for rows read 16 bytes at a time (2 gives 16-bit rows the
// launch they had before 2026-12-01).
#ifndef KILN_ROWS_VEC_SLOTS
#define KILN_ROWS_VEC_SLOTS 4
#endif
// 0 turns plan_cuda's exact_slots off (16-bit rows of 5120 as before
// 2026-12-01's second change).
#ifndef KILN_ROWS_EXACT
#define KILN_ROWS_EXACT 1
#endif
// The block of the element-by-element rows kernel (rowsany) when a group
// is a warp or less: 128 threads, where the 16-byte kernel's blocks are
// 256. On an H200 (kernel time, ms, 256 -> 128 threads; bench/results/
// 2026-12-02-h200-odd-rows.md, call 5), with the instances of a fixed
// thread count: softmax over 151296x197 f32 0.0683 -> 0.0671, bf16 0.0485
// -> 0.0471, RMS norm bf16 0.0490 -> 0.0466, softmax over 100000x301 f32
// 0.0724 -> 0.0679, over 52428x577 bf16 0.0730 -> 0.0600, over 393216x77
// f32 0.0782 -> 0.0749; and with tpr at run time (call 2) softmax over
// 151296x197 f32 0.0981 -> 0.0932, RMS norm bf16 0.0928 -> 0.0796.
inline constexpr unsigned kRowsAnyBlock = 128;

// Slots per thread for many short rows of `slots` 16-byte slots of V
// elements: four for f32 rows of 16 slots or more (64-128 columns) that
// need no walk of outer dims, else two. Measured on an H200 (kernel time,
// ms, two slots -> four; bench/results/2026-11-29-h200-rows.md, run 3):
// layer norm 524288x64 f32 0.0729 -> 0.0679, 262144x128 0.0731 -> 0.0684,
// softmax 0.0685 -> 0.0674 at both; but softmax at 16 f32 columns 0.0687
// -> 0.0849, the bias + head split + softmax (rows of 128 through views)
// 0.0822 -> 0.0866, RMS norm of 64 bf16 columns 0.0360 -> 0.0428.
// -DKILN_SHORT_ROW_SLOTS=1|2|4 forces one count for every row (a
// measurement knob; bench/experiments/short_rows.cpp).
inline int64_t short_row_slots(int V, int64_t slots, bool walks_outer) {
#ifdef KILN_SHORT_ROW_SLOTS
  (void)V, (void)slots, (void)walks_outer;
  return KILN_SHORT_ROW_SLOTS;
#else
  return V == 4 && slots >= 16 && !walks_outer ? 4 : 2;
#endif
}

// How to run a reduction kernel on a GPU of `sms` multiprocessors, V
// elements per 16-byte slot, whose rows kernels keep up to
// `slots_per_thread` slots per thread: a thread group per row with the row
// in registers when it fits (a warp for short rows, a block for long ones),
// a block re-reading the row per pass when it does not, and a row split
// over blocks when there are too few rows to fill the GPU; rows that are
// neighbours in memory (`columns`: columns_fit, and at least max(8, 2V) of
// them along inner), neighbours in a block (column mode). A warp holding a
// row 16 bytes at a time (sp.vec) may keep up to `warp_slots` slots a
// thread (0: slots_per_thread; f32's rows kernel has an 8-slot instance).
// A row read 16 bytes at a time that fills exactly `exact_slots` slots of
// each of a power of two of threads (32 to 256) takes that many, where the
// kernel has a guard-free instance of that count (0: none).
// Sets sp.tpr, sp.vpt, sp.splits, sp.cols and the launch shape.
inline RedMode plan_cuda(RowSpace &sp, int V, int slots_per_thread,
                         int64_t sms, unsigned &grid, unsigned &block,
                         bool columns = false, bool walks_outer = false,
                         int warp_slots = 0, int exact_slots = 0) {
  const int64_t slots = (sp.R + V - 1) / V;
  sp.rpg = 1; // one row a group at a time, unless many short rows below
  sp.cols = 0;
  // Column mode: a block of `cols` neighbouring rows, at least 32 bytes
  // of each element (a sector), at most 32 rows, as many as leave two
  // blocks per multiprocessor; tpr threads per row, a power of two, about
  // one for every 8 elements of the row, at most 512 / cols threads and
  // 256 / cols warps' values in the block's reductions (kiln_smem). Blocks
  // for at most half the multiprocessors, and rows of 8 tiles or more:
  // each block's rows split over sp.splits blocks (colsplit), about four
  // blocks per multiprocessor in all. On an H200 (132 multiprocessors;
  // bench/results/2026-11-28-h200-cols.md, run 3), sum over dim 0 of
  // 65536x64 f32 (8 blocks) 0.0327 -> 0.0130 ms split, softmax over dim 0
  // of 4096x1024 bf16 (64 blocks) 0.0343 -> 0.0320; but log_softmax over
  // dim 0 of 4096x1024 f32 (128 blocks, a launch per pass and a combine
  // after each reduction) 0.0244 -> 0.043 and var 0.0118 -> 0.028.
  const int min_cols = std::max(8, 2 * V);
  if (columns && sp.inner >= min_cols) {
    int cols = 32;
    while (cols > min_cols && (sp.rows + cols - 1) / cols < 2 * sms)
      cols /= 2;
    int64_t tpr = 1;
    while (tpr * 8 < sp.R && tpr * cols < 512)
      tpr *= 2;
    while (tpr * cols < 32)
      tpr *= 2;
    if (cols == 32)
      tpr = std::min<int64_t>(tpr, 8); // 256 threads: 8 warps x 32 rows
    sp.cols = cols;
    sp.tpr = int(tpr);
    block = unsigned(tpr * cols);
    const int64_t blocks_needed = (sp.rows + cols - 1) / cols;
    grid = unsigned(std::max<int64_t>(1, std::min(blocks_needed, sms * 32)));
    const int64_t tiles = (sp.R + tpr * V - 1) / (tpr * V);
    if (2 * blocks_needed <= sms && tiles >= 8) {
      const int64_t want = (4 * sms + blocks_needed - 1) / blocks_needed;
      sp.splits = int(std::min(want, tiles / 4));
      grid = unsigned(blocks_needed * sp.splits);
      return RedMode::colsplit;
    }
    // Rows that fit slots_per_thread slots of V elements per thread: held
    // in registers, read once whatever the passes.
    const int64_t vpt = (sp.R + tpr * V - 1) / (tpr * V);
    if (vpt <= slots_per_thread) {
      sp.vpt = int(vpt);
      return RedMode::colsreg;
    }
    return RedMode::cols;
  }
  if (sp.rows < 2 * sms && sp.R >= 16384) {
    // About 32 blocks of 256 threads per multiprocessor in all (a grid of
    // several waves streams memory better than one), tiles of 256 slots.
    sp.tpr = 256;
    block = 256;
    // (4, 8 or 16 blocks per multiprocessor instead: where(sum) over 2^26
    // f32 0.1981 -> 0.2028, 0.2022, 0.1997 ms on an H200;
    // bench/results/2026-11-30-h200-item2b.md.)
    const int64_t want = (32 * sms + sp.rows - 1) / sp.rows;
    const int64_t most = (slots + 255) / 256;
    sp.splits = int(std::max<int64_t>(1, std::min(want, most)));
    grid = unsigned(sp.rows * sp.splits);
    return RedMode::split;
  }
  // Rows that fit the rows kernel's registers (512 threads of up to
  // slots_per_thread slots): read 16 bytes at a time (sp.vec), else
  // element by element (its `rowsany` twin).
  // 4096x8192 f32 on an H100 (2048 slots a row: 512 x 4 here, the loop
  // kernel before): softmax 0.137 -> 0.095 ms, layer norm 0.123 -> 0.095
  // (bench/results/2026-11-27-h100-loop-tiles.md).
  if (slots <= 512 * int64_t(slots_per_thread)) {
    // Many rows of at most 32 slots (128 f32, 256 bf16 columns): a group of
    // half as many threads as the row has slots (a power of two), two slots
    // each (four for f32 rows of 64-128 columns: short_row_slots), so a
    // warp holds two rows or more and each
    // row's index math, reductions and division are shared by fewer
    // threads. With a slot per thread (a group of as many threads as slots,
    // holding kRowsPerGroup rows at once) the rows were issue-bound on an
    // H200: softmax of 262144x128 f32 0.0770 ms -> 0.0686 with two slots,
    // layer norm 0.0856 -> 0.0732, RMS norm of 262144x128 bf16 0.0537 ->
    // 0.0364, 16 columns 0.0769 -> 0.0687, the bias + head split + softmax
    // (rows of 128 through views) 0.1075 -> 0.0822; four slots a thread was
    // better for f32 layer norm (0.0684) and worse at 16 columns (0.0850)
    // and for bf16 RMS norm of 64 columns (0.0428 against 0.0361)
    // (bench/experiments/short_rows.cpp; bench/results/2026-11-29-h200-rows.md).
    // A group taking one row after another with a slot per thread had one
    // row's loads in flight per thread: at 16 columns 5-11x torch.compile's
    // time (bench/results/2026-11-27-h100-row-sweep.md).
    if (sp.rows >= 2 * sms && slots <= 32) {
      int64_t t = 1;
      while (t < slots)
        t *= 2;
      const int64_t per = std::min<int64_t>(
          {short_row_slots(V, slots, walks_outer), int64_t(slots_per_thread), t});
      sp.tpr = int(t / per);
      sp.vpt = int(per);
      sp.rpg = per == 1 ? kRowsPerGroup : 1;
      block = sp.vec ? 256 : kRowsAnyBlock;
      const int64_t per_block = (block / sp.tpr) * sp.rpg;
      grid = unsigned(std::max<int64_t>(
          1, std::min((sp.rows + per_block - 1) / per_block, sms * 64)));
      return RedMode::rows;
    }
    // Threads per row: enough for KILN_ROWS_SLOTS slots each (more slots
    // per thread: more bytes in flight per thread, more registers), at
    // least a warp, at most 512. Few rows (a small call) are latency-bound:
    // spread each over more threads. Element by element (rowsany), 16-bit
    // rows keep at most 16 elements a thread, as before; 16 bytes at a
    // time they take 4 slots (32 elements) too: on an H200, 2^26 bf16
    // elements, 2 slots -> 4 (ms, kernel time; bench/experiments/
    // bf16_rows_slots.cu, bench/results/2026-12-01-h200-gemm-prologue.md):
    // softmax over 4096 columns 0.0809 -> 0.0673, 8192 0.1025 -> 0.0679,
    // 2048 0.0744 -> 0.0664; layer norm over 4096 0.0881 -> 0.0702;
    // layer norm -> tanh-GELU 0.1297 -> 0.1091; RMS norm level (0.0686,
    // 0.0687; 0.0685 -> 0.0694 over 8192).
    const int64_t want =
        sp.rows < 2 * sms
            ? 1
            : std::min<int64_t>({KILN_ROWS_SLOTS, slots_per_thread,
                                 sp.vec ? KILN_ROWS_VEC_SLOTS : std::max(2, 16 / V)});
    // With many rows, a row that fits one warp's registers gets a warp:
    // its reductions are shuffles, where more threads per row take two
    // barriers per reduction. bf16 rows of 1024 (4 slots of 8 per thread
    // instead of 2 slots and 64 threads), H100: softmax 92 -> 99 % of the
    // copy floor, masked softmax 91 -> 98 %, RMS norm 95 -> 99 %. f32 rows
    // of 513-1024 columns: 8 slots (warp_slots; LowerReduce.cpp's
    // rows_slots_vector says what it measured).
    const int64_t warp_held =
        sp.vec ? std::max(slots_per_thread, warp_slots) : slots_per_thread;
    const bool warp = sp.rows >= 2 * sms && slots <= 32 * warp_held;
    int64_t t = 32;
    while (!warp && t * want < slots && t < 512)
      t *= 2;
    // A row of exact_slots slots per thread at half as many threads (or
    // fewer) instead of a partly filled power of two: 16-bit rows of 5120
    // (LLaMA-13B's hidden size) are 128 threads of 5 slots, not 256
    // threads of 2.5 in the 4-slot instance behind a guard per slot
    // (LowerReduce.cpp's rows_exact_slots says what it measured).
    if (KILN_ROWS_EXACT && !warp && sp.vec && sp.rows >= 2 * sms && exact_slots > want &&
        slots % exact_slots == 0) {
      const int64_t e = slots / exact_slots;
      if (e >= 32 && e < t && (e & (e - 1)) == 0)
        t = e;
    }
    sp.tpr = int(t);
    sp.vpt = int((slots + t - 1) / t);
    block = t == 32 ? sp.vec ? 256 : kRowsAnyBlock : unsigned(t);
    // A block per group of rows, however many: a grid capped at 64 blocks
    // per multiprocessor, blocks taking rows one after another, was slower
    // for rows of a block each (16384x4096 f32 on an H200: layer norm
    // 0.1355 -> 0.1330 ms uncapped, softmax 0.1332 -> 0.1310; a cap of 16:
    // 0.1412; bench/results/2026-11-30-h200-item2b.md).
    const int64_t groups = block / t;
    grid = unsigned(std::clamp<int64_t>((sp.rows + groups - 1) / groups, 1, INT32_MAX));
    return RedMode::rows;
  }
  // The loop kernels: `loop` reads 16 bytes at a time with offsets within
  // a row in 32 bits (a tile past the row's end included), `loopany` any
  // layout (the host picks by sp.vec).
  if (sp.R >= (int64_t(1) << 30))
    sp.vec = 0;
  sp.tpr = kLoopThreads;
  block = kLoopThreads;
  grid = unsigned(std::max<int64_t>(1, std::min(sp.rows, sms * 8)));
  return RedMode::loop;
}

// On the CPU: rows in parallel (true), or each row split into chunks when
// there are few long rows (false; sp.splits and sp.chunk set).
inline bool plan_cpu(RowSpace &sp) {
  if (sp.rows >= 64 || sp.R < 65536)
    return true;
  sp.splits = int(std::min<int64_t>(256, (sp.R + 65535) / 65536));
  sp.chunk = (sp.R + sp.splits - 1) / sp.splits;
  return false;
}

} // namespace kiln::gen
