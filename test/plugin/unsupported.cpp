// Code the capture does not understand yet, in functions where nothing
// else can be compiled: a warning at the statement or expression, and the
// function stays as written (eager). With "fullgraph" the same is an error.
// Where other code of the function compiles, the statement is a graph
// break with a remark instead: see verify/graph-breaks.cpp.
// RUN: %kiln_verify %s
#include <kiln/kiln.h>

#include <cmath>

using kiln::Tensor;

void log_tensor(const Tensor &);
Tensor helper(const Tensor &x);

[[kiln::compile]] Tensor calls_foo(const Tensor &x) {
  log_tensor(x); // expected-warning {{kiln: cannot compile 'calls_foo': call to 'log_tensor' is not supported yet (no body to inline); 'calls_foo' runs eagerly}}
  return x;
}

[[kiln::compile]] Tensor calls_helper(const Tensor &x) {
  return kiln::exp(helper(x)); // expected-warning {{kiln: cannot compile 'calls_helper': call to 'helper' is not supported yet (no body to inline); 'calls_helper' runs eagerly}}
}

[[kiln::compile]] Tensor method(const Tensor &x) {
  return x.to(kiln::Device::cpu()) * 2; // expected-warning {{call to 'kiln::Tensor::to' is not supported yet}}
}

[[kiln::compile]] double not_a_tensor(const Tensor &x) {
  return 0.0; // expected-warning {{kiln: cannot compile 'not_a_tensor': returning 'double' is not supported yet (a compiled region returns tensors, pairs, tuples or aggregates of tensors); 'not_a_tensor' runs eagerly}}
}

[[kiln::compile]] Tensor long_double_exp(const Tensor &x, long double f) {
  return x * double(std::exp(f)); // expected-warning {{conversion of a runtime scalar to 'double' is not supported yet}}
}

double twice(double);

[[kiln::compile]] Tensor scalar_call(const Tensor &x, double a) {
  return x * twice(a); // expected-warning {{call to 'twice' is not supported yet (no body to inline)}}
}

[[kiln::compile]] Tensor round_math(const Tensor &x, double f) {
  return x * std::cbrt(kiln::sin(x).numel() * 2.0); // expected-warning {{call to 'cbrt' of a value the region computes is not supported yet}}
}

[[kiln::compile]] Tensor unsigned_division(const Tensor &x, unsigned n) {
  return x * (n / 2); // expected-warning {{arithmetic on runtime scalars of type 'unsigned int' is not supported yet}}
}

[[kiln::compile]] Tensor stack_of_splits(const Tensor &x) {
  return kiln::stack(x.split(2, 0), 0); // expected-warning {{joining what split(), or chunk() of a run-time count, returns is not supported yet: the number of pieces is known only at run time}}
}

[[kiln::compile]] Tensor gelu_mode(const Tensor &x, std::string_view mode) {
  return kiln::gelu(x, mode); // expected-warning {{kiln::gelu's 'approximate' argument must be the literal "none" or "tanh"}}
}

[[kiln::compile]] Tensor ternary(const Tensor &x, const Tensor &y) {
  return kiln::amax(x).item<double>() > 0 ? x : y; // expected-warning {{the conditional operator '?:' is not supported yet (use kiln::where)}}
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
  while (true) {
    log_tensor(x); // expected-warning {{kiln: cannot compile 'declared_first': call to 'log_tensor' is not supported yet (no body to inline); 'declared_first' runs eagerly}}
    return x;
  }
}
