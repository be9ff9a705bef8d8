// The cases of test/plugin/capture/exec-reduction-groups*.cpp: functions one
// reduction kernel cannot compute (reductions over different dims, a
// reduction of a reduced value, a keepdim=false reduced value broadcast
// against a tensor of another shape) run as several kernels, a reduced
// value written by one and read by the next; compiled against eager and a
// float64 reference, the kernel count asserted, with rows short and long
// enough to take every launch mode.
#pragma once

#include "capture_compare.h"

using kiln::Tensor;

// Sums over each dim of a matrix: two kernels reading x.
COMPILE Tensor row_plus_col(const Tensor &x) {
  return kiln::sum(x, 0, true) + kiln::sum(x, 1, true);
}

// Both marginals returned.
COMPILE std::tuple<Tensor, Tensor> marginals(const Tensor &x) {
  return {kiln::sum(x, 0), kiln::amax(x, 1)};
}

// A cross-entropy-like loss: the mean over rows of a row's logsumexp minus
// its mean logit (a reduction of reduced values).
COMPILE Tensor lse_loss(const Tensor &logits) {
  return kiln::mean(kiln::logsumexp(logits, -1) - kiln::mean(logits, -1));
}

// Centre each column, then a softmax over each row (different dims,
// chained): the column means are written, the centred values recomputed.
COMPILE Tensor centred_softmax(const Tensor &x) {
  return kiln::softmax(x - kiln::mean(x, 0, true), -1);
}

// A keepdim=false row sum broadcast against a tensor of its own shape
// (trailing dims, not per row): a reduction kernel, then a pointwise one.
COMPILE Tensor row_sum_plus(const Tensor &x, const Tensor &z) {
  return kiln::tanh(kiln::sum(x, -1) + z) * 2.0;
}

// A reduction of a reduced value over the same dims.
COMPILE Tensor sum_of_sums(const Tensor &x) {
  return kiln::sum(kiln::sum(x, -1), -1);
}

// Several groups and an output of the arguments alone.
COMPILE std::tuple<Tensor, Tensor> norm_stats(const Tensor &x, const Tensor &y) {
  Tensor v = kiln::var(x, -1);
  return {kiln::amax(v, 0), kiln::sigmoid(y) * y};
}

inline int run_reduction_groups(kiln::Device dev) {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  const bool cuda = dev.is_cuda();
  // References: the original body on float64 copies.
  auto ref = [](auto f) { return capture_compare::eager_reference(f); };
  auto cpu = capture_compare::on_cpu;
  auto f64 = capture_compare::as_f64;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16})
    // Short rows (a warp per row), long ones (a block per row, or re-read),
    // and few very long rows (split over blocks).
    for (kiln::Dims mn : {kiln::Dims{33, 17}, kiln::Dims{64, 700},
                          kiln::Dims{3, 20000}, kiln::Dims{20000, 3}}) {
      const std::string at =
          " [" + std::to_string(mn[0]) + ", " + std::to_string(mn[1]) + "]";
      // Kernels per call: CUDA splits a few long rows or columns over
      // blocks, a launch per pass and per combine, so only the plan's
      // count where no kernel splits.
      auto k = [&](int64_t n) {
        return cuda && (mn[0] == 3 || mn[1] == 3) ? -1
                                                  : capture_compare::kernels(n);
      };
      Tensor x = input(mn, dt, 1);
      check("row_plus_col" + at, dt, [&] { return V{row_plus_col(x)}; }, 1, 0,
            k(2), ref([&] { return V{cpu(row_plus_col(f64(x)))}; }));
      check("marginals" + at, dt,
            [&] {
              auto [a, b] = marginals(x);
              return V{a, b};
            },
            1, 0, k(2), ref([&] {
              auto [a, b] = marginals(f64(x));
              return V{cpu(a), cpu(b)};
            }));
      check("lse_loss" + at, dt, [&] { return V{lse_loss(x)}; }, 1, 0, k(2),
            ref([&] { return V{cpu(lse_loss(f64(x)))}; }));
      check("centred_softmax" + at, dt, [&] { return V{centred_softmax(x)}; },
            1, 0, k(2), ref([&] { return V{cpu(centred_softmax(f64(x)))}; }));
      Tensor z = input({mn[0]}, dt, 2);
      check("row_sum_plus" + at, dt, [&] { return V{row_sum_plus(x, z)}; }, 1,
            0, k(2), ref([&] { return V{cpu(row_sum_plus(f64(x), f64(z)))}; }));
      Tensor x3 = input({2, mn[0], mn[1]}, dt, 3);
      check("sum_of_sums" + at, dt, [&] { return V{sum_of_sums(x3)}; }, 1, 0,
            k(2), ref([&] { return V{cpu(sum_of_sums(f64(x3)))}; }));
      Tensor y = input({5, 7}, dt, 4);
      check("norm_stats" + at, dt,
            [&] {
              auto [a, b] = norm_stats(x, y);
              return V{a, b};
            },
            1, 0, k(3), ref([&] {
              auto [a, b] = norm_stats(f64(x), f64(y));
              return V{cpu(a), cpu(b)};
            }));
    }
  // A keepdim=false sum broadcast against a tensor of another shape than the
  // reduced value's: eager raises, and so does the compiled call.
  Tensor x = input({4, 6}, kiln::f32, 5), z = input({5}, kiln::f32, 6);
  capture_compare::expect_raises("shapes that do not broadcast raise",
                                 [&] { return row_sum_plus(x, z); });
  return capture_compare::summary();
}
