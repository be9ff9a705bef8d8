// Code the capture does not understand yet: a warning at the statement or
// expression, and the function stays as written (eager). With "fullgraph"
// the same is an error.
// RUN: %kiln_verify %s
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);
Tensor helper(const Tensor &x);
Tensor global_weight;

[[kiln::compile]] Tensor calls_foo(const Tensor &x) {
  Tensor y = kiln::sin(x);
  log_tensor(y); // expected-warning {{kiln: cannot compile 'calls_foo': call to 'log_tensor' is not supported yet; 'calls_foo' runs eagerly}}
  return y;
}

[[kiln::compile]] Tensor calls_helper(const Tensor &x) {
  return kiln::exp(helper(x)); // expected-warning {{kiln: cannot compile 'calls_helper': call to 'helper' is not supported yet; 'calls_helper' runs eagerly}}
}

[[kiln::compile]] Tensor branches(const Tensor &x, bool neg) {
  if (neg) // expected-warning {{kiln: cannot compile 'branches': 'if' statement is not supported yet; 'branches' runs eagerly}}
    return -x;
  return x;
}

[[kiln::compile]] Tensor loops(const Tensor &x) {
  Tensor y = x;
  for (int i = 0; i < 3; ++i) // expected-warning {{'for' loop is not supported yet}}
    y = y * 2;
  return y;
}

[[kiln::compile]] Tensor uses_global(const Tensor &x) {
  return x + global_weight; // expected-warning {{kiln: cannot compile 'uses_global': reference to 'global_weight', a global or static variable, is not supported yet; 'uses_global' runs eagerly}}
}

[[kiln::compile]] Tensor in_place(Tensor x) {
  x += x; // expected-warning {{in-place operator '+=' is not supported yet}}
  return x;
}

[[kiln::compile]] Tensor method(const Tensor &x) {
  return x.contiguous(); // expected-warning {{call to 'kiln::Tensor::contiguous' is not supported yet}}
}

[[kiln::compile]] double not_a_tensor(const Tensor &x) { // expected-warning {{kiln: cannot compile 'not_a_tensor': functions returning 'double' are not supported yet (the result must be a kiln::Tensor); 'not_a_tensor' runs eagerly}}
  return 0.0;
}

[[kiln::compile]] Tensor int_as_float(const Tensor &x, int n) {
  return x * double(n); // expected-warning {{conversion of 'n' from integer to floating-point is not supported yet}}
}

double twice(double);

[[kiln::compile]] Tensor scalar_call(const Tensor &x, double a) {
  return x * twice(a); // expected-warning {{scalar expression is not supported yet}}
}

[[kiln::compile]] Tensor float_math(const Tensor &x, float f) {
  return x * (f * 2.0f); // expected-warning {{arithmetic on runtime scalars of type 'float' is not supported yet}}
}

[[kiln::compile]] Tensor int_division(const Tensor &x, int n) {
  return x * (n / 2); // expected-warning {{integer division of runtime scalars is not supported yet}}
}

[[kiln::compile]] Tensor gelu_mode(const Tensor &x, std::string_view mode) {
  return kiln::gelu(x, mode); // expected-warning {{kiln::gelu's 'approximate' argument must be the literal "none" or "tanh"}}
}

[[kiln::compile]] Tensor ternary(const Tensor &x, const Tensor &y, bool b) {
  return b ? x : y; // expected-warning {{the conditional operator '?:' is not supported yet (use kiln::where)}}
}

[[kiln::compile]] Tensor no_value(const Tensor &x) {
  Tensor t; // expected-warning {{a default-constructed (undefined) tensor is not supported yet}}
  return x;
}

[[kiln::compile("fullgraph")]] Tensor strict(const Tensor &x) {
  log_tensor(x); // expected-error {{kiln: cannot compile 'strict' with "fullgraph": call to 'log_tensor' is not supported yet}}
  return x;
}

// "disable" is silent whatever the body holds.
[[kiln::compile("disable")]] Tensor disabled(const Tensor &x) {
  log_tensor(x);
  return x;
}

// A definition after an annotated declaration is compiled too.
[[kiln::compile]] Tensor declared_first(const Tensor &x);
Tensor declared_first(const Tensor &x) {
  while (true) // expected-warning {{kiln: cannot compile 'declared_first': 'while' loop is not supported yet; 'declared_first' runs eagerly}}
    return x;
}
