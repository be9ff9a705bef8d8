// Graph breaks, compiled against eager on the CPU: the statement that
// cannot be captured runs exactly once, in order, between compiled regions;
// live tensors flow across. Loops with runtime or data-dependent trip
// counts run eagerly with their bodies compiled; a branch on tensor data
// runs eagerly with its arms compiled; a specialisation that reaches a
// `throw` runs the original code.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off %s -o %t.o
// RUN: %kiln_cxx_eager -c %S/../../Inputs/capture_opaque.cpp -o %t.opaque.o
// RUN: %kiln_cxx_eager %t.o %t.opaque.o %kiln_link -o %t && %t | FileCheck %s
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %t.opaque.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: opaque calls: 24 (one per call)
// CHECK: undefined input throws: yes
// CHECK: {{[0-9]+}} cases, 0 mismatches
#include "capture_compare.h"

#include <vector>

using kiln::Tensor;

void opaque_log(const Tensor &);
int opaque_calls();
Tensor opaque_scale(const Tensor &x);

// Two regions around a call Kiln cannot see.
COMPILE Tensor around_call(const Tensor &x, double a) {
  Tensor y = kiln::sin(x) * a;
  Tensor keep = y + 1;
  opaque_log(y);
  Tensor z = opaque_scale(y);
  return kiln::cos(z) * 2 + keep;
}

// A loop whose trip count is a runtime value: its body is a region.
COMPILE Tensor runtime_loop(const Tensor &x, int n) {
  Tensor y = kiln::exp(-x * x);
  for (int i = 0; i < n; ++i)
    y = y * 1.1 + 0.1 * i;
  return y - 1;
}

// A loop on tensor data: the condition runs eagerly each time.
COMPILE Tensor data_loop(const Tensor &x) {
  Tensor y = x * 8.0;
  while (kiln::amax(kiln::abs(y)).item<double>() > 1.0)
    y = y * 0.5;
  return y + 1;
}

// A branch on tensor data: the condition runs eagerly, each arm is a
// region.
COMPILE Tensor data_branch(const Tensor &x) {
  Tensor y = kiln::tanh(x);
  if (kiln::sum(y).item<double>() > 0)
    y = y * 2;
  else
    y = -y;
  return y + 1;
}

// A branch on a scalar the region computes: runs eagerly, arms compiled.
COMPILE Tensor computed_branch(const Tensor &x, int n) {
  Tensor y = kiln::sigmoid(x);
  int k = n * 2;
  if (k > 3)
    y = y * k;
  return y + k;
}

// A recursive helper is not inlined: the call runs eagerly.
static Tensor halve(const Tensor &x, int n) {
  if (n <= 0)
    return x;
  return halve(x * 0.5, n - 1) + 1;
}
COMPILE Tensor recursion(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor r = halve(y, 3);
  return r * 2;
}

// Only the specialisation that throws runs the original code.
COMPILE Tensor checked(const Tensor &x) {
  if (!x.defined())
    throw kiln::Error("checked: undefined input");
  return kiln::sin(x) * 2;
}

// A range-based 'for' over a vector from outside runs eagerly: its body
// is a region per element.
COMPILE Tensor over_list(const Tensor &x, const std::vector<Tensor> &ws) {
  Tensor y = x * 1.0;
  for (const Tensor &w : ws)
    y = kiln::tanh(y * w);
  return y + 1;
}

// A vector the region builds, used after a graph break: declared before
// the region, which fills it with its tensors; what follows the break
// runs eagerly (the vector comes from outside there).
COMPILE Tensor list_across(const Tensor &x) {
  std::vector<Tensor> outs = {x * 0.5};
  for (int h = 0; h < 3; ++h)
    outs.push_back(kiln::sin(x * double(h + 1)));
  opaque_log(outs[1]);
  return kiln::cat(outs, -1);
}

// A try block runs eagerly: its statements are regions.
COMPILE Tensor in_try(const Tensor &x) {
  Tensor y = kiln::exp(-x);
  try {
    y = y * 3;
    opaque_log(y);
  } catch (...) {
    y = x;
  }
  return y;
}

// '?:' on a host scalar specialises the region, as an 'if' does.
COMPILE Tensor pick(const Tensor &x, bool b) {
  Tensor y = b ? kiln::exp(x) : kiln::sin(x);
  return y * 2;
}

int main() {
  using capture_compare::check;
  using capture_compare::input;
  using V = std::vector<Tensor>;
  int calls = 0;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16}) {
    Tensor x = input({3, 5}, dt, 1), big = input({40, 17}, dt, 2);
    int before = opaque_calls();
    check("around_call", dt, [&] { return V{around_call(x, 0.5)}; }, 2);
    check("around_call big", dt, [&] { return V{around_call(big, -1.5)}; }, 2);
    calls += opaque_calls() - before;
    check("runtime_loop 0", dt, [&] { return V{runtime_loop(x, 0)}; }, 2);
    check("runtime_loop 4", dt, [&] { return V{runtime_loop(x, 4)}; }, 6);
    // As many body regions as halvings, plus the regions before and after.
    int halvings = 0;
    for (Tensor y = x * 8.0;
         kiln::amax(kiln::abs(y)).item<double>() > 1.0; y = y * 0.5)
      ++halvings;
    check("data_loop", dt, [&] { return V{data_loop(x)}; }, halvings + 2);
    check("data_branch +", dt, [&] { return V{data_branch(x)}; }, 3);
    check("data_branch -", dt, [&] { return V{data_branch(-x)}; }, 3);
    check("computed_branch 1", dt, [&] { return V{computed_branch(x, 1)}; }, 2);
    check("computed_branch 3", dt, [&] { return V{computed_branch(x, 3)}; }, 2);
    check("recursion", dt, [&] { return V{recursion(x)}; }, 2);
    check("checked", dt, [&] { return V{checked(x)}; }, 1);
    std::vector<Tensor> ws{input({5}, dt, 3), input({3, 1}, dt, 4),
                           input({1}, dt, 5)};
    check("over_list", dt, [&] { return V{over_list(x, ws)}; }, 5);
    check("list_across", dt, [&] { return V{list_across(x)}; }, 1);
    before = opaque_calls();
    check("in_try", dt, [&] { return V{in_try(x)}; }, 2);
    calls += opaque_calls() - before;
    check("pick true", dt, [&] { return V{pick(x, true)}; }, 1);
    check("pick false", dt, [&] { return V{pick(x, false)}; }, 1);
  }
  std::printf("opaque calls: %d (%s)\n", calls,
              calls == 24 ? "one per call" : "wrong");
  bool threw = false;
  try {
    (void)checked(Tensor());
  } catch (const kiln::Error &) {
    threw = true;
  }
  std::printf("undefined input throws: %s\n", threw ? "yes" : "no");
  return capture_compare::summary();
}
