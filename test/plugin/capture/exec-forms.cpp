// The capture's forms, compiled against eager on the CPU over dtypes:
// locals, auto, references, reassignment and compound assignment in
// unrolled loops, scalar parameters and locals, inlined helpers and
// lambdas, compile-time branches, branches on host scalars
// (specialisations), members and methods, tensor methods. Each case checks
// that its fast paths ran (and how many).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// The same with every fast path running the captured graph op by op.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <utility>

using kiln::Tensor;

// Locals, auto, a const reference, reassignment in an unrolled loop.
COMPILE Tensor locals(const Tensor &x) {
  auto y = x;
  for (int i = 0; i < 3; ++i)
    y = kiln::sin(y) + kiln::cos(y);
  const auto &z = y;
  Tensor w = z * 0.5;
  return w - z;
}

// Compound assignment on a local updates its storage: a copy of the handle
// sees it, a value computed before does not.
COMPILE Tensor accumulate(const Tensor &x, const Tensor &y) {
  Tensor acc = x * 0.0;
  for (int i = 1; i <= 4; ++i) {
    acc += y * i;
    acc *= 0.5;
  }
  Tensor before = acc * 1.0;
  Tensor alias = acc;
  acc -= x;
  return acc + alias + before;
}

// Scalar parameters and locals are runtime values; compile-time ones fold.
COMPILE Tensor scalars(const Tensor &x, double alpha, long n) {
  double a2 = alpha * 2.0;
  long m = n + 3;
  a2 += 1;
  m *= 2;
  const int k = 7;
  unsigned u = 5u - 7u; // wraps as C++ does, at compile time
  return x * a2 - m + k + double(u % 8u);
}

// Visible helpers are inlined: static and inline functions, lambdas
// (captures by copy keep the value they had), another compiled function.
static Tensor swish(const Tensor &t, double beta) {
  return t * kiln::sigmoid(t * beta);
}
COMPILE Tensor decay(const Tensor &x) { return kiln::exp(-x); }
inline Tensor twice(Tensor t) {
  t = t + t;
  return t;
}
template <class T> Tensor scale_by(const Tensor &x, T s) { return x * s; }
COMPILE Tensor helpers(const Tensor &x, double beta) {
  double k = 0.25;
  auto sq = [](const Tensor &t) { return t * t; };
  auto scale = [k](const Tensor &t) { return t * k; };
  auto shift = [&](const Tensor &t) { return t + beta * k; };
  k = 4.0;
  auto apply = [](auto f, const Tensor &t) { return f(t); };
  return swish(sq(x), beta) + scale(decay(x)) + apply(shift, twice(x)) +
         scale_by(x, 3);
}

// Loops with compile-time trip counts unroll: for, while, do, nested,
// break and continue on known conditions.
COMPILE Tensor loops(const Tensor &x) {
  constexpr int kSteps = 3;
  Tensor y = x;
  for (int i = 0; i < kSteps; ++i) {
    for (int j = i; j < kSteps; ++j)
      y = y * 0.9 + 0.1 * j;
    if (i == 1)
      continue;
    y = kiln::tanh(y);
  }
  int k = 0;
  while (k < 10) {
    if (k == 4)
      break;
    y = y + k;
    ++k;
  }
  do {
    y = y * 0.5;
    k -= 2;
  } while (k > 0);
  // Conditions that update their counter.
  int j = 0;
  while (j++ < 2)
    y = y + j;
  for (;;) {
    y = y * 1.5;
    if (++j == 5)
      break;
  }
  return y;
}

// if constexpr and conditions on constants take one arm.
template <int N> constexpr bool is_even = N % 2 == 0;
COMPILE Tensor constant_branches(const Tensor &x) {
  Tensor y = x;
  if constexpr (is_even<4>)
    y = kiln::relu(y);
  else
    y = -y;
  const int mode = 2;
  if (mode == 2 && sizeof(double) == 8)
    y = y * 3.0;
  else
    y = kiln::exp(y);
  return mode > 1 ? y : x;
}

// Branches on host scalars: one specialisation per branch taken, picked
// when the region starts.
COMPILE Tensor specialised(const Tensor &x, bool flag, int n) {
  Tensor y = kiln::sin(x);
  if (flag)
    y = kiln::relu(y);
  else
    y = y * -2.0;
  if (n > 2 && flag)
    return y + n;
  if (!flag)
    y = y + 1;
  return y;
}

// Shape queries are guards too.
COMPILE Tensor by_rank(const Tensor &x) {
  if (x.dim() == 1)
    return kiln::softmax(x, 0);
  return kiln::softmax(x, -1) * x.size(0);
}

// Members: member tensors and scalars are inputs, methods are inlined, on
// `this` and on members.
struct Linear {
  Tensor w, b;
  double scale = 0.5;
  Tensor act(const Tensor &t) const { return kiln::gelu(t); }
  COMPILE Tensor forward(const Tensor &x) const {
    return act(x * w + b) * scale;
  }
};
struct Model {
  Linear l1, l2;
  COMPILE Tensor forward(const Tensor &x) const {
    return l2.forward(l1.forward(x)) + this->l1.b;
  }
};

// Tensor methods: clone() has its own storage, contiguous() may not,
// sizes are runtime scalars.
COMPILE Tensor methods(const Tensor &x) {
  Tensor c = x.clone();
  c += 1.0;
  Tensor t = x.contiguous();
  return c * t / x.size(-1) + x.numel();
}

// Returning a pair made by a helper, taken apart by structured bindings.
static std::pair<Tensor, Tensor> halves(const Tensor &x) {
  return {x * 0.5, x - 0.5};
}
COMPILE Tensor bindings(const Tensor &x) {
  auto [a, b] = halves(x);
  auto p = std::make_pair(a, b);
  return std::get<0>(p) * p.second;
}

int main() {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({3, 5}, dt, 1), y = input({3, 5}, dt, 2);
    Tensor row = input({1, 5}, dt, 3), big = input({67, 33}, dt, 4);
    Tensor v = input({7}, dt, 5);
    check("locals", dt, [&] { return V{locals(x)}; });
    check("locals big", dt, [&] { return V{locals(big)}; });
    check("accumulate", dt, [&] { return V{accumulate(x, y)}; });
    check("accumulate broadcast", dt, [&] { return V{accumulate(x, row)}; });
    check("scalars", dt, [&] { return V{scalars(x, 0.75, 4)}; });
    check("helpers", dt, [&] { return V{helpers(x, 1.5)}; });
    check("loops", dt, [&] { return V{loops(x)}; });
    check("constant_branches", dt, [&] { return V{constant_branches(x)}; });
    check("specialised t 3", dt, [&] { return V{specialised(x, true, 3)}; });
    check("specialised t 1", dt, [&] { return V{specialised(x, true, 1)}; });
    check("specialised f 3", dt, [&] { return V{specialised(x, false, 3)}; });
    check("by_rank 1", dt, [&] { return V{by_rank(v)}; });
    check("by_rank 2", dt, [&] { return V{by_rank(big)}; });
    Linear lin{input({5}, dt, 6), input({5}, dt, 7), 0.25};
    check("member", dt, [&] { return V{lin.forward(x)}; });
    Model m{{input({5}, dt, 8), input({5}, dt, 9)},
            {input({1, 5}, dt, 10), input({3, 1}, dt, 11)}};
    check("members of members", dt, [&] { return V{m.forward(x)}; });
    check("methods", dt, [&] { return V{methods(x)}; });
    check("bindings", dt, [&] { return V{bindings(x)}; });
  }
  return capture_compare::summary();
}
