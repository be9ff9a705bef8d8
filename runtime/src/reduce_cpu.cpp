// Eager CPU reductions and row-wise ops over [outer, R, inner].
//
// Work is split into units: a unit is one line (inner == 1) or a tile of up
// to kTile adjacent columns of one outer slab (inner > 1, so the loop over
// the tile's columns is contiguous and vectorises). A unit's line is summed
// pairwise: blocks of kRowBase elements over kLanes accumulators, or of
// kColBase rows, combined as a balanced tree, so float rounding error grows
// with log(R), not R. Lines longer than one chunk are also split into
// chunks reduced in parallel and combined as a tree in chunk order. The
// split depends only on the shape: results do not depend on thread count.
#include "cpu_kernels.h"
#include "reduce_programs.h"

#include <omp.h>

#include <algorithm>
#include <vector>

namespace kiln::detail {

namespace {

constexpr int kLanes = 8;
constexpr int64_t kRowBase = 512;  // elements of a line summed by lanes
constexpr int64_t kColBase = 16;   // rows of a column tile summed in order
constexpr int kTile = 64;          // columns of a column unit
constexpr int64_t kChunk = 1 << 16; // elements of a unit per parallel item

template <class P> class CpuReduce {
  using T = typename P::T;
  using A = typename P::A;
  using Acc1 = typename P::Acc1;
  using Acc2 = typename P::Acc2;

public:
  CpuReduce(const ReduceLaunch &l)
      : p_(make_prog<P>(l)), in_(static_cast<const T *>(l.in)), out_(l.out),
        outer_(l.outer), R_(l.R), inner_(l.inner),
        tiles_(l.inner == 1 ? 1 : (l.inner + kTile - 1) / kTile) {}

  void run() {
    int64_t units = outer_ * tiles_;
    int64_t width = std::min<int64_t>(inner_, kTile);
    int64_t len = inner_ == 1 ? kChunk : std::max(kColBase, kChunk / width);
    int64_t chunks = (R_ + len - 1) / len;
    bool parallel = outer_ * R_ * inner_ >= 2 * kCpuGrain;
    if (chunks <= 1) {
#pragma omp parallel for schedule(static) if (parallel && units > 1)
      for (int64_t u = 0; u < units; ++u)
        run_unit(u);
      return;
    }
    run_chunked(units, chunks, len);
  }

private:
  int width(int64_t u) const {
    return inner_ == 1 ? 1
                       : int(std::min<int64_t>(kTile, inner_ - (u % tiles_) * kTile));
  }
  // Offset of unit u's first element (r = 0, first column) in the input
  // and in a row-wise output; o * inner + c0 is its reduction output.
  int64_t offset(int64_t u) const {
    return (u / tiles_) * R_ * inner_ + (u % tiles_) * kTile;
  }
  int64_t out_index(int64_t u) const {
    return (u / tiles_) * inner_ + (u % tiles_) * kTile;
  }

  template <int Pass>
  typename PassOf<P, Pass>::Acc line_pass(const T *x, int64_t r0, int64_t r1,
                                          A p1) const {
    using S = PassOf<P, Pass>;
    if (r1 - r0 > kRowBase) {
      int64_t mid = r0 + (r1 - r0) / (2 * kLanes) * kLanes;
      return S::comb(line_pass<Pass>(x, r0, mid, p1),
                     line_pass<Pass>(x, mid, r1, p1));
    }
    typename S::Acc lane[kLanes];
    for (int l = 0; l < kLanes; ++l)
      lane[l] = S::init();
    int64_t r = r0;
    for (; r + kLanes <= r1; r += kLanes)
      for (int l = 0; l < kLanes; ++l)
        lane[l] = S::comb(lane[l], S::elem(p_, P::load(x[r + l]), r + l, p1));
    for (int l = 0; r < r1; ++r, ++l)
      lane[l] = S::comb(lane[l], S::elem(p_, P::load(x[r]), r, p1));
    for (int w = kLanes / 2; w > 0; w /= 2)
      for (int l = 0; l < w; ++l)
        lane[l] = S::comb(lane[l], lane[l + w]);
    return lane[0];
  }

  // acc[j] (initialised) combines rows [r0, r1) of the tile's column j.
  template <int Pass>
  void tile_pass(const T *x, int w, int64_t r0, int64_t r1, const A *p1,
                 typename PassOf<P, Pass>::Acc *acc) const {
    using S = PassOf<P, Pass>;
    if (r1 - r0 > kColBase) {
      int64_t mid = r0 + (r1 - r0) / 2;
      tile_pass<Pass>(x, w, r0, mid, p1, acc);
      typename S::Acc tmp[kTile];
      for (int j = 0; j < w; ++j)
        tmp[j] = S::init();
      tile_pass<Pass>(x, w, mid, r1, p1, tmp);
      for (int j = 0; j < w; ++j)
        acc[j] = S::comb(acc[j], tmp[j]);
      return;
    }
    for (int64_t r = r0; r < r1; ++r) {
      const T *row = x + r * inner_;
#pragma omp simd
      for (int j = 0; j < w; ++j)
        acc[j] = S::comb(acc[j], S::elem(p_, P::load(row[j]), r, p1[j]));
    }
  }

  // acc[0..w) = the reduction of rows [r0, r1) of unit u.
  template <int Pass>
  void accumulate(int64_t u, int64_t r0, int64_t r1, const A *p1,
                  typename PassOf<P, Pass>::Acc *acc) const {
    const T *x = in_ + offset(u);
    if (inner_ == 1) {
      acc[0] = line_pass<Pass>(x, r0, r1, p1[0]);
      return;
    }
    int w = width(u);
    for (int j = 0; j < w; ++j)
      acc[j] = PassOf<P, Pass>::init();
    tile_pass<Pass>(x, w, r0, r1, p1, acc);
  }

  void write(int64_t u, int64_t r0, int64_t r1, const A *p1, const A *p2) const {
    const T *x = in_ + offset(u);
    T *o = static_cast<T *>(out_) + offset(u);
    if (inner_ == 1) {
      for (int64_t r = r0; r < r1; ++r)
        o[r] = p_.write(P::load(x[r]), r, p1[0], p2[0]);
      return;
    }
    int w = width(u);
    for (int64_t r = r0; r < r1; ++r)
      for (int j = 0; j < w; ++j)
        o[r * inner_ + j] = p_.write(P::load(x[r * inner_ + j]), r, p1[j], p2[j]);
  }

  void store(int64_t u, int j, typename P::Out v) const {
    static_cast<typename P::Out *>(out_)[out_index(u) + j] = v;
  }

  // One unit, every pass, in this thread.
  void run_unit(int64_t u) const {
    int w = width(u);
    A p1[kTile], p2[kTile];
    for (int j = 0; j < w; ++j)
      p1[j] = p2[j] = A(0);
    Acc1 a1[kTile];
    accumulate<1>(u, 0, R_, p1, a1);
    if constexpr (P::kPasses == 1 && !P::kRowwise) {
      for (int j = 0; j < w; ++j)
        store(u, j, p_.done(a1[j]));
    } else {
      for (int j = 0; j < w; ++j)
        p1[j] = p_.mid(a1[j]);
      if constexpr (P::kPasses == 2) {
        Acc2 a2[kTile];
        accumulate<2>(u, 0, R_, p1, a2);
        for (int j = 0; j < w; ++j) {
          if constexpr (P::kRowwise)
            p2[j] = p_.mid2(p1[j], a2[j]);
          else
            store(u, j, p_.done(p1[j], a2[j]));
        }
      }
      if constexpr (P::kRowwise)
        write(u, 0, R_, p1, p2);
    }
  }

  // Partials of `chunks` chunks, combined as a balanced tree in order.
  template <class Acc, class Comb>
  static Acc combine_chunks(const Acc *part, int64_t chunks, Comb comb) {
    if (chunks == 1)
      return part[0];
    int64_t h = chunks / 2;
    return comb(combine_chunks(part, h, comb),
                combine_chunks(part + h * kTile, chunks - h, comb));
  }

  // Pass `Pass` over every (unit, chunk); returns the combined accumulators
  // [units][kTile].
  template <int Pass>
  std::vector<typename PassOf<P, Pass>::Acc>
  chunked_pass(int64_t units, int64_t chunks, int64_t len,
               const std::vector<A> &p1) const {
    using S = PassOf<P, Pass>;
    std::vector<typename S::Acc> part(size_t(units * chunks * kTile));
#pragma omp parallel for schedule(static)
    for (int64_t item = 0; item < units * chunks; ++item) {
      int64_t u = item / chunks, s = item % chunks;
      accumulate<Pass>(u, s * len, std::min(R_, (s + 1) * len),
                       &p1[size_t(u * kTile)], &part[size_t(item * kTile)]);
    }
    std::vector<typename S::Acc> acc(size_t(units * kTile));
#pragma omp parallel for schedule(static) if (units > 1)
    for (int64_t u = 0; u < units; ++u)
      for (int j = 0, w = width(u); j < w; ++j)
        acc[size_t(u * kTile + j)] = combine_chunks(
            &part[size_t(u * chunks * kTile + j)], chunks,
            [](auto a, auto b) { return S::comb(a, b); });
    return acc;
  }

  void run_chunked(int64_t units, int64_t chunks, int64_t len) const {
    std::vector<A> p1(size_t(units * kTile), A(0)), p2 = p1;
    auto a1 = chunked_pass<1>(units, chunks, len, p1);
    if constexpr (P::kPasses == 1 && !P::kRowwise) {
      for (int64_t u = 0; u < units; ++u)
        for (int j = 0, w = width(u); j < w; ++j)
          store(u, j, p_.done(a1[size_t(u * kTile + j)]));
    } else {
      for (size_t i = 0; i < p1.size(); ++i)
        p1[i] = p_.mid(a1[i]);
      if constexpr (P::kPasses == 2) {
        auto a2 = chunked_pass<2>(units, chunks, len, p1);
        for (int64_t u = 0; u < units; ++u)
          for (int j = 0, w = width(u); j < w; ++j) {
            size_t i = size_t(u * kTile + j);
            if constexpr (P::kRowwise)
              p2[i] = p_.mid2(p1[i], a2[i]);
            else
              store(u, j, p_.done(p1[i], a2[i]));
          }
      }
      if constexpr (P::kRowwise) {
#pragma omp parallel for schedule(static)
        for (int64_t item = 0; item < units * chunks; ++item) {
          int64_t u = item / chunks, s = item % chunks;
          write(u, s * len, std::min(R_, (s + 1) * len), &p1[size_t(u * kTile)],
                &p2[size_t(u * kTile)]);
        }
      }
    }
  }

  P p_;
  const T *in_;
  void *out_;
  int64_t outer_, R_, inner_, tiles_;
};

} // namespace

void cpu_reduce(const ReduceLaunch &l) {
  rt::bump(rt::kLaunches);
  if (rt::log_enabled(rt::kLogKernels))
    rt::log(rt::kLogKernels, "cpu %s %s [outer=%lld, reduce=%lld, inner=%lld]",
            reduce_kind_name(l.kind), dtype_name(l.dtype), (long long)l.outer,
            (long long)l.R, (long long)l.inner);
  dispatch_reduce<-1>(l, [&]<class P>() { CpuReduce<P>(l).run(); });
}

} // namespace kiln::detail
