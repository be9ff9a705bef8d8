// The cases of test/plugin/capture/exec-join*.cpp: cat and stack
// (kiln/join.h) inside compiled functions, and integer division of sizes on
// the host: rotary position embedding as model code writes it (the halves
// of the head dim sliced, the second negated, joined by cat). Each case
// runs compiled and eager (same answers and counters) and is compared with
// a float64 reference written with loops. Compiled, the kernel launches
// count what sink-cat and the cat's in-place pieces save: rotary embedding
// is one kernel writing both halves of its result.
#pragma once

#include "capture_compare.h"

using kiln::Tensor;

// rotate_half as HF's LLaMA writes it; the head dim comes from the
// caller (a size of a value the function computes is not captured yet).
inline Tensor rotate_half(const Tensor &x, int64_t d) {
  Tensor x1 = x.slice(-1, 0, d / 2);
  Tensor x2 = x.slice(-1, d / 2, d);
  return kiln::cat({-x2, x1}, -1);
}

// q * cos + rotate_half(q) * sin, d / 2 an integer division on the host.
COMPILE Tensor rope(const Tensor &q, const Tensor &cos, const Tensor &sin) {
  return q * cos + rotate_half(q, q.size(-1)) * sin;
}

// Rotary embedding of a new key appended to a cache (a decode step): the
// rotation's halves are pieces of the inner cat, itself a piece of the
// cache's; the cache is the one copy.
COMPILE Tensor rope_append(const Tensor &cache, const Tensor &k,
                           const Tensor &cos, const Tensor &sin) {
  return kiln::cat({cache, k * cos + rotate_half(k, k.size(-1)) * sin}, 2);
}

// q's and k's rotations after their projections, as a LLaMA block writes
// them: the scheduler merges the two pointwise groups into one kernel after
// both products, writing the four halves into the two cats (three
// launches). With fewer key heads (grouped-query attention) the shapes
// differ: a kernel per half and tensor (six).
COMPILE std::tuple<Tensor, Tensor> rope_qk(const Tensor &x, const Tensor &wq,
                                           const Tensor &wk, const Tensor &cos,
                                           const Tensor &sin, int64_t Hq,
                                           int64_t Hk, int64_t D) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor q = kiln::linear(x, wq).view({B, T, Hq, D}).transpose(1, 2);
  Tensor k = kiln::linear(x, wk).view({B, T, Hk, D}).transpose(1, 2);
  return {q * cos + rotate_half(q, D) * sin, k * cos + rotate_half(k, D) * sin};
}

// The rotation of heads split by a transpose ([B, T, H, D] memory), read
// by a reduction: the cat's result (not an output) is laid out as q's
// memory, [B, T, H, D], and the row reduction reads it through strides.
COMPILE Tensor rope_rows(const Tensor &x, const Tensor &cos, const Tensor &sin) {
  Tensor q = x.transpose(1, 2);
  return kiln::amax(q * cos + rotate_half(q, x.size(-1)) * sin, -1);
}

// Work after a cat moves before it: a scalar, a tensor broadcast along the
// cat's dim (one column, or of lower rank), a chain of ops.
COMPILE Tensor sink_chain(const Tensor &a, const Tensor &b, const Tensor &col,
                          const Tensor &row) {
  return kiln::exp(kiln::cat({a, kiln::sin(b)}, -1) * col + row) * 0.5;
}

// Joined along dims 0 and 1, of a computed value and an argument; the
// result used after.
COMPILE Tensor cat_rows(const Tensor &a, const Tensor &b) {
  return kiln::cat({a * 2.0, b}, 0) + 1.0;
}
COMPILE Tensor cat_three(const Tensor &a, const Tensor &b, const Tensor &c) {
  return kiln::cat({a, kiln::sin(b), c}, 1);
}

// stack: each tensor unsqueezed (a view), then cat; b * b moves after
// its unsqueeze (sink-views), so the kernel writing b's piece squares it.
COMPILE Tensor stack_last(const Tensor &a, const Tensor &b) {
  return kiln::sum(kiln::stack({a, b * b}, -1), -1);
}

// Integer division rounds toward zero, as C++'s: -7 / 2 is -3 (a floor
// would give -4), so the slice starts where eager's does.
COMPILE Tensor int_div(const Tensor &x, int64_t n) {
  return x.slice(0, 0, x.size(0) / n) * 2.0;
}
COMPILE Tensor neg_div(const Tensor &x, int64_t n) {
  const int64_t k = -x.size(0) / n; // negative: toward zero
  return x.slice(0, x.size(0) + k, x.size(0)) + 1.0;
}

// split() and chunk() as model code writes them: the std::vector they
// return, named or not, indexed with constants; each element is a piece
// view the host checks before the launches.
// rotate_half from chunk's halves (an even head dim).
COMPILE Tensor rope_chunk(const Tensor &q, const Tensor &cos, const Tensor &sin) {
  auto halves = q.chunk(2, -1);
  return q * cos + kiln::cat({-halves[1], halves[0]}, -1) * sin;
}
// A fused projection cut into q, k and v (views of the product's result);
// the pointwise work after it one kernel reading the three pieces.
COMPILE Tensor qkv_chunk(const Tensor &x, const Tensor &w) {
  const std::vector<Tensor> qkv = kiln::linear(x, w).chunk(3, -1);
  const Tensor &q = qkv[0], &k = qkv.at(1);
  return q * k + qkv[2];
}
// split with a run-time size; the last piece shorter. `.at(i)` of a piece
// past the last raises in eager (std::out_of_range): the host's check of
// the piece fails first, and the original body runs and raises.
COMPILE std::tuple<Tensor, Tensor> split_rows(const Tensor &x, int64_t n) {
  std::vector<Tensor> parts = x.split(n, 0);
  return {kiln::sin(parts[0]) * 2.0, kiln::sum(parts.at(1), 0, true)};
}
COMPILE Tensor split_third(const Tensor &x, int64_t n) {
  return x.split(n, 0).at(2) * 2.0;
}

// std::vector<Tensor> locals the region builds: filled by push_back in a
// loop of constant trip count, walked by range-based for (by const
// reference, and by reference assigning its elements), measured by
// size() / empty(), an element assigned, then joined; chunk()'s pieces
// joined whole (a constant count: each piece checked by the host).
COMPILE Tensor list_heads(const Tensor &x) {
  std::vector<Tensor> outs;
  outs.reserve(3);
  for (int h = 0; h < 3; ++h)
    outs.emplace_back(kiln::sin(x * double(h + 1)));
  return kiln::cat(outs, -1);
}
COMPILE std::tuple<Tensor, Tensor> list_walk(const Tensor &x, const Tensor &y) {
  std::vector<Tensor> xs = {x, y};
  xs.push_back(x * y);
  Tensor acc = x * 0.5;
  for (const Tensor &t : xs)
    acc = acc + kiln::exp(t);
  for (auto &t : xs)
    t = t * 2.0;
  if (xs.size() == 3 && !xs.empty())
    acc = acc - xs[2];
  xs[0] = acc;
  xs.pop_back();
  return {acc, kiln::stack(xs, 0)};
}
// In place through the loop's reference: the element's tensor changes.
COMPILE Tensor list_inplace(const Tensor &x, const Tensor &y) {
  std::vector<Tensor> v = {x * 2.0, y + 1.0};
  for (Tensor &t : v)
    t += 1.0;
  return v[0] * v[1];
}
// Vectors assigned whole: from braces, and one from another (a copy).
COMPILE Tensor list_reassign(const Tensor &x) {
  std::vector<Tensor> v = {x, x};
  v = {x * 2.0, x + 1.0, x};
  std::vector<Tensor> w;
  w = v;
  w.pop_back();
  return kiln::cat(w, 0) + double(v.size());
}
COMPILE Tensor list_pieces(const Tensor &x) {
  auto parts = x.chunk(4, -1);
  std::vector<Tensor> outs;
  for (int i = 0; i < 4; ++i)
    outs.push_back(kiln::sin(parts[i]) * double(i + 1));
  return kiln::cat(outs, -1);
}
COMPILE Tensor chunk_joined(const Tensor &x) {
  return kiln::cat(kiln::exp(x).chunk(3, -1), -1) + 1.0;
}

namespace join_cases {

// rope's reference with loops in float64 (q's last dim even or odd).
inline Tensor rope_reference(const Tensor &q, const Tensor &c,
                             const Tensor &s) {
  Tensor q64 = q.to(kiln::Device::cpu()).to(kiln::f64).contiguous();
  Tensor c64 = c.to(kiln::Device::cpu()).to(kiln::f64).expand(q.sizes()).contiguous();
  Tensor s64 = s.to(kiln::Device::cpu()).to(kiln::f64).expand(q.sizes()).contiguous();
  std::vector<double> qv = q64.to_vector<double>(), cv = c64.to_vector<double>(),
                      sv = s64.to_vector<double>(), out(qv.size());
  const int64_t d = q.size(-1), h = d / 2;
  for (size_t row = 0; row < qv.size() / size_t(d); ++row)
    for (int64_t j = 0; j < d; ++j) {
      const size_t at = row * size_t(d);
      // rotate_half: [-x[h:], x[:h]]
      const double rot = j < d - h ? -qv[at + size_t(h + j)]
                                   : qv[at + size_t(j - (d - h))];
      out[at + size_t(j)] = qv[at + size_t(j)] * cv[at + size_t(j)] +
                            rot * sv[at + size_t(j)];
    }
  return kiln::from_vector(out, q.sizes());
}

} // namespace join_cases

inline int run_join(kiln::Device dev) {
  using V = std::vector<Tensor>;
  using capture_compare::check;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto k = capture_compare::kernels;
  auto f64 = [](const Tensor &t) {
    return t.to(kiln::Device::cpu()).to(kiln::f64);
  };
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64,
                         kiln::DType::bf16, kiln::DType::f16}) {
    // Head dims even and odd; cos/sin [T, D] broadcast over [B, H, T, D].
    for (kiln::Dims qs : {kiln::Dims{2, 3, 5, 8}, kiln::Dims{1, 2, 7, 64},
                          kiln::Dims{1, 1, 3, 5}}) {
      Tensor q = input(qs, dt, 1), c = input({qs[2], qs[3]}, dt, 2),
             s = input({qs[2], qs[3]}, dt, 3);
      // One kernel writes both halves into the result; an odd head dim
      // has halves of two shapes: a kernel each.
      check("rope " + qs.str(), dt, [&] { return V{rope(q, c, s)}; }, 1, 0,
            k(qs[3] % 2 ? 2 : 1), {join_cases::rope_reference(q, c, s)});
      // cos/sin broadcast along the head dim (one value per position).
      Tensor c1 = input({qs[2], 1}, dt, 11), s1 = input({qs[2], 1}, dt, 12);
      check("rope, cos [T, 1] " + qs.str(), dt,
            [&] { return V{rope(q, c1, s1)}; }, 1, 0, k(qs[3] % 2 ? 2 : 1),
            {join_cases::rope_reference(q, c1, s1)});
      // Appended to a cache of 6 positions: the rotation (one kernel, two
      // for odd heads) and the cache's copy.
      Tensor cache = input({qs[0], qs[1], 6, qs[3]}, dt, 13),
             kn = input({qs[0], qs[1], 1, qs[3]}, dt, 14),
             cn = input({1, qs[3]}, dt, 15), sn = input({1, qs[3]}, dt, 16);
      check("rope_append " + qs.str(), dt,
            [&] { return V{rope_append(cache, kn, cn, sn)}; }, 1, 0,
            k(qs[3] % 2 ? 3 : 2),
            {kiln::cat({f64(cache), join_cases::rope_reference(kn, cn, sn)}, 2)});
    }
    for (int64_t Hk : {int64_t(4), int64_t(2)}) {
      const int64_t Hq = 4, D = 8, C = 32;
      Tensor x = input({2, 5, C}, dt, 40), wq = input({Hq * D, C}, dt, 41),
             wk = input({Hk * D, C}, dt, 42), c = input({5, D}, dt, 43),
             s = input({5, D}, dt, 44);
      check("rope of q and k, " + std::to_string(Hk) + " key heads", dt,
            [&] {
              auto [q, kk] = rope_qk(x, wq, wk, c, s, Hq, Hk, D);
              return V{q, kk};
            },
            1, 0, k(Hk == Hq ? 3 : 6), capture_compare::eager_reference([&] {
              auto [q, kk] = rope_qk(f64(x), f64(wq), f64(wk), f64(c), f64(s), Hq, Hk, D);
              return V{q, kk};
            }));
    }
    {
      Tensor x = input({2, 5, 3, 8}, dt, 23), c = input({5, 8}, dt, 24),
             s = input({5, 8}, dt, 25);
      Tensor q = x.transpose(1, 2);
      check("rope_rows", dt, [&] { return V{rope_rows(x, c, s)}; }, 1, 0, k(2),
            {kiln::amax(join_cases::rope_reference(q, c, s), -1)});
    }
    {
      Tensor a = input({4, 6}, dt, 17), b = input({4, 2}, dt, 18),
             col = input({4, 1}, dt, 19), row = input({8}, dt, 20);
      // Pieces of two shapes: a kernel each, nothing copied.
      check("sink_chain", dt, [&] { return V{sink_chain(a, b, col, row)}; }, 1,
            0, k(2),
            {kiln::exp(kiln::cat({f64(a), kiln::sin(f64(b))}, -1) * f64(col) +
                       f64(row)) *
             0.5});
    }
    Tensor a = input({3, 4}, dt, 4), b = input({5, 4}, dt, 5),
           e = input({3, 2}, dt, 6), g = input({3, 4}, dt, 7);
    // a * 2 written into its piece, b copied, the + 1.
    check("cat_rows", dt, [&] { return V{cat_rows(a, b)}; }, 1, 0, k(3),
          {kiln::cat({f64(a) * 2.0, f64(b)}, 0) + 1.0});
    // a and g copied: on CUDA in one launch where their rows are whole
    // 16-byte vectors (f64's 4 and 10 columns), else a 2-D copy each.
    const int64_t rows16 = dev.is_cuda() && kiln::element_size(dt) == 8;
    check("cat_three", dt, [&] { return V{cat_three(a, e, g)}; }, 1, 0, k(3 - rows16),
          {kiln::cat({f64(a), kiln::sin(f64(e)), f64(g)}, 1)});
    check("stack_last", dt, [&] { return V{stack_last(a, g)}; }, 1, 0, k(3),
          {f64(a) + f64(g) * f64(g)});
    {
      // Even head dims: chunk's halves are d / 2 each, as rotate_half's.
      Tensor q = input({2, 3, 5, 8}, dt, 30), c = input({5, 8}, dt, 31),
             s = input({5, 8}, dt, 32);
      check("rope from chunk's halves", dt, [&] { return V{rope_chunk(q, c, s)}; },
            1, 0, k(1), {join_cases::rope_reference(q, c, s)});
      Tensor x = input({4, 6}, dt, 33), w = input({15, 6}, dt, 34);
      // The product, then one kernel reading its three pieces.
      check("q, k, v from chunk(3)", dt, [&] { return V{qkv_chunk(x, w)}; }, 1, 0,
            k(2), capture_compare::eager_reference([&] {
              return V{qkv_chunk(f64(x), f64(w))};
            }));
      Tensor r = input({7, 3}, dt, 35);
      // 7 rows by 3: pieces of 3, 3 and 1; by 4: 4 and 3.
      for (int64_t n : {int64_t(3), int64_t(4)})
        check("split(" + std::to_string(n) + ", 0)", dt,
              [&] {
                auto [a, b] = split_rows(r, n);
                return V{a, b};
              },
              1, 0, k(2),
              {kiln::sin(f64(r).slice(0, 0, n)) * 2.0,
               kiln::sum(f64(r).slice(0, n, 2 * n), 0, true)});
      check("split(3, 0).at(2)", dt, [&] { return V{split_third(r, 3)}; }, 1, 0,
            k(1), {f64(r).slice(0, 6, 7) * 2.0});
    }
    {
      Tensor x = input({3, 8}, dt, 50), y = input({3, 8}, dt, 51);
      Tensor x64 = f64(x), y64 = f64(y);
      check("list_heads", dt, [&] { return V{list_heads(x)}; }, 1, 0, -1,
            {kiln::cat({kiln::sin(x64), kiln::sin(x64 * 2.0), kiln::sin(x64 * 3.0)}, -1)});
      Tensor acc = x64 * 0.5 + kiln::exp(x64) + kiln::exp(y64) +
                   kiln::exp(x64 * y64) - x64 * y64 * 2.0;
      check("list_walk", dt,
            [&] {
              auto [a, b] = list_walk(x, y);
              return V{a, b};
            },
            1, 0, -1, {acc, kiln::stack({acc, y64 * 2.0}, 0)});
      check("list_inplace", dt, [&] { return V{list_inplace(x, y)}; }, 1, 0, -1,
            {(x64 * 2.0 + 1.0) * (y64 + 2.0)});
      check("list_reassign", dt, [&] { return V{list_reassign(x)}; }, 1, 0, -1,
            {kiln::cat({x64 * 2.0, x64 + 1.0}, 0) + 3.0});
      // 8 columns in chunks of 2.
      std::vector<Tensor> ref;
      for (int64_t i = 0; i < 4; ++i)
        ref.push_back(kiln::sin(x64.slice(1, 2 * i, 2 * i + 2)) * double(i + 1));
      check("list_pieces", dt, [&] { return V{list_pieces(x)}; }, 1, 0, -1,
            {kiln::cat(ref, -1)});
      // 8 columns in 3 chunks: 3, 3 and 2, joined again.
      check("chunk_joined", dt, [&] { return V{chunk_joined(x)}; }, 1, 0, -1,
            {kiln::exp(x64) + 1.0});
    }
    Tensor x = input({7, 3}, dt, 8);
    check("int_div", dt, [&] { return V{int_div(x, 2)}; }, 1, 0, k(1),
          {f64(x).slice(0, 0, 3) * 2.0});
    check("neg_div", dt, [&] { return V{neg_div(x, 2)}; }, 1, 0, k(1),
          {f64(x).slice(0, 4, 7) + 1.0});
  }
  // cos one column too wide: eager's broadcast raises, and so does the
  // compiled call (its pieces' views do not fit; the original body runs).
  {
    Tensor q = input({1, 2, 3, 8}, kiln::f32, 21), c = input({3, 9}, kiln::f32, 22);
    capture_compare::expect_raises("rope with cos [3, 9] against q [.., 8] raises",
                                   [&] { return rope(q, c, c); });
  }
  // A call whose guard fails runs the original body once (it may raise).
  auto falls_back = [](const char *what, auto f) {
    kiln::reset_stats();
    try {
      (void)f();
    } catch (const std::exception &) {
    }
    const bool fell_back = kiln::stats().fallback_calls == 1 ||
                           std::string(BACKEND) == "backend=eager";
    std::printf("%s: %s\n", fell_back ? "ok" : "MISMATCH", what);
    capture_compare::g_mismatches += !fell_back;
  };
  // A piece past the last (7 rows in pieces of 4: two): the host's check
  // fails, the original body's .at(2) raises std::out_of_range.
  {
    Tensor r = input({7, 3}, kiln::f32, 36);
    capture_compare::expect_raises("split(4, 0).at(2) of 7 rows raises",
                                   [&] { return split_third(r, 4); });
    falls_back("a piece past the last runs the original body",
               [&] { return split_third(r, 4); });
  }
  // chunk(3) of 4 columns is 2 pieces of 2: the host's check of the third
  // fails and the original body joins the two (as eager does).
  {
    Tensor r = input({2, 4}, kiln::f32, 37);
    falls_back("chunk(3) of 4 columns (two pieces) runs the original body",
               [&] { return chunk_joined(r); });
    kiln::set_compiled_enabled(false);
    Tensor want = chunk_joined(r);
    kiln::set_compiled_enabled(true);
    const bool same = chunk_joined(r).sizes() == want.sizes() &&
                      kiln::max_abs_diff(chunk_joined(r), want) == 0;
    std::printf("%s: chunk(3) of 4 columns joins two pieces\n",
                same ? "ok" : "MISMATCH");
    capture_compare::g_mismatches += !same;
  }
  // Shapes cat rejects: the guard fails, the original body raises.
  {
    Tensor a = input({3, 4}, kiln::f32, 9), b = input({5, 3}, kiln::f32, 10);
    capture_compare::expect_raises("cat of [3, 4] and [5, 3] along dim 0 raises",
                                   [&] { return cat_rows(a, b); });
    falls_back("a cat eager rejects runs the original body",
               [&] { return cat_rows(a, b); });
  }
  return capture_compare::summary();
}
