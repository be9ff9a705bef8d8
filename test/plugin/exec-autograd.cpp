// Compiled functions and autograd. A call with an argument that requires
// grad, while autograd records, runs the original body (a guard: the
// kernels record nothing), so gradients flow through its eager ops; inside
// kiln::no_grad the compiled kernels run. An in-place update the compiled
// code makes moves the argument's version, so a tensor saved for backward
// and then updated is caught as in eager.
// RUN: %kiln_cxx -c %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --check-prefixes=CHECK,%compiled
// CHECK: recorded call: fallback 1, guard failures 1, compiled 0, requires grad 1
// CHECK: gradient vs float64: max error {{[0-9.e+-]+}} ok
// CHECK: no_grad call: requires grad 0, same values 1
// COMPILED-NEXT: compiled 1
// FORCED-NEXT: compiled 0
// CHECK: sgd step in no_grad
// COMPILED-NEXT: compiled 1
// FORCED-NEXT: compiled 0
// CHECK-NOT: MISMATCH
// CHECK: saved then updated: backward raised
// CHECK: plain call
// COMPILED-NEXT: compiled 1
// FORCED-NEXT: compiled 0
#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>

[[kiln::compile]] kiln::Tensor gelu_scale(const kiln::Tensor &x,
                                          const kiln::Tensor &w) {
  return kiln::gelu(x * w) + x;
}

[[kiln::compile]] void sgd(kiln::Tensor &p, const kiln::Tensor &g, double lr) {
  p -= g * lr;
}

int main() {
  kiln::manual_seed(3);
  kiln::Tensor x = kiln::randn({64, 32});
  kiln::Tensor w = kiln::randn({32}).requires_grad_();

  kiln::reset_stats();
  kiln::Tensor y = gelu_scale(x, w);
  kiln::Stats s = kiln::stats();
  std::printf("recorded call: fallback %d, guard failures %d, compiled %d, "
              "requires grad %d\n",
              int(s.fallback_calls), int(s.guard_failures),
              int(s.compiled_calls), int(y.requires_grad()));

  // d sum(y) / d w[j] = sum_i gelu'(x[i,j] w[j]) x[i,j], in float64.
  kiln::sum(y).backward();
  std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
  std::vector<float> gv = w.grad().to_vector<float>();
  double worst = 0;
  for (int j = 0; j < 32; ++j) {
    double ref = 0;
    for (int i = 0; i < 64; ++i) {
      double a = double(xv[size_t(i * 32 + j)]) * wv[size_t(j)];
      double d = 0.5 * (1 + std::erf(a / std::sqrt(2.0))) +
                 a * std::exp(-a * a / 2) / std::sqrt(2 * M_PI);
      ref += d * xv[size_t(i * 32 + j)];
    }
    worst = std::fmax(worst, std::fabs(ref - gv[size_t(j)]) /
                                 (1 + std::fabs(ref)));
  }
  std::printf("gradient vs float64: max error %.3g %s\n", worst,
              worst < 1e-4 ? "ok" : "MISMATCH");

  kiln::reset_stats();
  kiln::Tensor y2;
  {
    kiln::no_grad ng;
    y2 = gelu_scale(x, w);
  }
  s = kiln::stats();
  std::printf("no_grad call: requires grad %d, same values %d\ncompiled %d\n",
              int(y2.requires_grad()),
              int(kiln::allclose(y.detach(), y2, 1e-5, 1e-6)),
              int(s.compiled_calls));

  // The optimizer step: compiled, in place.
  kiln::Tensor before = w.detach().clone();
  kiln::reset_stats();
  {
    kiln::no_grad ng;
    sgd(w, w.grad(), 0.1);
  }
  s = kiln::stats();
  std::printf("sgd step in no_grad\ncompiled %d\n", int(s.compiled_calls));
  if (!kiln::allclose(w.detach(), before - w.grad() * 0.1))
    std::printf("MISMATCH after the step\n");

  // A tensor saved for backward (p, by the product), then updated in place
  // by compiled code: backward raises, as eager's version check.
  kiln::Tensor p = kiln::randn({32});
  kiln::Tensor q = kiln::randn({32}).requires_grad_();
  kiln::Tensor z = kiln::sum(p * q);
  sgd(p, kiln::ones({32}), 0.5); // p requires nothing: compiled
  try {
    z.backward();
    std::printf("saved then updated: backward ran (MISMATCH)\n");
  } catch (const kiln::Error &e) {
    std::printf("saved then updated: backward raised\n");
  }

  kiln::reset_stats();
  gelu_scale(x, kiln::randn({32}));
  std::printf("plain call\ncompiled %d\n", int(kiln::stats().compiled_calls));
  return 0;
}
