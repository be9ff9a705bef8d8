// The cases of test/plugin/capture/exec-views*.cpp: layout ops (view,
// reshape, transpose, permute, slice, unsqueeze, expand, contiguous) inside
// compiled functions. The host makes each view, of an argument or of a
// value a kernel wrote, and the kernels read it through its strides: no
// copy, the kernel count asserted. Compiled against eager and a float64
// reference; views handed out share storage as eager's do; a view eager
// raises on raises compiled too.
#pragma once

#include "capture_compare.h"

using kiln::Tensor;

// Attention's head split: [B, T, C] -> [B, H, T, C/H] by a view with sizes
// known at run time and a transpose, then a softmax over the last dim of
// the strided result: one row kernel, no copy.
COMPILE Tensor head_softmax(const Tensor &x, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = x.view({B, T, H, -1}).transpose(1, 2);
  return kiln::softmax(q * 0.5, -1);
}

// A view of pointwise work on one tensor: the transpose of exp(x), summed
// over its rows (x's columns). The transpose moves onto x (sink-views):
// one reduction kernel reads x through it and takes exp on the way.
COMPILE Tensor sum_of_transpose(const Tensor &x) {
  Tensor t = kiln::exp(x).transpose(0, 1);
  return kiln::sum(t, -1) + 1.0;
}

// Work before a head split, as attention code scales q: the row kernel
// reads x through the view and the transpose and scales it there.
COMPILE Tensor scaled_heads(const Tensor &x, int64_t H, double scale) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = (x * scale).view({B, T, H, -1}).transpose(1, 2);
  return kiln::softmax(q, -1);
}

// A 0-d tensor over a count, unsqueezed to broadcast against rows (what a
// mean's backward does with its output gradient): one kernel, none for the
// 0-d value.
COMPILE Tensor scale_rows(const Tensor &x, const Tensor &g) {
  return x * (g / double(x.size(0))).unsqueeze(-1);
}

// A view of work on two tensors of one shape: the transpose moves onto
// each (sink-views), one kernel reads both through it.
COMPILE Tensor two_then_transpose(const Tensor &x, const Tensor &y) {
  return kiln::tanh((x * y).transpose(0, 1));
}

// A bias added before a head split, as a projection's epilogue written by
// hand: the bias is broadcast to x's shape first (a stride-0 view), then
// both go through the view and the transpose; the row kernel reads them.
COMPILE Tensor bias_heads(const Tensor &x, const Tensor &b, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = (x + b).view({B, T, H, -1}).transpose(1, 2);
  return kiln::softmax(q, -1);
}

// Dims written from the rank, as model code often names the last dims
// (`t.dim() - c`: the c-th dim from the end whatever the rank), for a
// view, a row op and the size of a computed tensor: one kernel, at ranks
// 2 and 3.
COMPILE Tensor rank_relative(const Tensor &x) {
  Tensor t = x.transpose(x.dim() - 2, x.dim() - 1);
  return kiln::softmax(t, t.dim() - 1) * double(t.size(t.dim() - 1));
}

// An outer sum, transposed: neither tensor has the work's shape, both are
// broadcast to it; one reduction kernel.
COMPILE Tensor outer_then_transpose(const Tensor &col, const Tensor &row) {
  return kiln::sum(kiln::exp((col + row).transpose(0, 1)), -1);
}

// A flattening view of work whose bias is broadcast: the broadcast bias
// has no strides that give one dim, so reshape copies it (one copy
// kernel, as eager's flatten of the written sum is one kernel more).
COMPILE Tensor flatten_biased(const Tensor &x, const Tensor &b) {
  return kiln::relu((x * b).view({-1}));
}

// SwiGLU over the two halves of the last dim: two slices of x, one kernel.
COMPILE Tensor swiglu(const Tensor &x, int64_t h) {
  return kiln::silu(x.slice(-1, 0, h)) * x.slice(-1, h, x.size(-1));
}

// A per-column bias broadcast by unsqueeze and expand (sizes at run time).
COMPILE Tensor add_expanded(const Tensor &x, const Tensor &b) {
  return kiln::tanh(x + b.unsqueeze(0).expand({x.size(0), -1}));
}

// A view handed out: of a kernel's result (permute), and of an argument
// (eager returns a view sharing x's storage; so does the compiled call).
COMPILE std::tuple<Tensor, Tensor> views_out(const Tensor &x) {
  return {kiln::exp(x).permute({1, 0}), x.transpose(0, 1)};
}

// contiguous() of a transposed argument copies it (as eager), and the
// reshape of that copy is a view; squeeze drops the unit dim.
COMPILE Tensor flatten_t(const Tensor &x) {
  Tensor c = x.unsqueeze(0).transpose(1, 2).contiguous();
  return kiln::relu(c.squeeze(0).reshape({-1}));
}

// Attention scores: q @ k^T through a transposed view of k.
COMPILE Tensor scores(const Tensor &q, const Tensor &k) {
  return kiln::matmul(q, k.transpose(-2, -1)) * 0.125;
}

// Self-attention as model code writes it: one projection to q, k and v,
// sliced and split into heads by views, scores through a transposed view,
// the heads merged back by a reshape (a copy: the transpose is not
// viewable as [B, T, C]), the output projection.
COMPILE Tensor attention(const Tensor &x, const Tensor &wqkv, const Tensor &wo,
                         int64_t H) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  Tensor qkv = kiln::linear(x, wqkv);
  Tensor q = qkv.slice(-1, 0, C).view({B, T, H, -1}).transpose(1, 2);
  Tensor k = qkv.slice(-1, C, 2 * C).view({B, T, H, -1}).transpose(1, 2);
  Tensor v = qkv.slice(-1, 2 * C, 3 * C).view({B, T, H, -1}).transpose(1, 2);
  Tensor p = kiln::softmax(kiln::matmul(q, k.transpose(-2, -1)) * 0.25, -1);
  Tensor o = kiln::matmul(p, v).transpose(1, 2).reshape({B, T, C});
  return kiln::linear(o, wo);
}

// A view eager raises on (the transpose is not viewable as one dim).
COMPILE Tensor bad_view(const Tensor &x) {
  return kiln::exp(x.transpose(0, 1).view({-1}));
}

inline int run_views(kiln::Device dev) {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto ref = [](auto f) { return capture_compare::eager_reference(f); };
  auto cpu = capture_compare::on_cpu;
  auto f64 = capture_compare::as_f64;
  auto k = capture_compare::kernels;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({2, 5, 64}, dt, 1);
    check("head_softmax", dt, [&] { return V{head_softmax(x, 4)}; }, 1, 0, k(1),
          ref([&] { return V{cpu(head_softmax(f64(x), 4))}; }));
    check("scaled_heads", dt, [&] { return V{scaled_heads(x, 4, 0.25)}; }, 1, 0,
          k(1), ref([&] { return V{cpu(scaled_heads(f64(x), 4, 0.25))}; }));
    check("rank_relative", dt, [&] { return V{rank_relative(x)}; }, 1, 0, k(1),
          ref([&] { return V{cpu(rank_relative(f64(x)))}; }));
    Tensor x2 = input({7, 33}, dt, 15);
    check("rank_relative [7, 33]", dt, [&] { return V{rank_relative(x2)}; }, 1,
          0, k(1), ref([&] { return V{cpu(rank_relative(f64(x2)))}; }));
    Tensor hb = input({64}, dt, 14);
    check("bias_heads", dt, [&] { return V{bias_heads(x, hb, 4)}; }, 1, 0, k(1),
          ref([&] { return V{cpu(bias_heads(f64(x), f64(hb), 4))}; }));
    for (kiln::Dims mn : {kiln::Dims{33, 17}, kiln::Dims{64, 700}}) {
      const std::string at =
          " [" + std::to_string(mn[0]) + ", " + std::to_string(mn[1]) + "]";
      Tensor m = input(mn, dt, 2);
      check("sum_of_transpose" + at, dt, [&] { return V{sum_of_transpose(m)}; },
            1, 0, k(1), ref([&] { return V{cpu(sum_of_transpose(f64(m)))}; }));
      Tensor g0 = input({}, dt, 11), y = input(mn, dt, 12);
      check("scale_rows" + at, dt, [&] { return V{scale_rows(m, g0)}; }, 1, 0,
            k(1), ref([&] { return V{cpu(scale_rows(f64(m), f64(g0)))}; }));
      check("two_then_transpose" + at, dt,
            [&] { return V{two_then_transpose(m, y)}; }, 1, 0, k(1), ref([&] {
              return V{cpu(two_then_transpose(f64(m), f64(y)))};
            }));
      Tensor b = input({mn[1]}, dt, 3);
      Tensor col = input({mn[0], 1}, dt, 13);
      check("outer_then_transpose" + at, dt,
            [&] { return V{outer_then_transpose(col, b)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(outer_then_transpose(f64(col), f64(b)))}; }));
      check("flatten_biased" + at, dt, [&] { return V{flatten_biased(m, b)}; },
            1, 0, k(2), ref([&] { return V{cpu(flatten_biased(f64(m), f64(b)))}; }));
      check("add_expanded" + at, dt, [&] { return V{add_expanded(m, b)}; }, 1, 0,
            k(1), ref([&] { return V{cpu(add_expanded(f64(m), f64(b)))}; }));
      check("views_out" + at, dt,
            [&] {
              auto [p, t] = views_out(m);
              return V{p, t};
            },
            1, 0, k(1), ref([&] {
              auto [p, t] = views_out(f64(m));
              return V{cpu(p), cpu(t)};
            }));
      // contiguous() copies x with the runtime's copy kernel (counted).
      check("flatten_t" + at, dt, [&] { return V{flatten_t(m)}; }, 1, 0, k(2),
            ref([&] { return V{cpu(flatten_t(f64(m)))}; }));
    }
    Tensor g = input({6, 2 * 48}, dt, 4);
    check("swiglu", dt, [&] { return V{swiglu(g, 48)}; }, 1, 0, k(1),
          ref([&] { return V{cpu(swiglu(f64(g), 48))}; }));
    if (kiln::is_floating(dt)) {
      Tensor q = input({2, 3, 7, 16}, dt, 5), kk = input({2, 3, 9, 16}, dt, 6);
      check("scores", dt, [&] { return V{scores(q, kk)}; }, 1, 0, k(-1),
            ref([&] { return V{cpu(scores(f64(q), f64(kk)))}; }));
      Tensor xa = input({2, 5, 32}, dt, 7), wqkv = input({96, 32}, dt, 8),
             wo = input({32, 32}, dt, 9);
      check("attention", dt, [&] { return V{attention(xa, wqkv, wo, 4)}; }, 1,
            0, k(-1), ref([&] {
              return V{cpu(attention(f64(xa), f64(wqkv), f64(wo), 4))};
            }));
    }
  }
  // Views handed out are views, as eager's: of the argument's storage, with
  // the strides eager gives them.
  {
    Tensor m = input({4, 6}, kiln::f32, 7);
    kiln::reset_stats();
    auto [p, t] = views_out(m);
    const bool ran = kiln::stats().compiled_calls ==
                     (kiln::force_guard_failure() ? 0u : 1u);
    const bool ok = t.storage() == m.storage() && t.strides() == kiln::Dims{1, 6} &&
                    p.strides() == kiln::Dims{1, 6} && p.sizes() == kiln::Dims{6, 4};
    std::printf("%s: views handed out share storage and strides as eager's\n",
                ran && ok ? "ok" : "MISMATCH");
    capture_compare::g_mismatches += !(ran && ok);
  }
  Tensor x = input({4, 6}, kiln::f32, 8);
  capture_compare::expect_raises("a view eager raises on raises",
                                 [&] { return bad_view(x); });
  return capture_compare::summary();
}
