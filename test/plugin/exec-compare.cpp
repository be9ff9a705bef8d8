// Compiled against eager, on the CPU, over dtypes, broadcasting, strided
// inputs, scalar arguments and the capture's forms (locals, reassignment,
// operators, Operand arguments, scalar arithmetic, members, namespaces).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// Built at -O0 the generated loops are still optimised and still agree.
// RUN: %kiln_cxx -O0 -g -c -fplugin-arg-kiln-cuda=off %s -o %t.O0.o
// RUN: %kiln_cxx_eager %t.O0.o %kiln_link -o %t.O0 && %t.O0 | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "exec_compare.h"

#include <utility>

using kiln::Tensor;

[[kiln::compile]] Tensor sin_plus_cos(const Tensor &x, const Tensor &y) {
  Tensor a = kiln::sin(x);
  auto b = kiln::cos(y);
  return a + b;
}

[[kiln::compile]] Tensor scaled_clamp(Tensor x, double alpha, long n) {
  double lo = -alpha * 2.0;
  return kiln::clamp(x * alpha, lo, n) - 1;
}

[[kiln::compile]] Tensor activations(const Tensor &x) {
  Tensor y = kiln::gelu(x) + kiln::gelu(x, "tanh");
  y = y * kiln::sigmoid(x) + kiln::silu(x);
  return kiln::relu(y) - kiln::tanh(-x);
}

[[kiln::compile]] Tensor select(const Tensor &x, const Tensor &y, double t) {
  return kiln::where(x > t, x * y, kiln::maximum(x, y)) / 2.0;
}

[[kiln::compile]] Tensor mixed(const Tensor &x, const Tensor &y, int k) {
  const Tensor &p = x;
  Tensor q = kiln::pow(kiln::abs(p) + 1.0, 2) * k;
  return kiln::where(p <= y, q, 3.0) + kiln::minimum(p, 0.25) * (k + 0.5);
}

[[kiln::compile]] Tensor transcendental(const Tensor &x) {
  Tensor a = kiln::abs(x) + 0.5;
  return kiln::log(a) + kiln::sqrt(a) + kiln::rsqrt(a) + kiln::exp(-a) +
         kiln::erf(x) + kiln::reciprocal(a) + kiln::tan(x * 0.3);
}

// Assignment rebinds a name (a by-value parameter too); the caller's
// tensor is untouched.
[[kiln::compile]] Tensor rebind(Tensor x, const Tensor &y) {
  Tensor t = x * y;
  x = t + 1.0;
  t = kiln::exp(-x);
  return std::move(t) + x;
}

namespace model {
struct Layer {
  double scale = 0.5;
  [[kiln::compile]] static Tensor act(const Tensor &x, double s) {
    return kiln::gelu(x) * s;
  }
  [[kiln::compile]] Tensor bias(const Tensor &x, const Tensor &b) const {
    return x + b;
  }
};
} // namespace model

static Tensor input(kiln::Dims shape, kiln::DType dt, uint64_t seed) {
  kiln::manual_seed(seed);
  return kiln::randn(shape, kiln::DType::f32).to(dt);
}

int main() {
  using exec_compare::check;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({3, 5}, dt, 1), y = input({3, 5}, dt, 2);
    Tensor col = input({3, 1}, dt, 3), row = input({1, 5}, dt, 4);
    Tensor big = input({257, 33}, dt, 5);
    Tensor strided = input({5, 3}, dt, 6).transpose(0, 1);
    check("sin_plus_cos", dt, [&] { return sin_plus_cos(x, y); });
    check("sin_plus_cos broadcast", dt, [&] { return sin_plus_cos(col, row); });
    check("sin_plus_cos strided", dt, [&] { return sin_plus_cos(strided, x); });
    check("sin_plus_cos big", dt, [&] { return sin_plus_cos(big, big); });
    check("scaled_clamp", dt, [&] { return scaled_clamp(x, 0.75, 1); });
    check("scaled_clamp big", dt, [&] { return scaled_clamp(big, 2.5, 3); });
    check("activations", dt, [&] { return activations(big); });
    check("select", dt, [&] { return select(x, y, 0.1); });
    check("select broadcast", dt, [&] { return select(col, row, -0.2); });
    check("mixed", dt, [&] { return mixed(x, y, 3); });
    check("transcendental", dt, [&] { return transcendental(big); });
    check("rebind", dt, [&] { return rebind(x, y); });
    check("rebind broadcast", dt, [&] { return rebind(col, row); });
    check("static member", dt, [&] { return model::Layer::act(x, 1.5); });
    check("member", dt, [&] { return model::Layer{}.bias(x, row); });
  }
  // Not a dtype the fast path was built for: the original body runs.
  Tensor xi = kiln::arange(6, kiln::DType::i32);
  check("sin_plus_cos i32", kiln::DType::i32,
        [&] { return sin_plus_cos(xi, xi); }, /*expect_compiled=*/false);
  return exec_compare::summary();
}
