// [[kiln::compile("fullgraph")]]: the function must be one graph. Every
// graph break, and every place where the function would be cut into two
// regions, is an error at its line, with the reason.
// RUN: %kiln_verify %s
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);

// 1. An opaque call.
[[kiln::compile("fullgraph")]] Tensor opaque(const Tensor &x) {
  Tensor y = kiln::sin(x);
  log_tensor(y); // expected-error {{kiln: cannot compile 'opaque' with "fullgraph": call to 'log_tensor' is not supported yet (no body to inline)}}
  return y;
}

// 2. A loop with a runtime trip count.
[[kiln::compile("fullgraph")]] Tensor runtime_loop(Tensor x, int n) {
  for (int i = 0; i < n; ++i) // expected-error {{kiln: cannot compile 'runtime_loop' with "fullgraph": the loop's trip count is not a compile-time constant}}
    x = x * 2;
  return x;
}

// 3. A branch on tensor data, inside a branch on a host scalar.
[[kiln::compile("fullgraph")]] Tensor nested(const Tensor &x, bool flag) {
  Tensor y = kiln::exp(x);
  if (flag) {
    if (kiln::sum(y).item<float>() > 1) // expected-error {{with "fullgraph": the branch condition reads tensor data ('item()')}}
      y = y * 0.5;
  }
  return y;
}

// 4. Two breaks: two errors.
[[kiln::compile("fullgraph")]] Tensor two(const Tensor &x) {
  log_tensor(x); // expected-error {{"fullgraph": call to 'log_tensor'}}
  Tensor y = kiln::exp(x);
  log_tensor(y); // expected-error {{"fullgraph": call to 'log_tensor'}}
  return y;
}

// 5. A branch on a value the region computes cuts the function in two.
[[kiln::compile("fullgraph")]] Tensor split(const Tensor &x, int n) {
  Tensor y = kiln::exp(x);
  int k = n * 2;
  if (k > 3) // expected-error {{"fullgraph": the branch condition reads 'k', which the region itself computes (the function would be compiled as more than one graph)}}
    y = y * k;
  return y;
}

// 6. Recursion.
[[kiln::compile("fullgraph")]] Tensor recursive(const Tensor &x, int n) {
  if (n == 0)
    return x;
  return recursive(x * 2, n - 1); // expected-error {{"fullgraph": recursive call to 'recursive' is not inlined}}
}

// 7. What fullgraph accepts: unrolled loops, specialisations, inlining.
static Tensor act(const Tensor &t) { return kiln::gelu(t); }
[[kiln::compile("fullgraph")]] Tensor whole(const Tensor &x, bool flag) {
  Tensor y = x;
  for (int i = 0; i < 4; ++i)
    y = act(y) + i;
  if (flag)
    y = -y;
  return y;
}
