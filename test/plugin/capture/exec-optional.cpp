// Optional tensors: a norm's weight or bias may be undefined, as the
// runtime's layer_norm and rms_norm accept. A tensor argument gets one
// specialisation per definedness, chosen by a guard on `w.defined()`; a
// `Tensor()` written in the call is absent at compile time. A local
// `Tensor t;` is undefined until assigned: defined() of it is known, and
// it may be passed as an optional argument. Compiled against eager on the
// CPU, each call one fused kernel.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// The four specialisations of layer_norm's weight and bias, at its line.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass=kiln %s 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK-COUNT-4: exec-optional.cpp:[[@LINE+14]]:{{[0-9]+}}: remark: kiln: compiled 'layer_norm_opt (region 1, specialisation {{[1-4]}})'
// A use of a local before it has a value ends the region there.
// REMARK: exec-optional.cpp:[[@LINE+73]]:14: remark: kiln: 'use_unassigned' is compiled as two regions from here: 'g' is undefined here (default-constructed, no value assigned on this path); of an undefined tensor only assignment, defined() and optional arguments are captured, so this runs eagerly
// REMARK: exec-optional.cpp:[[@LINE+77]]:3: remark: kiln: graph break in 'reset_param': 'x' is left undefined (assigned Tensor()) and used after the compiled region (not supported yet)
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <cstring>

using kiln::Tensor;

COMPILE Tensor layer_norm_opt(const Tensor &x, const Tensor &w,
                              const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}

COMPILE Tensor rms_norm_opt(const Tensor &x, const Tensor &w) {
  return kiln::rms_norm(x, w, 1e-5) * 2;
}

COMPILE Tensor layer_norm_plain(const Tensor &x) {
  return kiln::layer_norm(x, Tensor(), kiln::Tensor{}, 1e-5);
}

// Locals declared without a value.
COMPILE Tensor pick(const Tensor &x, bool flag) {
  Tensor out;
  if (flag)
    out = x * 2.0;
  else
    out = x + 1.0;
  return kiln::exp(out);
}

COMPILE Tensor accumulate(const Tensor &x, const Tensor &y) {
  Tensor acc;
  for (int i = 0; i < 3; ++i) {
    Tensor t = x * double(i + 1);
    if (!acc.defined())
      acc = t;
    else
      acc = acc + t;
  }
  return acc + y;
}

COMPILE Tensor maybe_bias(const Tensor &x, const Tensor &b, bool use) {
  Tensor bias;
  if (use)
    bias = b * 0.5;
  Tensor y = x * 3.0;
  if (bias.defined())
    y = y + bias;
  return kiln::relu(y);
}

COMPILE Tensor local_norm_args(const Tensor &x) {
  Tensor w;
  Tensor b = Tensor();
  return kiln::layer_norm(x, w, b, 1e-5);
}

COMPILE Tensor reset_local(const Tensor &x) {
  Tensor y = x * 2.0;
  Tensor z = y + 1.0;
  z = Tensor();
  if (z.defined())
    return z;
  return y * 3.0;
}

COMPILE Tensor use_unassigned(const Tensor &x) {
  Tensor g;
  Tensor y = x * 2.0;
  return y + g;
}

COMPILE Tensor reset_param(Tensor &x) {
  Tensor y = x * 2.0;
  x = Tensor();
  return y;
}

int main() {
  using capture_compare::check;
  using capture_compare::input;
  using capture_compare::kernels;
  using V = std::vector<Tensor>;
  bool eager_backend = std::strcmp(BACKEND, "backend=eager") == 0;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({7, 96}, dt, 1), w = input({96}, dt, 2),
           b = input({96}, dt, 3), none;
    for (const Tensor *wt : {&w, &none})
      for (const Tensor *bt : {&b, &none}) {
        std::string name = std::string("layer_norm_opt w ") +
                           (wt->defined() ? "yes" : "no") + " b " +
                           (bt->defined() ? "yes" : "no");
        check(name, dt, [&] { return V{layer_norm_opt(x, *wt, *bt)}; }, 1, 0, 1);
      }
    for (const Tensor *wt : {&w, &none})
      check(std::string("rms_norm_opt w ") + (wt->defined() ? "yes" : "no"), dt,
            [&] { return V{rms_norm_opt(x, *wt)}; }, 1, 0, eager_backend ? 2 : 1);
    check("layer_norm_plain", dt, [&] { return V{layer_norm_plain(x)}; }, 1, 0, 1);
    for (bool flag : {true, false}) {
      check(std::string("pick ") + (flag ? "yes" : "no"), dt,
            [&] { return V{pick(x, flag)}; }, 1, 0, kernels(1));
      check(std::string("maybe_bias ") + (flag ? "yes" : "no"), dt,
            [&] { return V{maybe_bias(x, b, flag)}; }, 1, 0, kernels(1));
    }
    Tensor y = input({7, 96}, dt, 4);
    check("accumulate", dt, [&] { return V{accumulate(x, y)}; }, 1, 0, kernels(1));
    check("local_norm_args", dt, [&] { return V{local_norm_args(x)}; }, 1, 0, 1);
    check("reset_local", dt, [&] { return V{reset_local(x)}; }, 1, 0, kernels(1));
    // Its second region's guard fails (g is undefined); eager raises.
    capture_compare::expect_raises("use_unassigned",
                                   [&] { return use_unassigned(x); });
    // (Its clone and zeros are kernels too: not counted.)
    check("reset_param", dt, [&] {
      Tensor p = x.clone();
      Tensor r = reset_param(p);
      return V{r, p.defined() ? p : kiln::zeros({1})};
    });
  }
  return capture_compare::summary();
}
