// Code the capture cannot follow, next to code it can: a remark at the
// statement that stays eager (a graph break) and why, with the regions
// around it compiled. Never a crash.
// RUN: %kiln_verify %kiln_remarks -Xclang -verify-ignore-unexpected=remark %s
#include <kiln/kiln.h>

#include <cmath>
#include <functional>
#include <vector>

using kiln::Tensor;

void log_tensor(const Tensor &);
Tensor g_weight;

// 1. A call without a visible body.
[[kiln::compile]] Tensor opaque_call(const Tensor &x) {
  Tensor y = kiln::sin(x);
  log_tensor(y); // expected-remark {{kiln: graph break in 'opaque_call': call to 'log_tensor' is not supported yet (no body to inline); compiled 2 regions around it}}
  return kiln::cos(y);
}

// 2. Recursion.
[[kiln::compile]] Tensor recursive(const Tensor &x, int n) {
  Tensor y = kiln::exp(x);
  if (n > 0)
    y = recursive(y, n - 1); // expected-remark {{graph break in 'recursive': recursive call to 'recursive' is not inlined}}
  return y * 2;
}

// 3. Mutual recursion through helpers.
Tensor pong(const Tensor &x, int n);
inline Tensor ping(const Tensor &x, int n) { return n ? pong(x, n - 1) : x; }
inline Tensor pong(const Tensor &x, int n) { return n ? ping(x * 2, n - 1) : x; }
[[kiln::compile]] Tensor mutual(const Tensor &x) {
  Tensor y = kiln::relu(x);
  Tensor z = ping(y, 3); // expected-remark {{recursive call to 'ping' is not inlined (in 'pong', line 34)}}
  return z + 1;
}

// 4. A loop on tensor data.
[[kiln::compile]] Tensor data_loop(Tensor x) {
  x = x * 4;
  while (kiln::amax(x).item<float>() > 1) // expected-remark {{graph break in 'data_loop': the loop's trip count is not a compile-time constant: the loop runs eagerly, its body compiled on its own}}
    x = x * 0.5;
  return x + 1;
}

// 5. A branch on tensor data.
[[kiln::compile]] Tensor data_branch(const Tensor &x) {
  Tensor y = kiln::sin(x);
  if (kiln::sum(y).item<double>() > 0) // expected-remark {{the branch condition reads tensor data ('item()'), a data-dependent value, so the 'if' runs eagerly and its arms are compiled on their own}}
    y = -y;
  return y + 2;
}

// 6. A loop too long to unroll.
[[kiln::compile]] Tensor long_loop(const Tensor &x) {
  Tensor y = kiln::exp(x);
  for (int i = 0; i < 100; ++i) // expected-remark {{the loop runs more than 64 times, too many to unroll}}
    y = y * 0.99;
  return y;
}

// 7. Too many specialisations.
[[kiln::compile]] Tensor flags(const Tensor &x, bool a, bool b, bool c, bool d) {
  Tensor y = kiln::sin(x);
  if (a) y = y + 1;
  if (b) y = y + 2;
  if (c) y = y + 3;
  if (d) y = y + 4; // expected-remark {{branching here would make more than 8 specialisations of the region}}
  return y;
}

// 8. 'break' out of a loop that runs eagerly, in one specialisation.
[[kiln::compile]] Tensor early_exit(Tensor x, int n, bool stop) {
  for (int i = 0; i < n; ++i) {
    x = kiln::tanh(x);
    if (stop)
      break; // expected-remark {{'break' leaves a loop that runs eagerly (the specialisations that reach it run the region's original code)}}
  }
  return x;
}

// 9. A 'switch'.
[[kiln::compile]] Tensor switches(const Tensor &x, int mode) {
  Tensor y = kiln::abs(x);
  switch (mode) { // expected-remark {{'switch' statement is not supported yet}}
  case 0:
    y = -y;
    break;
  default:
    break;
  }
  return y * 3;
}

// 10. A 'throw'.
[[kiln::compile]] Tensor throws(const Tensor &x) {
  Tensor y = kiln::sqrt(x);
  throw kiln::Error("no"); // expected-remark {{graph break in 'throws': 'throw' runs eagerly}}
  return y;
}

// 11. A 'try' block.
[[kiln::compile]] Tensor tries(const Tensor &x) {
  Tensor y = kiln::sqrt(x);
  try { // expected-remark {{a 'try' block is not captured: it runs eagerly and its statements are compiled on their own}}
    y = y * 2;
  } catch (...) {
    y = x;
  }
  return y + 1;
}

// 12. Inline assembly.
[[kiln::compile]] Tensor assembly(const Tensor &x) {
  Tensor y = kiln::exp(x);
  asm volatile("" ::: "memory"); // expected-remark {{inline assembly is not supported yet}}
  return y * y;
}

// 13. A static local.
[[kiln::compile]] Tensor statics(const Tensor &x) {
  Tensor y = kiln::exp(x);
  static int calls = 0; // expected-remark {{static local 'calls' is not supported yet}}
  ++calls;
  return y * calls;
}

// 14. A tensor declared without a value, used before one is assigned
// (eager raises there). Assigning it and defined() are captured.
[[kiln::compile]] Tensor undefined(const Tensor &x, bool flag) {
  Tensor y = kiln::exp(x);
  Tensor t;
  if (flag)
    t = y;
  if (!t.defined())
    y = y * 2;
  return t + 1; // expected-remark {{'t' is undefined here (default-constructed, no value assigned on this path); of an undefined tensor only assignment, defined() and optional arguments are captured, so this runs eagerly}}
}

// 15. '?:' between tensors on tensor data (on a host scalar it
// specialises the region, as an 'if' does).
[[kiln::compile]] Tensor choose(const Tensor &x, const Tensor &z, bool b) {
  Tensor y = b ? kiln::exp(x) : x;
  Tensor w = kiln::sum(y).item<double>() > 0 ? y : z; // expected-remark {{the conditional operator '?:' is not supported yet (use kiln::where)}}
  return w * 2;
}

// 16. An indirect call.
[[kiln::compile]] Tensor indirect(const Tensor &x, Tensor (*f)(const Tensor &)) {
  Tensor y = kiln::exp(x);
  Tensor z = f(y); // expected-remark {{indirect call is not supported yet}}
  return z * 2;
}

// 17. A virtual call.
struct Base {
  virtual Tensor act(const Tensor &x) const { return x; }
};
[[kiln::compile]] Tensor virtual_call(const Base &b, const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor z = b.act(y); // expected-remark {{virtual call to 'Base::act' is not supported yet}}
  return z * 2;
}

// 18. A call of a function marked "disable".
[[kiln::compile("disable")]] Tensor hands_off(const Tensor &x) { return x * 2; }
[[kiln::compile]] Tensor calls_disabled(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor z = hands_off(y); // expected-remark {{call to 'hands_off', marked [[kiln::compile("disable")]], is not inlined}}
  return z * 2;
}

// 19. The standard library.
[[kiln::compile]] Tensor library(const Tensor &x, const std::function<Tensor(const Tensor &)> &f) {
  Tensor y = kiln::exp(x);
  Tensor z = f(y); // expected-remark {{call to 'std::function<kiln::Tensor (const kiln::Tensor &)>::operator()' is not supported yet}}
  return z * 2;
}

// 20. A pointer.
[[kiln::compile]] Tensor pointer(const Tensor *p, const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor z = *p + y; // expected-remark {{expression (UnaryOperator) is not supported yet}}
  return z * 2;
}

// 21. In place on a copy of an input's handle: the storage is the
// caller's, so the region writes the update back into x (as eager code
// does through a), and reads of x after it see it: no break. Once x names
// another tensor, an update through a handle of the old one is a split.
[[kiln::compile]] Tensor alias_update(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor a = x;
  a += 1;
  return a * y + x;
}
[[kiln::compile]] void alias_update_rebound(Tensor &x, const Tensor &y) {
  Tensor a = x;
  x = y * 2;
  a += 1; // expected-remark {{in-place operator '+=' on 'a', which shares its storage with 'x' from outside the region (now another tensor), is not supported yet}}
}

// 22. <cmath> functions outside the op table (cbrt, hypot, asin, ...)
// are called where the region starts, so of parameters and sizes they
// compile (host_scalar_cases.h); of a value the region computes, they
// break. (The table's sqrt, exp, log, log1p, expm1, sin, ..., fmod, abs,
// floor, ceil, trunc, round, rint and nearbyint are graph ops of any
// scalar; so is float arithmetic.)
[[kiln::compile]] Tensor round_math(const Tensor &x, float f) {
  Tensor y = kiln::exp(x) * std::sqrt(f * 2.0f) * std::floor(f);
  float g = f * 2.0f;
  Tensor z = y * std::cbrt(double(g)); // expected-remark {{call to 'cbrt' of a value the region computes is not supported yet (outside Kiln's op table, a <cmath> function is called where the region starts, so its arguments must be constants, parameters or sizes the region has not changed)}}
  return z + std::cbrt(double(f)) + std::log1p(double(g));
}

// 23. cat of pieces whose number is known only at run time (split's
// std::vector; chunk's with a constant count is captured: exec-join).
[[kiln::compile]] Tensor cat_of_vector(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor z = kiln::cat(y.split(2, 0), 1); // expected-remark {{joining what split(), or chunk() of a run-time count, returns is not supported yet: the number of pieces is known only at run time (join them with constant indices in braces)}}
  return z + 1;
}

// 24. A lambda that captures by copy, used after a graph break: it stays
// with the eager code, and so do its calls.
[[kiln::compile]] Tensor lambda_later(const Tensor &x, double s) {
  Tensor y = kiln::exp(x);
  auto scale = [s](const Tensor &t) { return t * s; }; // expected-remark {{lambda 'scale', used after the compiled region, captures by copy (not supported yet)}}
  y = scale(y); // expected-remark {{'scale', declared outside the compiled region, is not supported yet here}}
  log_tensor(y); // expected-remark {{call to 'log_tensor'}}
  return scale(y) + y; // expected-remark {{'scale', declared outside the compiled region, is not supported yet here}}
}

// 25. Structured bindings used after a graph break.
static std::pair<Tensor, Tensor> halves(const Tensor &x) { return {x * 0.5, x - 0.5}; }
[[kiln::compile]] Tensor bindings_later(const Tensor &x) {
  Tensor y = kiln::exp(x);
  auto [a, b] = halves(y); // expected-remark {{structured bindings used after the compiled region are not supported yet}}
  log_tensor(a); // expected-remark {{call to 'log_tensor'}}
  return a * b + y;
}

// 26. Of a tensor the region computes, size(d) with a constant d and
// numel() are graph ops; dim() is not yet, and a run-time d is compiled
// for the last dim only.
[[kiln::compile]] Tensor computed_size(const Tensor &x, int64_t d) {
  Tensor s = kiln::sum(x, 0);
  Tensor t = s / s.size(0);
  Tensor u = t / s.numel() + double(s.dim()); // expected-remark {{'dim()' of a tensor the region computes or changes is not supported yet (its size(d) and numel() are)}}
  Tensor v = u * s.size(d); // expected-remark {{the dim of size() is a runtime value, compiled for the last dim only (-1 or dim() - 1); a call with another dim runs eagerly}}
  return v + 1;
}

// 26b. A dim written as `t.dim() - c` folds to -c when t is the tensor the
// op works on (views_cases.h's rank_relative runs it); another tensor's
// rank, or `t.dim() - 0` (no dim of t), is no constant.
[[kiln::compile]] Tensor rank_of_another(const Tensor &x, const Tensor &w) {
  Tensor a = kiln::softmax(x, x.dim() - 1);
  Tensor b = kiln::softmax(a, w.dim() - 1); // expected-remark {{the dim must be a compile-time constant}}
  return b + 1;
}
[[kiln::compile]] Tensor rank_itself(const Tensor &x) {
  Tensor a = kiln::exp(x);
  Tensor b = kiln::sum(a, a.dim() - 0); // expected-remark {{the dim must be a compile-time constant}}
  return b + 1;
}

// 27. A global tensor is an input like a parameter: no break.
[[kiln::compile]] Tensor global_input(const Tensor &x) {
  return x * g_weight + 1;
}

// 28. A conversion the graph cannot write as C++ does breaks at its
// statement: to 64-bit unsigned of a value that may be negative (to
// float, to 32 bits or fewer, and of sizes to size_t, it is a graph op).
[[kiln::compile]] Tensor narrowing(const Tensor &x, int64_t n, double t) {
  float f = t;
  int32_t k = n;
  uint32_t u = n;
  int16_t h = k;
  size_t rows = x.size(0);
  Tensor y = x * f + double(k) + double(u) + double(h) + double(rows);
  size_t s = n; // expected-remark {{conversion of a runtime scalar that may be negative to 'size_t' is not supported yet (of sizes, numel(), dim() and other values known not to be negative it is)}}
  return y + double(s); // expected-remark {{'s', an unsigned 64-bit scalar, is not supported yet (its values do not all fit the graph's int64)}}
}

// 29. What split() and chunk() return is captured where constants index it
// (exec-join runs those); an index known only at run time, one past
// chunk's count, the vector's size() and a vector from outside the
// function are breaks, and so is such a vector used after one.
[[kiln::compile]] Tensor piece_at_runtime(const Tensor &x, int64_t i) {
  Tensor a = kiln::exp(x) + 1;
  Tensor b = a.chunk(2, -1)[i] * 2; // expected-remark {{the index into what split() or chunk() returns must be a compile-time constant}}
  return b + 1;
}
[[kiln::compile]] Tensor piece_past_chunks(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor z = y.chunk(2, 0)[2]; // expected-remark {{index 2 is out of range for what chunk() returns}}
  return z + 1;
}
[[kiln::compile]] Tensor pieces_counted(const Tensor &x) {
  Tensor y = kiln::exp(x);
  Tensor z = y * double(y.split(2, 0).size()); // expected-remark {{the number of pieces split() or chunk() returns is not captured yet}}
  return z + 1;
}
[[kiln::compile]] Tensor pieces_from_outside(const std::vector<Tensor> &parts) {
  Tensor y = parts[1] * 2; // expected-remark {{'parts' of type 'const std::vector<Tensor>' is not supported yet}}
  return y + 1;
}
[[kiln::compile]] Tensor pieces_later(const Tensor &x) {
  auto parts = kiln::exp(x).chunk(2, -1); // expected-warning {{cannot compile 'pieces_later': 'parts' of type 'std::vector<Tensor>' (what split() or chunk() returns), used after the compiled region, is not supported yet (the region ends at line 315: call to 'log_tensor' is not supported yet (no body to inline)); 'pieces_later' runs eagerly}}
  log_tensor(parts[0]);
  return parts[1] + 1;
}
// A non-const reference to a piece could rebind the vector's element,
// which the pieces do not follow: a break (and so is the vector, used
// after the region that would make it).
[[kiln::compile]] Tensor piece_by_ref(const Tensor &x) {
  std::vector<Tensor> parts = kiln::exp(x).chunk(2, -1); // expected-remark {{'parts' of type 'std::vector<Tensor>' (what split() or chunk() returns), used after the compiled region, is not supported yet}}
  Tensor &h = parts[0]; // expected-remark {{a non-const reference to an element of what split() or chunk() returns is not supported yet (bind a const reference or a Tensor)}}
  return h * 2;
}

// 30. A std::vector of tensors the region declares is captured (exec-join
// runs those: push_back in unrolled loops, range-based for, size(),
// element assignment, cat and stack of it, and one handed on across a
// graph break); what is not: a walk over what chunk() returns (its length
// is known only at run time), a reference to such a vector, methods other
// than push_back / emplace_back / clear / pop_back / reserve, an index past
// the end, and a vector from before the region (after a break).
[[kiln::compile]] Tensor walk_chunks(const Tensor &x) {
  Tensor y = kiln::exp(x);
  for (const Tensor &p : y.chunk(2, -1)) // expected-remark {{a range-based 'for' over what split() or chunk() returns is not unrolled: the number of pieces is known only at run time (index them with constants, or join them with kiln::cat); the loop runs eagerly and its body is compiled on its own}}
    log_tensor(p * 2);
  return y + 1;
}
[[kiln::compile]] Tensor list_insert(const Tensor &x) {
  std::vector<Tensor> v = {kiln::exp(x)};
  v.insert(v.begin(), x); // expected-remark {{std::vector's 'insert' on a vector of tensors is not supported yet (push_back, emplace_back, clear, pop_back and reserve are)}}
  return v[0] + 1; // expected-remark {{'v', declared outside the compiled region, is not supported yet here}}
}
[[kiln::compile]] Tensor list_ref_to(const Tensor &x) {
  std::vector<Tensor> v;
  v.push_back(kiln::exp(x));
  std::vector<Tensor> &r = v; // expected-remark {{a reference to a std::vector of tensors is not supported yet (use the vector itself, or a copy)}}
  return r[0] + 1;
}
[[kiln::compile]] Tensor list_past_end(const Tensor &x) {
  std::vector<Tensor> v = {x, x * 2};
  Tensor y = kiln::exp(v[1]);
  return y + v[2]; // expected-remark {{index 2 is out of range for a std::vector of 2 tensors}}
}

// 31. Tensor::copy_ into a tensor argument or a view of one is captured
// (exec-store runs those: a cache written in place and read by attention
// in the same region); what is not: a copy_ into a tensor the region
// makes, into an argument the region updated with `+=` first, and a
// copy_ into an argument whose elements the region read before it (a
// kernel reading them could run after the write).
[[kiln::compile]] Tensor copy_into_cache(const Tensor &k, const Tensor &cache,
                                         int64_t S) {
  Tensor k2 = k * 2;
  cache.slice(1, S, S + 1).copy_(k2); // expected-remark {{copy_ of 'k2' (line 365) into a slice of 'cache' writes the argument in place (the kernel computing it writes it there, through the destination's strides, where the shapes agree; else the runtime's copy), after the kernels it reads and before those that read the argument again}}
  return kiln::sum(cache.slice(1, 0, S + 1), 1); // expected-remark {{slice of 'cache' (after the copy_ at line 366) is a view the host makes}}
}
[[kiln::compile]] Tensor copy_into_local(const Tensor &x) {
  Tensor t = kiln::exp(x);
  t.slice(0, 0, 1).copy_(x); // expected-remark {{copy_ into a tensor the region makes is not supported yet (into a tensor argument, or a view of one, it is)}}
  return t + 1;
}
[[kiln::compile]] Tensor copy_after_update(const Tensor &x, const Tensor &y) {
  Tensor h = x;
  h += 1;
  h.copy_(kiln::exp(y)); // expected-remark {{copy_ into 'x', updated in place or assigned earlier in the region, is not supported yet}}
  return y * 2;
}
[[kiln::compile]] Tensor copy_after_read(const Tensor &cache, const Tensor &k) {
  Tensor old = kiln::sum(cache, -1);
  cache.slice(1, 0, 1).copy_(k); // expected-remark {{copy_ into 'cache', whose elements the region reads before it, is not supported yet (a kernel reading them might run after the write)}}
  return old + kiln::amax(cache, -1);
}
