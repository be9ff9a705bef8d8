// The cases of test/plugin/capture/exec-multi-output*.cpp: functions with
// several outputs over one iteration space, each computed by one kernel
// (multi-output fusion), compiled against eager on one device over every
// variant. Outputs whose shapes differ at run time take the per-input-set
// kernels instead: still compiled, never a fallback.
#pragma once

#include "capture_compare.h"

#include <cmath>

using kiln::Tensor;

// An Adam step written functionally: m, v and p read different sets of
// tensors, and all have p's shape.
COMPILE void adam_assign(Tensor &p, Tensor &m, Tensor &v, const Tensor &g,
                         double lr, double b1, double b2, double eps,
                         int64_t step) {
  m = m * b1 + g * (1 - b1);
  v = v * b2 + g * g * (1 - b2);
  double bc1 = 1 - std::pow(b1, double(step));
  double bc2 = 1 - std::pow(b2, double(step));
  p = p - (m / bc1) / (kiln::sqrt(v / bc2) + eps) * lr;
}

// The same step in place, as optimizers write it.
COMPILE void adam_inplace(Tensor &p, Tensor &m, Tensor &v, const Tensor &g,
                          double lr, double b1, double b2, double eps,
                          int64_t step) {
  m *= b1;
  m += g * (1 - b1);
  v *= b2;
  v += g * g * (1 - b2);
  double bc1 = 1 - std::pow(b1, double(step));
  double bc2 = 1 - std::pow(b2, double(step));
  p -= (m / bc1) / (kiln::sqrt(v / bc2) + eps) * lr;
}

// Two results of different inputs: one kernel when their shapes agree,
// two kernels when they do not (x [4, 6] and b [6]: [4, 6] and [6]).
COMPILE std::pair<Tensor, Tensor> two(const Tensor &x, const Tensor &b) {
  return {kiln::exp(x) + 1, b * 2};
}

// An in-place update beside a result read from the tensor's old values:
// when both run in one kernel each element is read before it is written;
// when the shapes differ (two kernels) m's kernel must not write m before
// r's kernel reads it: the update is written to a new tensor and copied.
COMPILE Tensor update_after_read(Tensor &m, const Tensor &g, const Tensor &z) {
  Tensor r = m * z;
  m += g;
  return r;
}

// (mean, rstd, normalized) of a row: one row kernel writes all three.
struct Normalized {
  Tensor mean, rstd, y;
};
COMPILE Normalized normalize(const Tensor &x, double eps) {
  Tensor mu = kiln::mean(x, -1, true);
  Tensor d = x - mu;
  Tensor rstd = kiln::rsqrt(kiln::mean(d * d, -1, true) + eps);
  return {mu, rstd, d * rstd};
}

inline int run_multi_output(kiln::Device dev) {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto k = capture_compare::kernels;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    for (int step : {1, 3}) {
      check("adam assign, step " + std::to_string(step), dt, [&] {
        Tensor p = input({33, 65}, dt, 1), m = input({33, 65}, dt, 2),
               v = kiln::abs(input({33, 65}, dt, 3)), g = input({33, 65}, dt, 4);
        kiln::reset_stats(); // count the step's kernels only
        adam_assign(p, m, v, g, 1e-2, 0.9, 0.999, 1e-8, step);
        return V{p, m, v};
      }, 1, 0, k(1));
      // Updated in place: the kernel writes into the caller's storage.
      check("adam in place, step " + std::to_string(step), dt, [&] {
        Tensor p = input({33, 65}, dt, 1), m = input({33, 65}, dt, 2),
               v = kiln::abs(input({33, 65}, dt, 3)), g = input({33, 65}, dt, 4);
        Tensor p_view = p.slice(0, 2, 5); // sees the update
        kiln::reset_stats();
        adam_inplace(p, m, v, g, 1e-2, 0.9, 0.999, 1e-8, step);
        return V{p, m, v, p_view};
      }, 1, 0, k(1));
      // p not contiguous: written to a new tensor and copied into p.
      check("adam in place, strided p, step " + std::to_string(step), dt, [&] {
        Tensor big = input({33, 130}, dt, 1), m = input({33, 65}, dt, 2),
               v = kiln::abs(input({33, 65}, dt, 3)), g = input({33, 65}, dt, 4);
        Tensor p = big.slice(1, 10, 75);
        kiln::reset_stats();
        adam_inplace(p, m, v, g, 1e-2, 0.9, 0.999, 1e-8, step);
        return V{big, m, v};
      }, 1, 0, k(2));
    }
    check("update after read, one kernel", dt, [&] {
      Tensor m = input({4, 6}, dt, 8), g = input({6}, dt, 9), z = input({6}, dt, 10);
      Tensor alias = m;
      kiln::reset_stats();
      Tensor r = update_after_read(m, g, z);
      return V{r, m, alias};
    }, 1, 0, k(1));
    check("update after read, two kernels", dt, [&] {
      Tensor m = input({4, 6}, dt, 8), g = input({6}, dt, 9),
             z = input({3, 1, 1}, dt, 10);
      Tensor alias = m;
      kiln::reset_stats();
      Tensor r = update_after_read(m, g, z);
      return V{r, m, alias};
    }, 1, 0, k(3)); // two kernels and the copy into m
    check("two, same shape", dt, [&] {
      Tensor x = input({4, 6}, dt, 5), b = input({4, 6}, dt, 6);
      kiln::reset_stats();
      auto [r, s] = two(x, b);
      return V{r, s};
    }, 1, 0, k(1));
    check("two, shapes differ", dt, [&] {
      Tensor x = input({4, 6}, dt, 5), b = input({6}, dt, 6);
      kiln::reset_stats();
      auto [r, s] = two(x, b);
      return V{r, s};
    }, 1, 0, k(2));
    check("two, broadcast to one shape", dt, [&] {
      // b's result is [1, 6], x's [4, 6]: the shapes differ.
      Tensor x = input({4, 6}, dt, 5), b = input({1, 6}, dt, 6);
      kiln::reset_stats();
      auto [r, s] = two(x, b);
      return V{r, s};
    }, 1, 0, k(2));
    check("two, empty", dt, [&] {
      Tensor x = input({0, 6}, dt, 5), b = input({0, 6}, dt, 6);
      kiln::reset_stats();
      auto [r, s] = two(x, b);
      return V{r, s};
    }, 1, 0, k(0));
    check("normalize", dt, [&] {
      Tensor x = input({8, 100}, dt, 7);
      kiln::reset_stats();
      Normalized r = normalize(x, 1e-5);
      return V{r.mean, r.rstd, r.y};
    }, 1, 0, k(1));
  }
  return capture_compare::summary();
}
