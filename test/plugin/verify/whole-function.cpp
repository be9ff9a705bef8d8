// Functions of which nothing can be compiled: a warning at the first
// statement Kiln cannot capture (the function stays as written), or
// silence where clang reported an error already, or a remark where there
// is nothing to compile. Never a crash.
// RUN: %kiln_verify %kiln_remarks -Xclang -verify-ignore-unexpected=remark %s
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);

// 1. goto: Kiln does not move code that can be jumped into.
[[kiln::compile]] Tensor jumps(const Tensor &x) {
  Tensor y = kiln::exp(x);
  goto out; // expected-warning {{kiln: cannot compile 'jumps': 'goto' is not supported yet; 'jumps' runs eagerly}}
out:
  return y;
}

// 2. A label alone.
[[kiln::compile]] Tensor labelled(const Tensor &x) {
  Tensor y = kiln::exp(x);
here: // expected-warning {{kiln: cannot compile 'labelled': label is not supported yet}}
  return y;
}

// 3. A computed goto (GNU).
[[kiln::compile]] Tensor computed(const Tensor &x, bool b) {
  void *target = b ? &&one : &&two; // expected-warning {{'goto' is not supported yet}}
  goto *target;
one:
  return kiln::exp(x);
two:
  return x;
}

// 4. A function-try-block.
[[kiln::compile]] Tensor guarded(const Tensor &x) try { // expected-warning {{a function-try-block is not supported yet}}
  return kiln::exp(x);
} catch (...) {
  return x;
}

// 5. An unknown type: clang's error only.
[[kiln::compile]] Tensor unknown(const Unknown &u) { // expected-error {{unknown type name 'Unknown'}}
  return kiln::exp(u);
}

// 6. An error in the body: clang's error only.
[[kiln::compile]] Tensor broken(const Tensor &x) {
  return kiln::exp(x) + not_declared; // expected-error {{use of undeclared identifier 'not_declared'}}
}

// 7. Nothing but opaque code.
[[kiln::compile]] Tensor opaque(const Tensor &x) {
  log_tensor(x); // expected-warning {{kiln: cannot compile 'opaque': call to 'log_tensor' is not supported yet (no body to inline); 'opaque' runs eagerly}}
  return x;
}

// 8. No tensor ops at all: a remark.
[[kiln::compile]] Tensor identity(const Tensor &x) { // expected-remark {{kiln: 'identity' has no tensor ops to compile; it runs as written}}
  return x;
}

// 9. A scalar result read from a tensor.
[[kiln::compile]] double total(const Tensor &x) {
  return kiln::sum(x).item<double>(); // expected-warning {{kiln: cannot compile 'total': returning 'double' is not supported yet (a compiled region returns tensors, pairs, tuples or aggregates of tensors)}}
}

// 10. A call of a variadic function.
inline Tensor first(const Tensor &x, ...) { return x; }
[[kiln::compile]] Tensor variadic_call(const Tensor &x) {
  return kiln::exp(first(x, 1, 2)); // expected-warning {{call to the variadic function 'first' is not supported yet}}
}

// 11. A call of a function with a function-try-block.
inline Tensor careful(const Tensor &x) try { return x * 2; } catch (...) { return x; }
[[kiln::compile]] Tensor calls_careful(const Tensor &x) {
  return kiln::exp(careful(x)); // expected-warning {{call to 'careful', which has a function-try-block, is not supported yet}}
}

// 12. Calls nested too deeply to inline.
template <int N> Tensor deep(const Tensor &x) { return deep<N - 1>(x) + 1; }
template <> Tensor deep<0>(const Tensor &x) { return x; }
[[kiln::compile]] Tensor very_deep(const Tensor &x) {
  return deep<20>(x); // expected-warning {{calls nested deeper than 16 are not inlined}}
}

// 13. A reference returned: the return stays eager.
[[kiln::compile]] Tensor &passthrough(Tensor &x) {
  return x; // expected-warning {{returning 'Tensor &' is not supported yet}}
}

// 14. An operator with a tensor inside an expression (in place).
[[kiln::compile]] Tensor nested_update(Tensor x) {
  return (x += 1) * 2; // expected-warning {{operator '+=' on a tensor inside an expression is not supported yet (as a statement it is)}}
}

// 15. A lambda's init-capture by reference.
[[kiln::compile]] Tensor ref_capture(const Tensor &x) {
  auto f = [&r = x](double s) { return r * s; }; // expected-warning {{a lambda init-capture by reference is not supported yet}}
  return f(2.0);
}

// 16. "disable": silence, whatever the body holds.
[[kiln::compile("disable")]] Tensor disabled(const Tensor &x) {
  log_tensor(x);
  goto end;
end:
  return x;
}
