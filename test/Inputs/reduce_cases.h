// Fused reductions, compiled vs eager vs a float64 reference, on one
// device: shapes that take every launch mode (a warp per row, a block per
// row, rows too long for registers, few long rows split over blocks, column
// reductions, whole-tensor reductions), several dtypes, keepdim both ways.
#pragma once

#include "exec_compare.h"

using kiln::Tensor;

[[kiln::compile]] Tensor softmax_last(const Tensor &x) { return kiln::softmax(x, -1); }
[[kiln::compile]] Tensor log_softmax_0(const Tensor &x) { return kiln::log_softmax(x, 0); }
[[kiln::compile]] Tensor softmax_by_hand(const Tensor &x) {
  Tensor m = kiln::amax(x, -1, true);
  Tensor e = kiln::exp(x - m);
  return e / kiln::sum(e, -1, true);
}
[[kiln::compile]] Tensor layer_norm3(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
// Two rows held for the moments (x and r), r read again by the writing
// pass as well: the re-reading layer-norm kernel's other inputs.
[[kiln::compile]] Tensor add_layer_norm(const Tensor &x, const Tensor &r, const Tensor &w,
                                        const Tensor &b) {
  return kiln::layer_norm(x + r, w, b, 1e-5) * r;
}
[[kiln::compile]] Tensor rms_norm2(const Tensor &x, const Tensor &w, double eps) {
  return kiln::rms_norm(x, w, eps);
}
[[kiln::compile]] Tensor where_sum(const Tensor &x, double t) {
  return kiln::where(kiln::sum(x) > t, x * 2, x);
}
[[kiln::compile]] Tensor mean_keep(const Tensor &x) { return kiln::mean(x, 1, true); }
[[kiln::compile]] Tensor var_drop(const Tensor &x) { return kiln::var(x, -1, false, 1); }
[[kiln::compile]] Tensor var_all(const Tensor &x) { return kiln::var(x); }
// var beside another reduction of x in the same pass (the mean's sum): the
// batched moments share their pass with a plain sum.
[[kiln::compile]] Tensor var_mean_all(const Tensor &x) {
  return kiln::var(x) + kiln::mean(x);
}
[[kiln::compile]] Tensor lse_0(const Tensor &x) { return kiln::logsumexp(x, 0); }
[[kiln::compile]] Tensor argmax_last(const Tensor &x) { return kiln::argmax(x, -1); }
[[kiln::compile]] Tensor amin_all(const Tensor &x) { return kiln::amin(x); }
// Over the middle dim of [outer, R, inner]: on a GPU column mode, a block
// of neighbouring rows (inner at least 8 f32 or 16 bf16), beside a weight
// along inner (broadcast along R) and a bias along R (broadcast along
// inner); var as layer norm's moments; argmax's indices.
[[kiln::compile]] Tensor softmax_mid(const Tensor &x, const Tensor &w) {
  return kiln::softmax(x * w, 1);
}
[[kiln::compile]] Tensor lse_mid_bias(const Tensor &x, const Tensor &b) {
  return kiln::logsumexp(x + b, 1);
}
[[kiln::compile]] Tensor var_mid(const Tensor &x) { return kiln::var(x, 1, true, 1); }
[[kiln::compile]] Tensor argmax_mid(const Tensor &x) { return kiln::argmax(x, 1); }
// Attention's masked softmax: a bool mask held beside the scores (the
// rows kernel keeps its bytes packed: kiln::gen::Held). -1e4 fits every
// dtype: -1e9 is -inf in f16, and a row masked out whole is then NaN in
// eager f16 where the float64 reference is uniform.
[[kiln::compile]] Tensor masked_softmax(const Tensor &x, const Tensor &keep) {
  return kiln::softmax(kiln::where(keep, x * 0.125, -1e4), -1);
}
[[kiln::compile]] Tensor sum_sq_epilogue(const Tensor &x) {
  // A pointwise prologue and epilogue around a reduction.
  return kiln::sqrt(kiln::sum(x * x, -1)) + 1.0;
}

namespace reduce_cases {

// The float64 reference: the eager body on f64 copies of the inputs.
template <class F, class... A>
void check_ref(const char *name, kiln::DType dt, F f, const A &...args) {
  kiln::set_compiled_enabled(false);
  Tensor ref = f(args.to(kiln::f64)...).to(kiln::Device::cpu());
  kiln::set_compiled_enabled(true);
  exec_compare::check(name, dt, [&] { return f(args...); }, true, ref);
  if (kiln::force_guard_failure()) // no fused code runs: nothing to hold to
    return;                        // float64 (eager f16 sums overflow)
  Tensor got = f(args...);
  double tol = dt == kiln::f64 ? 1e-12 : dt == kiln::f32 ? 1e-4 : 5e-2;
  double d = kiln_compare::difference(got.to(kiln::Device::cpu()).to(kiln::f64), ref);
  if (!(d <= tol)) {
    ++exec_compare::g_mismatches;
    std::printf("MISMATCH %s [%s] vs float64: max diff %g\n", name,
                kiln::dtype_name(dt), d);
  }
}

inline Tensor input(kiln::Dims shape, kiln::DType dt, kiln::Device dev) {
  return kiln::randn(shape, kiln::f32, dev).to(dt);
}

inline void run_all(kiln::Device dev) {
  struct Shape { int64_t rows, cols; };
  // On a GPU: many rows of 8192 f32 are 512 threads of 4 slots a row; of
  // 20000 (and of 8192 f64), the loop kernel's tiles, the last one partial.
  // Many short rows (at least 2 per multiprocessor, at most 32 16-byte
  // slots) are groups of fewer than 32 threads holding several rows at
  // once: 8 and 16 columns (one or two threads a row), 24 (a group with an
  // idle thread), 64 and 128; row counts that leave the last groups of a
  // warp without a row. Rows that cannot be read 16 bytes at a time (odd
  // lengths) take the element-by-element twins of the same kernels: a warp
  // per row (197), groups of 16 threads holding several rows (33), a block
  // per row (4095), the loop kernel (20001), split rows (3 x 20001: the
  // writing pass a block per tile, element by element), rows of 768 a warp
  // each (f32: 6 of 8 slots, the FULL twin of 6). f32 layer norm over rows
  // of 4096, few (3) or many (300), runs the kernel re-reading the row
  // (512 threads a row; codegen/rows-reread.kir). 16-bit rows of 3072 fill
  // 3 of 4 slots of 128 threads (the FULL twin of 3). Rows of 5 * 2^k
  // slots take the FULL instance of 5 (plan_cuda's exact_slots): 16-bit
  // rows of 5120 and 1280 at 128 threads and a warp (a block of 8 rows),
  // f32 rows of 5120 and 1280 at 256 and 64 threads, f32 rows of 640 a
  // warp each. Many odd rows contiguous along R run rowsany's instances of
  // a fixed thread count (rowsany_fixed): 77 (f32: 8 threads of 4 slots;
  // 16-bit: 8 of 2), 301 (f32: a warp of 3 of 4 slots; 16-bit: of 2), 577
  // (16-bit: a warp of 3 of 4), 197 (f32: a warp of 2; 16-bit: 16 threads
  // of 2), 129 (f32: a warp of 2; 16-bit: 16 threads), 33 (f32: 8 of 2).
  const Shape shapes[] = {{1, 1},      {7, 1},      {5, 33},      {64, 1024},
                          {2049, 77},  {600, 301},  {600, 577},
                          {3, 4096},   {2, 20000},  {1, 70000},   {300, 129},
                          {300, 4096},
                          {300, 8192}, {300, 20000}, {1000, 8},   {777, 16},
                          {2049, 24},  {999, 64},   {4001, 128},  {2049, 197},
                          {4001, 33},  {300, 4095}, {300, 20001}, {3, 20001},
                          {300, 768},  {300, 3072}, {300, 5120}, {300, 1280},
                          {300, 640}};
  for (kiln::DType dt : {kiln::f32, kiln::bf16, kiln::f16, kiln::f64}) {
    for (Shape s : shapes) {
      Tensor x = input({s.rows, s.cols}, dt, dev);
      Tensor w = input({s.cols}, dt, dev), b = input({s.cols}, dt, dev);
      char name[96];
      auto n = [&](const char *what) {
        std::snprintf(name, sizeof name, "%s %lldx%lld", what,
                      (long long)s.rows, (long long)s.cols);
        return name;
      };
      check_ref(n("softmax"), dt, softmax_last, x);
      check_ref(n("softmax by hand"), dt, softmax_by_hand, x);
      check_ref(n("log_softmax dim 0"), dt, log_softmax_0, x);
      check_ref(n("layer_norm"), dt, layer_norm3, x, w, b);
      if (s.cols == 4096 || s.cols == 768 || s.cols == 33)
        check_ref(n("layer_norm(x + r) * r"), dt, add_layer_norm, x,
                  input({s.rows, s.cols}, dt, dev), w, b);
      check_ref(n("rms_norm"), dt, [](const Tensor &a, const Tensor &c) {
        return rms_norm2(a, c, 1e-6);
      }, x, w);
      check_ref(n("where(sum > t)"), dt, [](const Tensor &a) {
        return where_sum(a, 0.25);
      }, x);
      // A mask of x's shape, and one broadcast over the rows.
      Tensor keep = input({s.rows, s.cols}, kiln::f32, dev) > 0.3;
      Tensor keep_cols = input({s.cols}, kiln::f32, dev) > -0.3;
      check_ref(n("masked softmax"), dt, [&](const Tensor &a) {
        return masked_softmax(a, keep);
      }, x);
      check_ref(n("masked softmax, mask broadcast over rows"), dt,
                [&](const Tensor &a) { return masked_softmax(a, keep_cols); }, x);
      check_ref(n("mean keepdim"), dt, mean_keep, x);
      check_ref(n("var"), dt, var_drop, x);
      check_ref(n("var all"), dt, var_all, x);
      check_ref(n("var + mean all"), dt, var_mean_all, x);
      check_ref(n("logsumexp dim 0"), dt, lse_0, x);
      check_ref(n("amin all"), dt, amin_all, x);
      check_ref(n("sqrt(sum(x*x)) + 1"), dt, sum_sq_epilogue, x);
      if (dt == kiln::f32) // ties are possible in 16-bit types
        exec_compare::check(n("argmax"), dt, [&] { return argmax_last(x); });
    }
  }
  // Rows far from zero (mean 1000, deviation 1): var keeps f32's accuracy
  // by rows (two passes) and over the whole tensor (one pass of Welford's
  // update, on x less its first element; split over blocks on a GPU). (Not layer norm: there x - mean differs by the mean's rounding,
  // 3e-5 at 1000, whichever order sums the row, eager's or the kernel's.)
  for (Shape s : {Shape{64, 1024}, Shape{300, 20000}, Shape{2, 70000}, Shape{64, 1001},
                  Shape{300, 20001}}) {
    Tensor x = input({s.rows, s.cols}, kiln::f32, dev) + 1000.0;
    char name[96];
    std::snprintf(name, sizeof name, "var, offset 1000, %lldx%lld",
                  (long long)s.rows, (long long)s.cols);
    check_ref(name, kiln::f32, var_drop, x);
    std::snprintf(name, sizeof name, "var all, offset 1000, %lldx%lld",
                  (long long)s.rows, (long long)s.cols);
    check_ref(name, kiln::f32, var_all, x);
    std::snprintf(name, sizeof name, "var + mean all, offset 1000, %lldx%lld",
                  (long long)s.rows, (long long)s.cols);
    check_ref(name, kiln::f32, var_mean_all, x);
  }
  // Reductions over the middle dim: rows that are neighbours in memory
  // (column mode on a GPU where inner is long enough: not 6 f32, not 12
  // bf16; there each row is strided along R: 100 x 77 x 6, many rows of a
  // length rowsany has a fixed-thread-count instance for, which needs rows
  // contiguous along R, must take the instance of a run-time count). Row
  // counts that leave a block's last rows empty (3 x 37), blocks
  // whose rows span two outer indices (12), R of one; long R over few
  // blocks of columns, split over blocks (3000 x 264, 20000 x 64, 4096 x
  // 1024 bf16 on an H200; not 4096 x 1024 f32: 128 blocks).
  struct Shape3 { int64_t outer, R, inner; };
  for (kiln::DType dt : {kiln::f32, kiln::bf16, kiln::f64}) {
    for (Shape3 s : {Shape3{3, 197, 40}, Shape3{2, 300, 12}, Shape3{3, 5, 37},
                     Shape3{1, 4096, 1024}, Shape3{4, 1, 64}, Shape3{5, 50, 6},
                     Shape3{100, 77, 6},
                     Shape3{2, 3000, 264}, Shape3{1, 20000, 64}}) {
      Tensor x = input({s.outer, s.R, s.inner}, dt, dev);
      Tensor w = input({s.inner}, dt, dev), b = input({s.R, 1}, dt, dev);
      char name[96];
      auto n = [&](const char *what) {
        std::snprintf(name, sizeof name, "%s %lldx%lldx%lld", what,
                      (long long)s.outer, (long long)s.R, (long long)s.inner);
        return name;
      };
      check_ref(n("softmax dim 1, weight"), dt, softmax_mid, x, w);
      check_ref(n("logsumexp dim 1, bias"), dt, lse_mid_bias, x, b);
      check_ref(n("var dim 1"), dt, var_mid, x);
      check_ref(n("mean keepdim dim 1"), dt, mean_keep, x);
      if (dt == kiln::f32)
        exec_compare::check(n("argmax dim 1"), dt, [&] { return argmax_mid(x); });
    }
  }
  // Far from zero over the middle dim: the moments keep f32's accuracy.
  Tensor xm = input({2, 3000, 264}, kiln::f32, dev) + 1000.0;
  check_ref("var dim 1, offset 1000, 2x3000x264", kiln::f32, var_mid, xm);
  // A 3-d tensor reduced over its middle dim, and a transposed input.
  Tensor x3 = input({4, 50, 6}, kiln::f32, dev);
  exec_compare::check("mean keepdim 3-d", kiln::f32, [&] { return mean_keep(x3); });
  Tensor xt = input({40, 30}, kiln::f32, dev).transpose(0, 1);
  check_ref("softmax transposed", kiln::f32, softmax_last, xt);
}

} // namespace reduce_cases
