// The cases of test/plugin/capture/exec-row-broadcast*.cpp: operands
// broadcast across the rows of a fused reduction in ways one stride per
// [outer, R, inner] group cannot walk (a [T, T] mask or bias beside [B, H,
// T, T] scores, a [1, H, 1, 1] per-head scale, a [B, 1, D] gain), each in
// one kernel, compiled against eager and a float64 reference on one
// device, with rows short and long enough to take every launch mode.
#pragma once

#include "capture_compare.h"

using kiln::Tensor;

// Attention's masked softmax: the mask is [T, T], the scores [B, H, T, T].
COMPILE Tensor masked_softmax(const Tensor &s, const Tensor &mask, double scale) {
  return kiln::softmax(kiln::where(mask, s * scale, -1e9), -1);
}

// An additive bias (ALiBi, relative positions) of [T, T], or [H, T, T].
COMPILE Tensor biased_softmax(const Tensor &s, const Tensor &bias) {
  return kiln::softmax(s + bias, -1);
}

// A per-head scale [1, H, 1, 1], softmax over the last dim and over the
// second to last (rows with an inner extent).
COMPILE Tensor head_scaled_softmax(const Tensor &s, const Tensor &h) {
  return kiln::softmax(s * h, -1);
}
COMPILE Tensor head_scaled_softmax_cols(const Tensor &s, const Tensor &h) {
  return kiln::softmax(s * h, -2);
}

// RMS norm of [B, T, D] with a per-sequence gain [B, 1, D].
COMPILE Tensor gained_rms(const Tensor &x, const Tensor &gain) {
  Tensor r = x * kiln::rsqrt(kiln::mean(x * x, -1, true) + 1e-6);
  return r * gain;
}

inline int run_row_broadcast(kiln::Device dev) {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto k = capture_compare::kernels;
  // The original body on float64 copies.
  auto ref = [](auto f) {
    kiln::set_compiled_enabled(false);
    Tensor r = f().to(kiln::Device::cpu());
    kiln::set_compiled_enabled(true);
    return V{r};
  };
  auto f64 = [](const Tensor &t) {
    return t.dtype() == kiln::b8 ? t : t.to(kiln::f64);
  };
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16})
    // Short rows (a warp per row), long ones (a block per row, or re-read),
    // and few very long rows (split over blocks).
    for (kiln::Dims bh : {kiln::Dims{2, 3}, kiln::Dims{1, 2}})
      for (int64_t T : {int64_t(17), int64_t(300), int64_t(5000)}) {
        if (T == 5000 && bh[0] == 2)
          continue;
        const int64_t B = bh[0], H = bh[1];
        const std::string at = " [" + std::to_string(B) + ", " +
                               std::to_string(H) + ", " + std::to_string(T) + "]";
        Tensor s = input({B, H, T, T > 1000 ? 8 : T}, dt, 1);
        const int64_t C = s.sizes()[3];
        Tensor mask = input({T, C}, kiln::f32, 2) > -0.5;
        check("masked softmax" + at, dt,
              [&] { return V{masked_softmax(s, mask, 0.125)}; }, 1, 0, k(1),
              ref([&] { return masked_softmax(f64(s), mask, 0.125); }));
        Tensor bias = input({T, C}, dt, 3), hbias = input({H, T, C}, dt, 4);
        check("biased softmax" + at, dt,
              [&] { return V{biased_softmax(s, bias)}; }, 1, 0, k(1),
              ref([&] { return biased_softmax(f64(s), f64(bias)); }));
        check("per-head biased softmax" + at, dt,
              [&] { return V{biased_softmax(s, hbias)}; }, 1, 0, k(1),
              ref([&] { return biased_softmax(f64(s), f64(hbias)); }));
        Tensor h = input({1, H, 1, 1}, dt, 5);
        check("head-scaled softmax" + at, dt,
              [&] { return V{head_scaled_softmax(s, h)}; }, 1, 0, k(1),
              ref([&] { return head_scaled_softmax(f64(s), f64(h)); }));
        // Over dim -2 of [1, 2, 5000, 8] on a GPU, f32/f64 (8 neighbouring
        // rows, column mode): 2 blocks of columns, each split over 5 blocks
        // (colsplit): a launch per pass and a combine after each reduction.
        const bool colsplit = dev.is_cuda() && T == 5000 &&
                              (dt == kiln::DType::f32 || dt == kiln::DType::f64);
        check("head-scaled softmax over dim -2" + at, dt,
              [&] { return V{head_scaled_softmax_cols(s, h)}; }, 1, 0,
              k(colsplit ? 5 : 1),
              ref([&] { return head_scaled_softmax_cols(f64(s), f64(h)); }));
      }
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::bf16}) {
    Tensor x = input({3, 7, 96}, dt, 6), gain = input({3, 1, 96}, dt, 7);
    check("gained rms", dt, [&] { return V{gained_rms(x, gain)}; }, 1, 0, k(1),
          ref([&] { return gained_rms(x.to(kiln::f64), gain.to(kiln::f64)); }));
  }
  return capture_compare::summary();
}
