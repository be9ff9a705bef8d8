// The cases of test/plugin/capture/exec-templates*.cpp: [[kiln::compile]]
// on function templates (each instantiation compiled on its own), members
// of class templates, member templates, explicit specialisations,
// abbreviated templates, and lambdas (captures by copy, by reference, of
// `this`, init-captures, generic and mutable lambdas, a lambda in a
// template). Compiled against eager on one device over every variant, each
// call proven to run its fast path and counted in kernels.
#pragma once

#include "capture_compare.h"

#include <cstdint>
#include <functional>

using kiln::Tensor;

// A non-type parameter is a constant of each instantiation.
template <int N> COMPILE Tensor poly(const Tensor &x) {
  return kiln::sin(x) * double(N) + double(N * N);
}

// A type parameter: the scalar's C++ type differs per instantiation (int
// arithmetic truncates before it meets the tensor).
template <class T> COMPILE Tensor scale_by(const Tensor &x, T s) {
  return x * (s / T(2)) + kiln::exp(x * 0.5);
}

// An explicit specialisation is an ordinary function.
template <class Kind> Tensor activation(const Tensor &x);
struct Gelu;
template <> COMPILE Tensor activation<Gelu>(const Tensor &x) {
  return kiln::gelu(x) + x;
}

// A member of a class template, reading a member and the template argument.
template <int Heads> struct Head {
  double scale;
  COMPILE Tensor operator()(const Tensor &q) const {
    return kiln::softmax(q * scale, -1) * double(Heads);
  }
};

// A member template of a class: one kernel per instantiation.
struct Norm {
  Tensor w;
  template <bool Shift> COMPILE Tensor apply(const Tensor &x) const {
    Tensor y = kiln::rms_norm(x, w, 1e-5);
    if constexpr (Shift)
      return y + 1.0;
    else
      return y;
  }
};

// An abbreviated template: `auto` parameters, a tensor or a scalar.
COMPILE Tensor mix(const Tensor &a, const auto &b) { return kiln::tanh(a) * b - b; }

// A compiled template called by a compiled function: inlined there (one
// kernel for both), and compiled on its own where called directly.
COMPILE Tensor calls_poly(const Tensor &x) { return poly<3>(x) * x; }

// A lambda in a function template, capturing the template's scalar.
template <class T> Tensor with_lambda(const Tensor &x, T t) {
  auto f = [t] [[kiln::compile(BACKEND)]] (const Tensor &y) {
    return kiln::exp(y) * t;
  };
  return f(x);
}

// `this` captured by a lambda written in a method.
struct Scaler {
  Tensor w;
  double k;
  Tensor run(const Tensor &x) const {
    auto f = [this] [[kiln::compile(BACKEND)]] (const Tensor &y) {
      return kiln::sigmoid(y * w) * k;
    };
    return f(x);
  }
};

// A lambda in a default member initialiser, capturing `this`.
struct Bias {
  Tensor b;
  std::function<Tensor(const Tensor &)> add =
      [this] [[kiln::compile(BACKEND)]] (const Tensor &x) { return x + b * 2.0; };
};

// A lambda as a default argument.
inline Tensor apply_fn(const Tensor &x,
                       Tensor (*f)(const Tensor &) =
                           [] [[kiln::compile(BACKEND)]] (const Tensor &y) {
                             return kiln::relu(y) - 0.5;
                           }) {
  return f(x);
}

// A compiled lambda called by a compiled function: inlined there.
COMPILE Tensor calls_lambda(const Tensor &x) {
  auto inner = [] [[kiln::compile(BACKEND)]] (const Tensor &y) {
    return kiln::exp(y);
  };
  return inner(x) * 2.0 + inner(x * 0.5);
}

inline int run_templates(kiln::Device dev) {
  using capture_compare::check;
  using capture_compare::input;
  using capture_compare::kernels;
  using V = std::vector<Tensor>;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({6, 33}, dt, 1, dev), y = input({6, 33}, dt, 2, dev);
    Tensor w = input({33}, dt, 3, dev);
    check("poly<2>", dt, [&] { return V{poly<2>(x)}; }, 1, 0, kernels(1));
    check("poly<5>", dt, [&] { return V{poly<5>(x)}; }, 1, 0, kernels(1));
    check("scale_by<double>", dt, [&] { return V{scale_by(x, 3.0)}; }, 1, 0,
          kernels(1));
    check("scale_by<int64_t>", dt, [&] { return V{scale_by(x, int64_t(3))}; },
          1, 0, kernels(1));
    check("activation<Gelu>", dt, [&] { return V{activation<Gelu>(x)}; }, 1, 0,
          kernels(1));
    check("Head<4>", dt, [&] { return V{Head<4>{0.25}(x)}; }, 1, 0, kernels(1));
    check("Head<8>", dt, [&] { return V{Head<8>{2.0}(x)}; }, 1, 0, kernels(1));
    Norm norm{w};
    check("Norm::apply<true>", dt, [&] { return V{norm.apply<true>(x)}; }, 1, 0,
          kernels(1));
    check("Norm::apply<false>", dt, [&] { return V{norm.apply<false>(x)}; }, 1,
          0, kernels(1));
    check("mix(tensor)", dt, [&] { return V{mix(x, y)}; }, 1, 0, kernels(1));
    check("mix(double)", dt, [&] { return V{mix(x, 1.5)}; }, 1, 0, kernels(1));
    check("calls_poly", dt, [&] { return V{calls_poly(x)}; }, 1, 0, kernels(1));
    check("with_lambda<double>", dt, [&] { return V{with_lambda(x, 0.5)}; }, 1,
          0, kernels(1));
    check("with_lambda<int>", dt, [&] { return V{with_lambda(x, 3)}; }, 1, 0,
          kernels(1));
    Scaler scaler{w, 1.5};
    check("Scaler::run lambda", dt, [&] { return V{scaler.run(x)}; }, 1, 0,
          kernels(1));

    Bias bias{y};
    check("lambda in a member initialiser", dt, [&] { return V{bias.add(x)}; },
          1, 0, kernels(1));
    check("lambda as a default argument", dt, [&] { return V{apply_fn(x)}; }, 1,
          0, kernels(1));
    check("calls_lambda", dt, [&] { return V{calls_lambda(x)}; }, 1, 0,
          kernels(1));

    // Lambdas in this function.
    auto plain = [] [[kiln::compile(BACKEND)]] (const Tensor &a) {
      return kiln::cos(a) * 2.0;
    };
    check("lambda", dt, [&] { return V{plain(x)}; }, 1, 0, kernels(1));
    double s = 0.5;
    auto by_copy = [s] [[kiln::compile(BACKEND)]] (const Tensor &a) {
      return kiln::sin(a) * s;
    };
    auto by_ref = [&] [[kiln::compile(BACKEND)]] (const Tensor &a) {
      return kiln::sin(a) * s + y;
    };
    auto init = [t = 2 * s, b = y * 2.0] [[kiln::compile(BACKEND)]] (const Tensor &a) {
      return a * t + b;
    };
    s = 4.0; // the copy keeps 0.5; the reference reads 4
    check("lambda [s]", dt, [&] { return V{by_copy(x)}; }, 1, 0, kernels(1));
    check("lambda [&]", dt, [&] { return V{by_ref(x)}; }, 1, 0, kernels(1));
    check("lambda [t = 2 * s, b = y * 2]", dt, [&] { return V{init(x)}; }, 1, 0,
          kernels(1));
    auto generic = [] [[kiln::compile(BACKEND)]] (const auto &a, auto k) {
      return kiln::tanh(a) * k;
    };
    check("generic lambda (double)", dt, [&] { return V{generic(x, 2.5)}; }, 1,
          0, kernels(1));
    check("generic lambda (int)", dt, [&] { return V{generic(x, 3)}; }, 1, 0,
          kernels(1));
    // A mutable lambda updating its own copy: each call sees the last.
    auto counter = [acc = x * 0.0] [[kiln::compile(BACKEND)]] (const Tensor &a) mutable {
      acc = acc + a;
      return acc * 2.0;
    };
    check("mutable lambda", dt, [&] {
      auto c = counter;
      Tensor first = c(x);
      return V{first, c(y)};
    }, 2, 0, kernels(2));
  }
  return capture_compare::summary();
}
