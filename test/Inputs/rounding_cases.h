// Rounding ops on tensors (kiln::floor, ceil, trunc, round: halves to
// even, as torch.round), fused with the arithmetic around them: compiled
// vs eager in every floating dtype, against exact values where halves tie,
// and on integer tensors (where each is the identity, as torch's). fmod
// (the remainder with the dividend's sign) and atan2 with them.
#pragma once

#include "capture_compare.h"

#include <vector>

using kiln::Tensor;

COMPILE Tensor rounded_sum(const Tensor &x) {
  return kiln::floor(x * 3.0) + 2 * kiln::ceil(x - 0.5) + 4 * kiln::trunc(-x * 2.0) +
         8 * kiln::round(x * 4.0);
}
// Exact halves: round to even (0.5 -> 0, 1.5 -> 2, -2.5 -> -2), trunc
// toward zero.
COMPILE Tensor halves(const Tensor &x) { return kiln::round(x) * 10 + kiln::trunc(x); }
// Fake quantisation to int8's range, as quantisation-aware code writes it:
// a per-row scale, round, clamp, scale back.
COMPILE Tensor fake_quant(const Tensor &x) {
  Tensor s = kiln::amax(kiln::abs(x), -1, true) / 127.0;
  return kiln::clamp(kiln::round(x / s), -128.0, 127.0) * s;
}
// Phase wrapping as signal code writes it: the angle of (y, x), wrapped
// into [0, 2 pi) by fmod, plus the remainder of x by a per-column period.
COMPILE Tensor wrapped(const Tensor &y, const Tensor &x, const Tensor &p) {
  Tensor a = kiln::fmod(kiln::atan2(y, x) + 6.283185307179586, 6.283185307179586);
  return a + kiln::fmod(x * 10.0, p);
}
// fmod of integers: C++'s `%` (the dividend's sign), 0 for a zero divisor.
COMPILE Tensor int_fmod([[kiln::dtype("i64", "i32")]] const Tensor &n,
                        [[kiln::dtype("i64", "i32")]] const Tensor &d) {
  return kiln::fmod(n, d) + kiln::fmod(n, 7);
}
COMPILE Tensor int_rounding([[kiln::dtype("i64", "i32")]] const Tensor &n) {
  return kiln::floor(n) * 2 + kiln::round(n) - kiln::ceil(n) + kiln::trunc(n);
}

inline int run_rounding(kiln::Device dev) {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({33, 257}, dt, 1, dev);
    check("rounded_sum", dt, [&] { return V{rounded_sum(x)}; }, 1, 0, 1);
    // x / s of a 16-bit x rounds differently eager (s rounded to x's dtype
    // first) and compiled, and round() turns that into a step of s.
    if (dt == kiln::DType::f32 || dt == kiln::DType::f64)
      check("fake_quant", dt, [&] { return V{fake_quant(x)}; }, 1, 0, 1);
    const std::vector<double> h = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.25, -3.75, 0.0, 7.5};
    const std::vector<double> want = {0, 21, 22, 0, -21, -22, 33, -43, 0, 87};
    Tensor th = kiln::from_vector(h, {int64_t(h.size())}, dev).to(dt);
    Tensor y = input({33, 257}, dt, 4, dev), p = input({257}, dt, 5, dev) + 3.0;
    check("wrapped", dt, [&] { return V{wrapped(y, x, p)}; }, 1, 0, 1);
    check("halves", dt, [&] { return V{halves(th)}; }, 1, 0, 1);
    Tensor got = halves(th).to(kiln::Device::cpu()).to(kiln::DType::f64);
    const std::vector<double> g = got.to_vector<double>();
    if (g != want) {
      ++capture_compare::g_mismatches;
      std::printf("MISMATCH halves [%s]: not halves to even\n", kiln::dtype_name(dt));
    }
  }
  for (kiln::DType dt : {kiln::DType::i64, kiln::DType::i32}) {
    Tensor n = (input({7, 65}, kiln::DType::f32, 3, dev) * 100.0).to(dt);
    check("int_rounding", dt, [&] { return V{int_rounding(n)}; }, 1, 0, 1);
    Tensor d = (input({65}, kiln::DType::f32, 4, dev) * 9.0).to(dt);
    check("int_fmod", dt, [&] { return V{int_fmod(n, d)}; }, 1, 0, 1);
    const std::vector<int64_t> nv = {-7, 7, -8, 9, 5, -5, 0, 13};
    const std::vector<int64_t> dv = {2, -2, 3, 0, -1, 3, 4, -5};
    Tensor tn = kiln::from_vector(std::vector<double>(nv.begin(), nv.end()), {8}, dev).to(dt);
    Tensor td = kiln::from_vector(std::vector<double>(dv.begin(), dv.end()), {8}, dev).to(dt);
    std::vector<double> want;
    for (size_t i = 0; i < nv.size(); ++i)
      want.push_back(double((dv[i] == 0 ? 0 : nv[i] % dv[i]) + nv[i] % 7));
    if (int_fmod(tn, td).to(kiln::Device::cpu()).to(kiln::DType::f64).to_vector<double>() !=
        want) {
      ++capture_compare::g_mismatches;
      std::printf("MISMATCH int_fmod [%s]: not C++'s %%\n", kiln::dtype_name(dt));
    }
    Tensor r = int_rounding(n).to(kiln::Device::cpu());
    const bool same = r.dtype() == dt &&
                      r.to(kiln::DType::f64).to_vector<double>() ==
                          (n.to(kiln::Device::cpu()).to(kiln::DType::f64) * 3.0).to_vector<double>();
    if (!same) {
      ++capture_compare::g_mismatches;
      std::printf("MISMATCH int_rounding [%s]: not the identity\n", kiln::dtype_name(dt));
    }
  }
  return capture_compare::summary();
}
