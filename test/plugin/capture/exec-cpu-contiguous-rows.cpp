// The compiled CPU row reductions take a vectorisable path over full
// blocks of rows whose operands are contiguous along R (the lanes of a
// block side by side), and the lane-by-lane path otherwise. Both add each
// lane's elements in the same order and combine the lanes the same way:
// where no vector math function is involved, the same values in a
// contiguous tensor and in a strided view of it give identical bits (exp
// and log may take SLEEF's vector forms on the contiguous path, 1 ULP,
// and are compared with eager's by tolerance only). Every compiled path
// ran, and both are within tolerance of eager (capture_compare::check). Rows of 1024 (full blocks only), 200 and
// 4097 (a partial last block), 33 (no full block).
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <cstdio>
#include <functional>
#include <vector>

using kiln::Tensor;

COMPILE Tensor soft(const Tensor &x) { return kiln::softmax(x, -1); }
COMPILE Tensor log_soft(const Tensor &x) { return kiln::log_softmax(x, -1); }
COMPILE Tensor norm(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::layer_norm(x, w, b, 1e-5);
}
COMPILE Tensor rms(const Tensor &x, const Tensor &w) { return kiln::rms_norm(x, w, 1e-6); }
// Reduced outputs (stride 0 along R) beside a full one.
COMPILE Tensor sums(const Tensor &x) {
  return kiln::sum(x, -1, true) + kiln::logsumexp(x, -1, true) * x;
}
COMPILE Tensor first_max(const Tensor &x) { return kiln::argmax(x, -1); }
COMPILE Tensor variance(const Tensor &x) { return kiln::var(x, -1); }

static std::vector<double> bits(const Tensor &t) {
  return t.to(kiln::Device::cpu()).to(kiln::DType::f64).contiguous().to_vector<double>();
}

int main() {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  const kiln::Device cpu = kiln::Device::cpu();
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16}) {
    for (int64_t R : {1024, 200, 4097, 33}) {
      Tensor x = input({6, R}, dt, 1, cpu);
      // The same values, R-stride 6: every pass takes the lane-by-lane path.
      Tensor xs = x.transpose(0, 1).contiguous().transpose(0, 1);
      Tensor w = input({R}, dt, 2, cpu), b = input({R}, dt, 3, cpu);
      const struct {
        const char *name;
        std::function<Tensor(const Tensor &)> fn;
        bool same_bits;
      } cases[] = {
          {"softmax", [](const Tensor &t) { return soft(t); }, false},
          {"log_softmax", [](const Tensor &t) { return log_soft(t); }, false},
          {"layer_norm", [&](const Tensor &t) { return norm(t, w, b); }, true},
          {"rms_norm", [&](const Tensor &t) { return rms(t, w); }, true},
          {"sum+logsumexp", [](const Tensor &t) { return sums(t); }, false},
          {"argmax", [](const Tensor &t) { return first_max(t); }, true},
          {"var", [](const Tensor &t) { return variance(t); }, true},
      };
      for (const auto &c : cases) {
        check(c.name, dt, [&] { return V{c.fn(x)}; });
        check(std::string(c.name) + " (strided)", dt, [&] { return V{c.fn(xs)}; });
        kiln::reset_stats();
        const std::vector<double> a = bits(c.fn(x)), s = bits(c.fn(xs));
        ++capture_compare::g_cases;
        // With every guard made to fail (scripts/test-forced-fallback.sh)
        // both calls run the original body.
        const uint64_t want = kiln::force_guard_failure() ? 0 : 2;
        if (kiln::stats().compiled_calls != want || (c.same_bits && a != s)) {
          ++capture_compare::g_mismatches;
          std::printf("MISMATCH %s [%s] R=%lld: %s\n", c.name, kiln::dtype_name(dt),
                      (long long)R,
                      a != s ? "contiguous and strided rows differ"
                             : "unexpected count of compiled calls");
        }
      }
    }
  }
  return capture_compare::summary();
}
