// Malformed or misplaced [[kiln::compile]]: an error at the attribute, or
// (where the attribute is well-formed but there is nothing to compile) a
// warning or a remark at it. Never a crash. (More in ../attr-misuse.cpp.)
// RUN: %kiln_verify %kiln_remarks -Xclang -verify-ignore-unexpected=remark %s
#include <kiln/kiln.h>

using kiln::Tensor;

// 1. A number among the options.
[[kiln::compile("fullgraph", 3)]] Tensor number_option(const Tensor &x) { return x; } // expected-error {{kiln::compile options are string literals}}

// 2. An empty option.
[[kiln::compile("")]] Tensor empty_option(const Tensor &x) { return x; } // expected-error {{unknown kiln::compile option ''}}

// 3. An empty dtype list.
[[kiln::compile("dtypes=")]] Tensor empty_dtypes(const Tensor &x) { return x; } // expected-error {{unknown dtype '' in kiln::compile option 'dtypes'}}

// 4. An empty backend.
[[kiln::compile("backend=")]] Tensor empty_backend(const Tensor &x) { return x; } // expected-error {{unknown kiln::compile backend ''}}

// 5. A wide string.
[[kiln::compile(L"fullgraph")]] Tensor wide(const Tensor &x) { return x; } // expected-error {{kiln::compile options are string literals}}

// 6. Two options in one string.
[[kiln::compile("fullgraph;disable")]] Tensor joined(const Tensor &x) { return x; } // expected-error {{unknown kiln::compile option 'fullgraph;disable'}}

// 7. A macro that is not a string.
#define OPTS fullgraph
[[kiln::compile(OPTS)]] Tensor macro(const Tensor &x) { return x; } // expected-error {{kiln::compile options are string literals}}

// 8. On a field.
struct Fields {
  [[kiln::compile]] Tensor t; // expected-error {{'kiln::compile' attribute only applies to functions}}
};

// 9. On a parameter.
void parameter([[kiln::compile]] int x); // expected-error {{'kiln::compile' attribute only applies to functions}}

// 10. On an enumeration.
enum [[kiln::compile]] Colour { Red }; // expected-error {{'kiln::compile' attribute only applies to functions}}

// 11. On a type alias.
using Alias [[kiln::compile]] = int; // expected-error {{'kiln::compile' attribute only applies to functions}}

// 12. On a declaration whose definition is elsewhere: a remark.
[[kiln::compile]] Tensor defined_elsewhere(const Tensor &x); // expected-remark {{kiln: 'defined_elsewhere' is not defined in this file; [[kiln::compile]] takes effect where it is defined}}

// 13. On a deleted function.
[[kiln::compile]] Tensor deleted(const Tensor &x) = delete; // expected-warning {{kiln: 'deleted' is marked [[kiln::compile]] but deleted; nothing is compiled}}

// 14. On a constructor.
struct Holder {
  Tensor t;
  [[kiln::compile]] Holder(const Tensor &x) : t(kiln::exp(x)) {} // expected-warning {{kiln: cannot compile 'Holder::Holder': constructors and destructors are not supported yet; 'Holder::Holder' runs eagerly}}
};

// 15. On a consteval function.
[[kiln::compile]] consteval int twice(int n) { return 2 * n; } // expected-warning {{a consteval function never runs at run time: there is nothing to compile}}

// 16. On a function template's explicit specialisation.
template <class T> Tensor scaled(const Tensor &x, T s) { return x * s; }
template <> [[kiln::compile]] Tensor scaled<double>(const Tensor &x, double s) { return kiln::sin(x) * s; }

// 17. On a namespace.
namespace [[kiln::compile]] space {} // expected-error {{'kiln::compile' attribute only applies to functions}}

// 18. On a variable template.
template <class T> [[kiln::compile]] T zero = T(); // expected-error {{'kiln::compile' attribute only applies to functions}}

// 19. A mode torch.compile does not have.
[[kiln::compile("mode=fastest")]] Tensor fastest_mode(const Tensor &x) { return x; } // expected-error {{unknown kiln::compile mode 'fastest' (expected 'default', 'reduce-overhead', 'max-autotune' or 'max-autotune-no-cudagraphs')}}

// 20. On a template this file never instantiates: a remark.
template <class T> [[kiln::compile]] Tensor never(const Tensor &x, T s) { return x * s; } // expected-remark {{kiln: 'never' is a template this file does not instantiate; each instantiation is compiled where it is instantiated}}
template <int N> struct Never {
  [[kiln::compile]] Tensor f(const Tensor &x) { return x * double(N); } // expected-remark {{kiln: 'Never::f' is a template this file does not instantiate}}
};

// 21. On a lambda, in the C++23 position (a clang extension in C++20).
auto lambda = [] [[kiln::compile]] (const Tensor &x) { return kiln::sin(x); }; // expected-warning {{an attribute specifier sequence in this position is a C++23 extension}}

// 22. A graph break in an instantiation names it.
template <class T> [[kiln::compile("fullgraph")]] Tensor broken(const Tensor &x, T) {
  return kiln::sin(x) + double(x.item<float>()); // expected-error {{kiln: cannot compile 'broken<int>' with "fullgraph"}}
}
Tensor use_broken(const Tensor &x) { return broken(x, 1); }

// 23. [[kiln::dtype]]: an unknown dtype, no dtype, a number, on a
// function, on a non-tensor parameter (a warning: it is ignored).
[[kiln::compile]] Tensor pin_unknown(const Tensor &x, [[kiln::dtype("int")]] const Tensor &y) { return x + y; } // expected-error {{unknown dtype 'int' in kiln::dtype (expected f32, f16, bf16, f64, i32, i64 or b8)}}
[[kiln::compile]] Tensor pin_none(const Tensor &x, [[kiln::dtype]] const Tensor &y) { return x + y; } // expected-error {{kiln::dtype takes the dtypes a tensor parameter is compiled for}}
[[kiln::compile]] Tensor pin_number(const Tensor &x, [[kiln::dtype(64)]] const Tensor &y) { return x + y; } // expected-error {{kiln::dtype takes the dtypes a tensor parameter is compiled for}}
[[kiln::dtype("f32")]] Tensor pin_function(const Tensor &x) { return x; } // expected-error {{'kiln::dtype' attribute only applies to parameters}}
[[kiln::compile]] Tensor pin_scalar(const Tensor &x, [[kiln::dtype("i64")]] int64_t n) { return x * double(n); } // expected-warning {{kiln: [[kiln::dtype]] applies to a kiln::Tensor parameter; 'n' is not one, so it is ignored}}

// 24. Too many variants (4 dtypes x 7 x 7): a warning, and it runs eagerly.
[[kiln::compile]] Tensor pin_many(const Tensor &x, // expected-warning {{kiln: cannot compile 'pin_many': 196 dtype variants (4 x 7 x 7) exceed Kiln's limit of 64: narrow "dtypes=" or a [[kiln::dtype]] list; 'pin_many' runs eagerly}}
                                  [[kiln::dtype("f32", "f16", "bf16", "f64", "i32", "i64", "b8")]] const Tensor &a,
                                  [[kiln::dtype("f32,f16,bf16,f64,i32,i64,b8")]] const Tensor &b) { return x + a * b; }

// Well-formed: no diagnostic.
[[kiln::compile]] Tensor pinned(const Tensor &x, [[kiln::dtype("i64", "i32")]] const Tensor &ids) { return x + ids; }
[[kiln::compile]] Tensor pinned_list(const Tensor &x, [[kiln::dtype("i64,b8")]] const Tensor &ids) { return x * ids; }
[[kiln::compile("backend=kiln", "dtypes=f64")]] Tensor fine(const Tensor &x) { return kiln::sin(x); }
[[kiln::compile("mode=reduce-overhead")]] Tensor graphed(const Tensor &x) { return kiln::sin(x); }
[[kiln::compile("mode=default")]] Tensor default_mode(const Tensor &x) { return kiln::sin(x); }
[[kiln::compile("mode=max-autotune")]] Tensor autotuned(const Tensor &x) { return kiln::sin(x); }
[[kiln::compile("mode=max-autotune-no-cudagraphs")]] Tensor autotuned_plain(const Tensor &x) { return kiln::sin(x); }
