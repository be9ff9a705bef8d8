// The cases of test/plugin/capture/exec-store*.cpp: Tensor::copy_ into a
// tensor argument or a view of one inside compiled functions (a key/value
// cache updated in place, as a decode step writes it). Each case runs
// compiled and eager from fresh inputs (same answers, the arguments written
// alike, same counters) and is compared with a float64 reference where it
// gives one; the kernel counts say the copy ran inside the compiled call
// (the runtime's copy counts as a launch; a kernel that writes its result
// into the destination makes the copy do nothing).
#pragma once

#include "capture_compare.h"

#include <cmath>
#include <memory>
#include <tuple>

using kiln::Tensor;

// A decode step over a cache updated in place: the new key (scaled) and
// value written at position S, then attention over positions 0..S. One
// region: the scale (its kernel writes the key into the cache slot), the
// value's copy, attention.
COMPILE Tensor decode_step(const Tensor &q, const Tensor &k, const Tensor &v,
                           const Tensor &kc, const Tensor &vc, int64_t S) {
  kc.slice(2, S, S + 1).copy_(k * 0.5);
  vc.slice(2, S, S + 1).copy_(v);
  return kiln::scaled_dot_product_attention(q, kc.slice(2, 0, S + 1),
                                            vc.slice(2, 0, S + 1));
}

// The whole argument written, then read: x + 1 reads the new x.
COMPILE Tensor whole(const Tensor &x, const Tensor &y) {
  Tensor t = x; // a handle of x: the copy_ writes x's elements
  t.copy_(kiln::sin(y) * 2.0);
  return x + 1.0;
}

// A row broadcast into two rows of an argument, converted to its dtype
// (src f32 whatever x's dtype), then a reduction over all of x.
COMPILE Tensor rows_then_sum(const Tensor &x, const Tensor &row) {
  x.slice(0, 1, 3).copy_(row.to(kiln::f32));
  return kiln::sum(x, -1);
}

// A view taken before the copy_ and read after it sees the new elements.
COMPILE Tensor view_before(const Tensor &c, const Tensor &k, int64_t S) {
  Tensor window = c.slice(1, 0, S + 1);
  c.slice(1, S, S + 1).copy_(k);
  return kiln::amax(window, 1);
}

// Two copies into one argument; the second reads what the first wrote
// (a read before a copy_ ends the region there: two regions).
COMPILE Tensor two_copies(const Tensor &a, const Tensor &x) {
  a.slice(0, 0, 1).copy_(x);
  a.slice(0, 1, 2).copy_(a.slice(0, 0, 1) * 2.0);
  return a * 3.0;
}

// A copy_ into the whole argument, then an in-place update of it: the
// update reads what the copy wrote, and its result is copied back into
// the argument at the end; the argument is returned too.
COMPILE std::tuple<Tensor, Tensor> copy_then_update(const Tensor &x,
                                                    const Tensor &y) {
  Tensor h = x;
  h.copy_(y * 2.0);
  h += 1.0;
  return {h * 3.0, x};
}

// The new key rotated (a cat of its halves, written by the kernel that
// computes them) straight into the cache slot: no copy, no cat launch.
COMPILE Tensor rope_into_cache(const Tensor &cache, const Tensor &k,
                               const Tensor &cos, const Tensor &sin, int64_t S) {
  const int64_t d = k.size(-1);
  Tensor rot = kiln::cat({-k.slice(-1, d / 2, d), k.slice(-1, 0, d / 2)}, -1);
  cache.slice(2, S, S + 1).copy_(k * cos + rot * sin);
  return kiln::sum(cache.slice(2, 0, S + 1), 2);
}

namespace store_cases {

// softmax(q k^T / sqrt(D)) v over keys/values [B, H, S, D] in float64.
inline Tensor attention_reference(const Tensor &q, const Tensor &k, const Tensor &v) {
  const double scale = 1.0 / std::sqrt(double(q.size(-1)));
  Tensor s = kiln::matmul(q, k.transpose(-2, -1)) * scale;
  return kiln::matmul(kiln::softmax(s, -1), v);
}

} // namespace store_cases

inline int run_store(kiln::Device dev) {
  using V = std::vector<Tensor>;
  using capture_compare::check;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto k = capture_compare::kernels;
  // The tensors a case writes, made afresh for each of its calls (compiled,
  // then eager) before the counters start: make() twice, handed out in
  // turn.
  auto fresh = [](auto make) {
    auto made = std::make_shared<std::vector<V>>();
    made->push_back(make());
    made->push_back(make());
    auto next = std::make_shared<int>(0);
    return [made, next] { return (*made)[size_t((*next)++ % 2)]; };
  };
  auto f64 = [](const Tensor &t) {
    return t.to(kiln::Device::cpu()).to(kiln::f64);
  };
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64,
                         kiln::DType::bf16, kiln::DType::f16}) {
    // A cache of 9 positions, 6 filled; the step writes position 6 (and,
    // a second time, position 8 of a cache whose last slot is the new one).
    for (int64_t S : {int64_t(6), int64_t(8)}) {
      const int64_t B = 2, H = 3, D = 8, T = 9;
      Tensor q = input({B, H, 1, D}, dt, 1), kn = input({B, H, 1, D}, dt, 2),
             vn = input({B, H, 1, D}, dt, 3);
      auto make = [&] {
        return V{input({B, H, T, D}, dt, 4), input({B, H, T, D}, dt, 5)};
      };
      auto caches = fresh(make);
      V ref_c = make();
      Tensor rk = f64(ref_c[0]), rv = f64(ref_c[1]);
      rk.slice(2, S, S + 1).copy_(f64(kn) * 0.5);
      rv.slice(2, S, S + 1).copy_(f64(vn));
      Tensor ro = store_cases::attention_reference(f64(q), rk.slice(2, 0, S + 1),
                                                   rv.slice(2, 0, S + 1));
      check("decode_step S=" + std::to_string(S), dt,
            [&] {
              V c = caches();
              Tensor o = decode_step(q, kn, vn, c[0], c[1], S);
              return V{o, c[0], c[1]};
            },
            1, 0, k(3), {ro, rk, rv});
    }
    {
      Tensor y = input({5, 7}, dt, 6);
      Tensor rx = kiln::sin(f64(y)) * 2.0;
      auto xs = fresh([&] { return V{input({5, 7}, dt, 7)}; });
      check("whole", dt,
            [&] {
              Tensor x = xs()[0];
              Tensor r = whole(x, y);
              return V{r, x};
            },
            1, 0, k(2), {rx + 1.0, rx});
    }
    {
      Tensor row = input({6}, dt, 8);
      Tensor rx = f64(input({4, 6}, dt, 9));
      rx.slice(0, 1, 3).copy_(f64(row));
      auto xs = fresh([&] { return V{input({4, 6}, dt, 9)}; });
      // The cast of row to f32 is a kernel unless row is f32.
      check("rows_then_sum", dt,
            [&] {
              Tensor x = xs()[0];
              Tensor r = rows_then_sum(x, row);
              return V{r, x};
            },
            1, 0, k(dt == kiln::f32 ? 2 : 3), {kiln::sum(rx, -1), rx});
    }
    for (int64_t S : {int64_t(0), int64_t(4)}) {
      Tensor kk = input({3, 1, 5}, dt, 10);
      Tensor rc = f64(input({3, 6, 5}, dt, 11));
      rc.slice(1, S, S + 1).copy_(f64(kk));
      auto cs = fresh([&] { return V{input({3, 6, 5}, dt, 11)}; });
      check("view_before S=" + std::to_string(S), dt,
            [&] {
              Tensor c = cs()[0];
              Tensor r = view_before(c, kk, S);
              return V{r, c};
            },
            1, 0, k(2), {kiln::amax(rc.slice(1, 0, S + 1), 1), rc});
    }
    for (int64_t D : {int64_t(8), int64_t(5)}) {
      const int64_t S = 3;
      Tensor kk = input({2, 2, 1, D}, dt, 22), c = input({1, D}, dt, 23),
             sn = input({1, D}, dt, 24);
      Tensor k64 = f64(kk), rc = f64(input({2, 2, 6, D}, dt, 25));
      Tensor rot = kiln::cat({-k64.slice(-1, D / 2, D), k64.slice(-1, 0, D / 2)}, -1);
      rc.slice(2, S, S + 1).copy_(k64 * f64(c) + rot * f64(sn));
      auto cs = fresh([&] { return V{input({2, 2, 6, D}, dt, 25)}; });
      // The rotation's kernel (one; two for an odd head dim, whose halves
      // differ in shape) writes into the slot; the sum.
      check("rope_into_cache D=" + std::to_string(D), dt,
            [&] {
              Tensor cache = cs()[0];
              Tensor r = rope_into_cache(cache, kk, c, sn, S);
              return V{r, cache};
            },
            1, 0, k(D % 2 ? 3 : 2), {kiln::sum(rc.slice(2, 0, S + 1), 2), rc});
    }
    {
      Tensor y = input({3, 5}, dt, 20);
      Tensor rx = f64(y) * 2.0 + 1.0;
      auto xs = fresh([&] { return V{input({3, 5}, dt, 21)}; });
      // y * 2 written into x (the copy does nothing), h + 1 and its * 3 in
      // one kernel, the copy of h + 1 back into x.
      check("copy_then_update", dt,
            [&] {
              Tensor x = xs()[0];
              auto [r, same] = copy_then_update(x, y);
              return V{r, same, x};
            },
            1, 0, k(3), {rx * 3.0, rx, rx});
    }
    {
      Tensor x = input({1, 4}, dt, 12);
      auto as = fresh([&] { return V{input({3, 4}, dt, 13)}; });
      // Region 1's copy; the second copy_ eagerly (a multiply and a copy);
      // region 2's product.
      check("two_copies", dt,
            [&] {
              Tensor a = as()[0];
              Tensor r = two_copies(a, x);
              return V{r, a};
            },
            2, 0, k(4));
    }
  }
  // The source does not broadcast to the destination: eager raises, so
  // the compiled call runs its original body, which raises.
  capture_compare::expect_raises("copy_ of [3, 6] into [2, 6] raises", [&] {
    Tensor x = input({4, 6}, kiln::f32, 14), bad = input({3, 6}, kiln::f32, 15);
    return rows_then_sum(x, bad);
  });
  // The key handed in is a view of the cache itself: the copy reads what
  // the step writes. The guard that the written argument shares no
  // storage with another runs the original body: eager's answer.
  {
    const int64_t B = 1, H = 2, D = 8, T = 5, S = 3;
    Tensor q = input({B, H, 1, D}, kiln::f32, 17);
    auto cs = fresh([&] {
      return V{input({B, H, T, D}, kiln::f32, 18), input({B, H, T, D}, kiln::f32, 19)};
    });
    check("decode_step, key a view of the cache", kiln::f32,
          [&] {
            V c = cs();
            Tensor kc = c[0], vc = c[1];
            Tensor o = decode_step(q, kc.slice(2, 0, 1), kc.slice(2, 1, 2), kc,
                                   vc, S);
            return V{o, kc, vc};
          },
          0, 1, -1);
  }
  return capture_compare::summary();
}
