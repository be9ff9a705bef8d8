// Odd code in compiled functions: never a crash, a warning where Kiln
// cannot compile anything, and no second diagnostic where clang already
// reported an error. What compiles also builds into an object.
// RUN: %kiln_verify %s
// RUN: %kiln_cxx -c -w -DNO_ERROR %s -o %t.o
#include <kiln/kiln.h>

#include <utility>

using kiln::Tensor;

[[kiln::compile]] Tensor moves(Tensor x) {
  Tensor y = std::move(x);
  Tensor z(kiln::exp(y));
  Tensor w{z};
  return std::move(w);
}

[[kiln::compile]] Tensor casts(const Tensor &x) {
  return static_cast<const Tensor &>(Tensor(x)) * (double)2 + (float)0.5;
}

[[kiln::compile]] Tensor nested_blocks(const Tensor &x, double a) {
  Tensor r = x;
  {
    Tensor r2 = r * a;
    r = r2;
    ;
  }
  static_assert(sizeof(double) == 8);
  using T = Tensor;
  constexpr double k = 1.0 / 3;
  T s = r + k;
  return s;
  return x; // unreachable: ignored
}

[[kiln::compile]] Tensor lambda(const Tensor &x) {
  auto f = [](const Tensor &t) { return t * 2; };
  return f(x);
}

[[kiln::compile]] Tensor comma(const Tensor &x) {
  return (void)0, x; // expected-warning {{expression (BinaryOperator) is not supported yet}}
}

// Only the specialisation that throws runs the original body.
[[kiln::compile]] Tensor throws(const Tensor &x) {
  if (!x.defined())
    throw kiln::Error("undefined");
  return kiln::sin(x);
}

[[kiln::compile]] Tensor tries(const Tensor &x) {
  try {
    return kiln::sin(x);
  } catch (...) {
    return x;
  }
}

[[kiln::compile]] Tensor function_try(const Tensor &x) try { // expected-warning {{a function-try-block is not supported yet}}
  return x;
} catch (...) {
  throw;
}

[[kiln::compile]] Tensor structured(const Tensor &x) {
  auto [a, b] = std::pair<Tensor, Tensor>(x, x);
  return a + b;
}

[[kiln::compile]] Tensor pointer(const Tensor *x) {
  return kiln::sin(*x); // expected-warning {{expression (UnaryOperator) is not supported yet}}
}

[[kiln::compile]] Tensor goto_label(const Tensor &x) {
  goto done; // expected-warning {{'goto' is not supported yet}}
done:
  return x;
}

[[kiln::compile]] Tensor missing_return(const Tensor &x) {
  Tensor y = kiln::exp(x);
} // expected-warning {{non-void function does not return a value}}

#ifndef NO_ERROR
[[kiln::compile]] Tensor has_error(const Tensor &x) {
  return kiln::sin(x) + undeclared_thing; // expected-error {{use of undeclared identifier 'undeclared_thing'}}
}
#endif

[[kiln::compile]] Tensor scalar_refs(const Tensor &x, const double &a, int &n) {
  return x * a + n;
}

[[kiln::compile]] Tensor many_args(const Tensor &a, const Tensor &b,
                                   const Tensor &c, const Tensor &d, double s,
                                   long n, bool flag, const Tensor &e) {
  return kiln::where(a > b, c, d) * s + kiln::clamp(e, -n, n);
}

// Loops that never run, and one that returns on its first iteration.
[[kiln::compile]] Tensor degenerate_loops(const Tensor &x) {
  Tensor y = x * 2;
  for (int i = 0; i < 0; ++i)
    y = -y;
  while (false)
    y = -y;
  for (;;)
    return y + 1;
}

// Self-assignment, a tensor assigned to itself through a reference.
[[kiln::compile]] Tensor self_assign(Tensor x) {
  Tensor &r = x;
  x = r;
  r = kiln::exp(x);
  return x;
}
