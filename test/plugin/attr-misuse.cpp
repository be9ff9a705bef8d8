// Misuse of [[kiln::compile]]: malformed uses are errors at the attribute;
// functions Kiln cannot compile yet get a warning and stay eager.
// RUN: %kiln_verify %s
#include <kiln/kiln.h>

#include <coroutine>

using kiln::Tensor;

[[compile]] Tensor bare(const Tensor &x) { return x; } // expected-error {{unknown attribute 'compile'; did you mean 'kiln::compile'?}}

[[kiln::compile(fullgraph)]] Tensor ident(const Tensor &x) { return x; } // expected-error {{kiln::compile options are string literals, e.g. [[kiln::compile("fullgraph")]]}}

[[kiln::compile(1)]] Tensor number(const Tensor &x) { return x; } // expected-error {{kiln::compile options are string literals}}

[[kiln::compile("fulgraph")]] Tensor typo(const Tensor &x) { return x; } // expected-error {{unknown kiln::compile option 'fulgraph'}}

[[kiln::compile("dtypes=f32,i32")]] Tensor int_dtype(const Tensor &x) { return x; } // expected-error {{unknown dtype 'i32' in kiln::compile option 'dtypes'}}

[[kiln::compile("backward=wx")]] Tensor bwd_typo(const Tensor &x, const Tensor &w) { return x * w; } // expected-error {{kiln: 'backward=' names 'wx', which is no parameter of 'bwd_typo'}}

[[kiln::compile("backward=")]] Tensor bwd_empty(const Tensor &x) { return x; } // expected-error {{kiln::compile option 'backward=' needs argument names}}

[[kiln::compile("backend=triton")]] Tensor backend(const Tensor &x) { return x; } // expected-error {{unknown kiln::compile backend 'triton'}}

[[kiln::compile]] int variable = 0; // expected-error {{'kiln::compile' attribute only applies to functions}}

struct [[kiln::compile]] Record {}; // expected-error {{'kiln::compile' attribute only applies to functions}}

Tensor stmt(const Tensor &x) {
  [[kiln::compile]] return x; // expected-error {{'kiln::compile' attribute only applies to functions}}
}

// A template compiles per instantiation: never instantiated here, nothing
// to say (a remark with -fplugin-arg-kiln-remarks: verify/attributes.cpp).
template <class T>
[[kiln::compile]] Tensor templ(const Tensor &x, T s) { return x * s; }

template <class T> struct Box {
  [[kiln::compile]] Tensor member(const Tensor &x) { return x * 2.0; }
};

// A marked lambda where Kiln does not look for one: said, not ignored.
template <class T> struct Module {
  Tensor (*f)(const Tensor &) = [] [[kiln::compile]] (const Tensor &x) { return x * 2.0; }; // expected-warning {{an attribute specifier sequence in this position is a C++23 extension}} expected-warning {{kiln: this lambda is not compiled: Kiln finds marked lambdas in function bodies, default arguments, variable initialisers and default member initialisers of classes that are not templates; it runs eagerly}}
};
Module<float> module;

// The attribute after a lambda's parameters would apply to its type.
auto after_params = [](const Tensor &x) [[kiln::compile]] { return x; }; // expected-error {{'compile' attribute cannot be applied to types}}

struct Base {
  [[kiln::compile]] virtual Tensor f(const Tensor &x) { return kiln::sin(x); } // expected-warning {{kiln: cannot compile 'Base::f': virtual functions are not supported yet; 'Base::f' runs eagerly}}
};

[[kiln::compile("fullgraph")]] Tensor variadic(const Tensor &x, ...) { return x; } // expected-error {{kiln: cannot compile 'variadic' with "fullgraph": variadic functions are not supported yet}}

template <class... Args> struct std::coroutine_traits<Tensor, Args...> {
  struct promise_type {
    Tensor get_return_object() { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_value(const Tensor &) {}
    void unhandled_exception() {}
  };
};
[[kiln::compile]] Tensor coro(const Tensor &x) { co_return x; } // expected-warning {{kiln: cannot compile 'coro': coroutines are not supported yet; 'coro' runs eagerly}}

// Well-formed uses: no diagnostic.
[[kiln::compile("fullgraph", "dtypes=f32, bf16", "unsafe-math")]] Tensor ok1(const Tensor &x) { return kiln::sin(x); }
[[kiln::compile("backend=eager")]] Tensor ok2(const Tensor &x) { return kiln::sin(x); }
[[kiln::compile("disable")]] Tensor ok3(const Tensor &x) { if (x.dim()) return x; return x; }
