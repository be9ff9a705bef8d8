// Several outputs, compiled against eager on the CPU: std::pair, std::tuple
// and aggregates of tensors returned, Tensor& out-parameters, void
// functions, members assigned, and in-place updates of inputs and members
// (the result is copied back into their storage, so views see it as they
// do in eager code). Arguments that alias each other fail a guard and run
// the original body.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// A failed aliasing guard names the pair that aliases, and only that pair.
// RUN: env KILN_LOGS=guards %t 2>&1 | FileCheck --check-prefix=GUARD-%compiled %s
// GUARD-COMPILED-NOT: guard failed: {{.*}};
// GUARD-COMPILED: [kiln] out_params: guard failed: 's' and 'c' are one object
// GUARD-COMPILED-NOT: guard failed: {{.*}};
// GUARD-COMPILED: [kiln] axpy: guard failed: 'y' is updated in place and shares storage with 'x'
// GUARD-FORCED: guard failed: every guard fails (kiln::set_force_guard_failure, KILN_FORCE_GUARD_FAILURE)
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// An update in place then an assignment is one region, unless another
// name holds the updated tensor.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass=kiln %s 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK-DAG: remark: kiln: compiled 'handles_update': {{.*}}fused into 1 kernel
// REMARK-DAG: remark: kiln: compiled 'update_then_rebind': {{.*}}fused into 1 kernel
// REMARK-DAG: remark: kiln: compiled 'scale_add_exp': {{.*}}fused into 1 kernel
// REMARK-DAG: remark: kiln: 'update_keep_rebind' is compiled as two regions from here: assignment to 'x' after an in-place update of it in the same region, while another name holds the updated tensor, is not supported yet
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <tuple>
#include <utility>

using kiln::Tensor;

COMPILE std::pair<Tensor, Tensor> split(const Tensor &x) {
  Tensor a = kiln::relu(x);
  return {a, x - a};
}

COMPILE std::tuple<Tensor, Tensor, Tensor> three(const Tensor &x, double s) {
  return std::make_tuple(x * s, kiln::exp(x), x);
}

struct Moments {
  Tensor mean, spread;
};
COMPILE Moments moments(const Tensor &x) {
  Tensor m = kiln::mean(x, -1, true);
  Tensor d = x - m;
  return Moments{m, kiln::sqrt(kiln::mean(d * d, -1, true))};
}

COMPILE void out_params(const Tensor &x, Tensor &s, Tensor &c) {
  s = kiln::sin(x);
  c = kiln::cos(x) + s;
}

COMPILE Tensor out_and_return(const Tensor &x, Tensor &aux) {
  aux = x * 2;
  return aux + 1;
}

COMPILE void maybe_clamp(Tensor &y, bool skip) {
  if (skip)
    return;
  y = kiln::clamp(y, -0.5, 0.5);
}

// In place on parameters: the caller's storage is updated.
COMPILE void axpy(Tensor &y, const Tensor &x, double a) { y += x * a; }

COMPILE Tensor inplace_chain(Tensor x) {
  x *= 2.0;
  x += 1.0;
  return x;
}

// In place on a copy of the handle: the caller's tensor is updated.
COMPILE Tensor alias_update(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor a = x;
  a += 1;
  return a * y;
}

// Updated through handles of an argument: x and every handle see it, and
// the caller's tensor keeps it (a const Tensor & shares its elements too).
COMPILE Tensor handles_update(const Tensor &x, const Tensor &y) {
  Tensor t = x, u = x;
  t *= 2.0;
  u += y;
  return u * 2.0 + x;
}

// A lambda's copy of a handle shares the elements: an update in place
// after the lambda was made is what the lambda reads (the copy of a tensor
// the region made kept its old value before 2026-11-29).
COMPILE Tensor closure_sees_update(const Tensor &x) {
  Tensor t = x * 2.0;
  auto g = [t]() { return t * 3.0; };
  t += 1.0;
  return g();
}

// Updated in place, then assigned: the caller's tensor (and every handle
// of its storage) keeps the update, the reference names the new value.
COMPILE Tensor update_then_rebind(Tensor &x, const Tensor &y) {
  x += y;
  x = x * 2.0;
  return x + 1.0;
}
COMPILE void scale_add_exp(Tensor &x, const Tensor &y) {
  x *= 0.5;
  x += y;
  x = kiln::exp(x);
}
// Another name holds the updated tensor when x is assigned: a split (its
// value would be handed out as a new tensor, not as the caller's).
COMPILE Tensor update_keep_rebind(Tensor &x, const Tensor &y) {
  x += y;
  Tensor r = x;
  x = x * 2.0;
  return r;
}

// A member assigned and a member updated in place.
struct Momentum {
  Tensor w, m;
  double lr = 0.1;
  COMPILE void step(const Tensor &g) {
    m = m * 0.9 + g * 0.1;
    w -= m * lr;
  }
};

int main() {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({4, 6}, dt, 1), row = input({1, 6}, dt, 2);
    check("pair", dt, [&] {
      auto [a, b] = split(x);
      return V{a, b};
    });
    check("tuple", dt, [&] {
      auto [a, b, c] = three(x, 0.5);
      return V{a, b, c};
    });
    check("aggregate", dt, [&] {
      Moments m = moments(x);
      return V{m.mean, m.spread};
    });
    check("out params", dt, [&] {
      Tensor s, c;
      out_params(x, s, c);
      return V{s, c};
    });
    check("out params alias", dt, [&] {
      Tensor t;
      out_params(x, t, t); // one object twice: guarded
      return V{t};
    }, 0, 1);
    check("out and return", dt, [&] {
      Tensor aux;
      Tensor r = out_and_return(x, aux);
      return V{r, aux};
    });
    check("out and return, same object", dt, [&] {
      Tensor t = x.clone();
      Tensor r = out_and_return(t, t); // read before written: no guard
      return V{r, t};
    });
    check("void early return", dt, [&] {
      Tensor y = x.clone();
      maybe_clamp(y, true);
      Tensor z = x.clone();
      maybe_clamp(z, false);
      return V{y, z};
    }, 1);
    check("axpy", dt, [&] {
      Tensor y = input({4, 6}, dt, 3);
      Tensor view = y.slice(0, 1, 3); // shares y's storage
      axpy(y, x, 0.5);
      return V{y, view};
    });
    check("axpy broadcast", dt, [&] {
      Tensor y = input({4, 6}, dt, 3);
      axpy(y, row, -2.0);
      return V{y};
    });
    check("axpy aliased", dt, [&] {
      Tensor y = input({4, 6}, dt, 3);
      axpy(y, y, 0.5); // same storage: guarded
      return V{y};
    }, 0, 1);
    check("axpy aliased view", dt, [&] {
      Tensor y = input({4, 6}, dt, 3);
      Tensor part = y.slice(0, 0, 1);
      axpy(y, part, 0.5);
      return V{y};
    }, 0, 1);
    check("inplace chain", dt, [&] {
      Tensor y = input({4, 6}, dt, 4);
      Tensor r = inplace_chain(y); // the caller's y is updated too
      return V{r, y};
    });
    check("alias update", dt, [&] {
      Tensor y = input({4, 6}, dt, 7);
      Tensor r = alias_update(y);
      return V{r, y};
    });
    check("handles update", dt, [&] {
      Tensor y = input({4, 6}, dt, 11), held = y;
      Tensor r = handles_update(y, row);
      return V{r, y, held};
    });
    check("handles update, aliased", dt, [&] {
      Tensor y = input({4, 6}, dt, 11);
      Tensor r = handles_update(y, y); // y is read after its update: guarded
      return V{r, y};
    }, 0, 1);
    check("closure sees update", dt,
          [&] { return V{closure_sees_update(x)}; });
    check("update then rebind", dt, [&] {
      Tensor y = input({4, 6}, dt, 8), held = y;
      Tensor r = update_then_rebind(y, row);
      return V{r, y, held};
    });
    check("scale, add, exp", dt, [&] {
      Tensor y = input({4, 6}, dt, 9), held = y;
      scale_add_exp(y, x);
      return V{y, held};
    });
    check("update, keep, rebind", dt, [&] {
      Tensor y = input({4, 6}, dt, 10), held = y;
      Tensor r = update_keep_rebind(y, x);
      r += 1.0; // r is the caller's tensor: held sees it
      return V{r, y, held};
    }, 2);
    check("member step", dt, [&] {
      Momentum opt{input({4, 6}, dt, 5), input({4, 6}, dt, 6), 0.25};
      Tensor w_before = opt.w; // shares storage: sees the update
      opt.step(x);
      opt.step(x * 0.5);
      return V{opt.w, opt.m, w_before};
    }, 2);
  }
  return capture_compare::summary();
}
