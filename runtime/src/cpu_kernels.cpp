// Eager CPU kernels: converting copies, fills, and the dispatch of the
// element-wise ops (their loops are instantiated in pointwise_cpu_*.cpp).
#include "cpu_kernels.h"
#include "detail.h"

#include <cstring>

namespace kiln::detail {

// --- element-wise ops ---

static const CpuPwTable &cpu_pw_table() {
  static const CpuPwTable *table = [] {
    auto *t = new CpuPwTable;
    fill_cpu_pointwise<0>(*t);
    fill_cpu_pointwise<1>(*t);
    fill_cpu_pointwise<2>(*t);
    fill_cpu_pointwise<3>(*t);
    return t;
  }();
  return *table;
}
static_assert(kPwGroups == 4, "cpu_pw_table fills four groups");

void cpu_pointwise(const PwLaunch &l) {
  const CpuPwEntry &e = cpu_pw_table().e[int(l.op)][int(l.in)][int(l.common)];
  RowFn fn = l.contiguous ? e.contiguous[l.args.scalar_mask & 7u] : e.strided;
  if (!fn)
    fail("kiln::%s: no CPU kernel for %s operands computed as %s", op_name(l.op),
         dtype_name(l.in), dtype_name(l.common));
  rt::cpu_launch(op_name(l.op), l.n, kCpuGrain, fn,
                 const_cast<PwLaunch *>(&l));
}

// --- converting copies ---

template <class S, class D> void copy_contiguous(int64_t b, int64_t e, void *ctx) {
  const CopyLaunch &l = *static_cast<const CopyLaunch *>(ctx);
  const S *in = static_cast<const S *>(l.args.in);
  D *out = static_cast<D *>(l.args.out);
  if constexpr (std::is_same_v<S, D>) {
    std::memcpy(out + b, in + b, size_t(e - b) * sizeof(S));
  } else {
#pragma omp simd
    for (int64_t i = b; i < e; ++i)
      out[i] = convert<D>(in[i]);
  }
}

template <class S, class D> void copy_strided(int64_t b, int64_t e, void *ctx) {
  const CopyLaunch &l = *static_cast<const CopyLaunch *>(ctx);
  const S *in = static_cast<const S *>(l.args.in);
  D *out = static_cast<D *>(l.args.out);
  for_each_row<2>(l.calc, b, e,
                  [&](const int64_t(&off)[2], const int64_t(&st)[2],
                      int64_t count) {
                    for (int64_t j = 0; j < count; ++j)
                      out[off[0] + j * st[0]] = convert<D>(in[off[1] + j * st[1]]);
                  });
}

namespace {
struct CopyTable {
  RowFn fn[kNumDTypes][kNumDTypes][2] = {}; // [src][dst][contiguous]
  CopyTable() {
    for_each_ctype([&]<class S>() {
      for_each_ctype([&]<class D>() {
        auto &f = fn[int(dtype_of<S>())][int(dtype_of<D>())];
        f[0] = &copy_strided<S, D>;
        f[1] = &copy_contiguous<S, D>;
      });
    });
  }
};
} // namespace

void cpu_copy(const CopyLaunch &l) {
  static const CopyTable table;
  rt::cpu_launch(l.src == l.dst ? "copy" : "cast", l.n, kCpuGrain,
                 table.fn[int(l.src)][int(l.dst)][l.contiguous],
                 const_cast<CopyLaunch *>(&l));
}

// --- fills ---

namespace {
struct FillCtx {
  void *out;
  double value;
};
} // namespace

template <class T> void fill_rows(int64_t b, int64_t e, void *ctx) {
  const FillCtx &c = *static_cast<const FillCtx *>(ctx);
  T v = convert<T>(c.value);
  T *out = static_cast<T *>(c.out);
  std::fill(out + b, out + e, v);
}

void cpu_fill(void *out, DType dtype, double value, int64_t n, bool counted) {
  FillCtx ctx{out, value};
  RowFn fn = nullptr;
  dispatch_dtype(dtype, [&]<class T>() { fn = &fill_rows<T>; });
  if (counted)
    rt::cpu_launch("fill", n, kCpuGrain, fn, &ctx);
  else
    fn(0, n, &ctx);
}

} // namespace kiln::detail
