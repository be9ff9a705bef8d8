// Optional tensors: a norm's weight or bias may be undefined, as the
// runtime's layer_norm and rms_norm accept. A tensor argument gets one
// specialisation per definedness, chosen by a guard on `w.defined()`; a
// `Tensor()` written in the call is absent at compile time. Compiled
// against eager on the CPU, each call one fused kernel.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// The four specialisations of layer_norm's weight and bias, at its line.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -Rpass=kiln %s 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK-COUNT-4: exec-optional.cpp:[[@LINE+11]]:{{[0-9]+}}: remark: kiln: compiled 'layer_norm_opt (region 1, specialisation {{[1-4]}})'
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

int main() {
  using capture_compare::check;
  using capture_compare::input;
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
  }
  return capture_compare::summary();
}
