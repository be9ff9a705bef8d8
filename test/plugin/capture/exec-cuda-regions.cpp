// The capture's regions on a CUDA GPU, compiled against eager: graph breaks
// between regions, specialisations, in-place updates copied back into
// device storage (and their aliasing guard), members, several outputs.
// REQUIRES: cuda-gpu, nvcc
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../../Inputs/capture_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <utility>

using kiln::Tensor;

void opaque_log(const Tensor &);
Tensor opaque_scale(const Tensor &x);

[[kiln::compile]] Tensor around_call(const Tensor &x, double a) {
  Tensor y = kiln::sin(x) * a;
  opaque_log(y);
  Tensor z = opaque_scale(y);
  return kiln::cos(z) * 2 + y;
}

[[kiln::compile]] Tensor specialised(const Tensor &x, bool flag, int n) {
  Tensor y = kiln::softmax(x, -1);
  if (flag)
    y = y * n;
  for (int i = 0; i < n; ++i)
    y = y + kiln::tanh(y);
  return y;
}

[[kiln::compile]] void axpy(Tensor &y, const Tensor &x, double a) {
  y += x * a;
}

[[kiln::compile]] std::pair<Tensor, Tensor> split(const Tensor &x) {
  Tensor a = kiln::relu(x);
  return {a, kiln::sum(x - a, -1, true)};
}

struct Momentum {
  Tensor w, m;
  double lr = 0.1;
  [[kiln::compile]] void step(const Tensor &g) {
    m = m * 0.9 + g * 0.1;
    w -= m * lr;
  }
};

int main() {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  const kiln::Device gpu = kiln::Device::cuda(0);
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({64, 129}, dt, 1, gpu), row = input({1, 129}, dt, 2, gpu);
    check("around_call", dt, [&] { return V{around_call(x, 0.5)}; }, 2);
    // One region before the loop (specialised on `flag`), then one per
    // iteration of the loop, whose trip count is a runtime value.
    check("specialised t", dt, [&] { return V{specialised(x, true, 2)}; }, 3);
    check("specialised f", dt, [&] { return V{specialised(x, false, 3)}; }, 4);
    check("axpy", dt, [&] {
      Tensor y = input({64, 129}, dt, 3, gpu);
      Tensor view = y.slice(0, 3, 9);
      axpy(y, row, 0.5);
      return V{y, view};
    });
    check("axpy aliased", dt, [&] {
      Tensor y = input({64, 129}, dt, 3, gpu);
      axpy(y, y, 0.5);
      return V{y};
    }, 0, 1);
    check("split", dt, [&] {
      auto [a, b] = split(x);
      return V{a, b};
    });
    check("member step", dt, [&] {
      Momentum opt{input({64, 129}, dt, 4, gpu), input({64, 129}, dt, 5, gpu),
                   0.25};
      opt.step(x);
      return V{opt.w, opt.m};
    });
  }
  return capture_compare::summary();
}
