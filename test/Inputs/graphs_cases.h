// [[kiln::compile("mode=reduce-overhead")]] functions called as a program
// calls them (again and again, on the same and on new inputs), each call
// checked against the eager body on the same inputs: a replayed graph must
// read the inputs' current values, hand back results no later call
// overwrites, follow new shapes, scalars and streams, and write in-place
// updates. On CUDA the counters prove the calls were replays (the first
// call with a key runs plainly, the second captures, later ones replay); on
// the CPU there is no graph and every call runs the fast path.
#pragma once

#include "compare.h"

#include <kiln/interop.h>
#include <kiln/kiln.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using kiln::Tensor;

// Several kernels: a row reduction, a column reduction, pointwise work.
[[kiln::compile("mode=reduce-overhead")]] Tensor graphed_chain(
    const Tensor &x, const Tensor &w, const Tensor &b, double t) {
  Tensor h = kiln::gelu(kiln::layer_norm(x, w, b, 1e-5), "tanh");
  Tensor s = kiln::softmax(h * t, -1);
  return s * kiln::sum(s, 0, true) + kiln::mean(h, 0, true);
}

// A matrix product (cuBLASLt inside the graph) and a residual.
[[kiln::compile("mode=reduce-overhead")]] Tensor graphed_mlp(
    const Tensor &x, const Tensor &w1, const Tensor &w2) {
  return kiln::linear(kiln::gelu(kiln::linear(x, w1), "tanh"), w2) + x;
}

// An in-place update of an argument, nothing returned.
[[kiln::compile("mode=reduce-overhead")]] void graphed_axpy(Tensor &y,
                                                            const Tensor &x,
                                                            double a) {
  y += a * kiln::sin(x);
}

// Returns its argument, updated: a replay hands back a view of the
// argument of that call (the key fixes its address), not a stale tensor.
[[kiln::compile("mode=reduce-overhead")]] Tensor graphed_return_arg(Tensor &y,
                                                                   const Tensor &x) {
  y += x;
  return y;
}

// A cache written in place (copy_ into a slice of an argument), then
// read back: a replay writes this call's key into the cache before the
// kernels that read it.
[[kiln::compile("mode=reduce-overhead")]] Tensor graphed_cache_step(
    const Tensor &cache, const Tensor &k, int64_t s) {
  cache.slice(0, s, s + 1).copy_(kiln::tanh(k));
  return kiln::sum(cache.slice(0, 0, s + 1), 0);
}

namespace graphs_cases {

inline int g_cases = 0, g_mismatches = 0;

inline void expect(bool ok, const std::string &what) {
  ++g_cases;
  if (!ok) {
    ++g_mismatches;
    std::printf("MISMATCH %s\n", what.c_str());
  }
}

inline Tensor eager(const std::function<Tensor()> &fn) {
  kiln::set_compiled_enabled(false);
  Tensor r = fn();
  kiln::set_compiled_enabled(true);
  return r;
}

inline void same(const Tensor &got, const Tensor &want, const std::string &what) {
  double d = kiln_compare::difference(got, want, Tensor());
  expect(d <= kiln_compare::tolerance(want.dtype()),
         what + ": max diff " + std::to_string(d));
}

inline int run(kiln::Device dev) {
  const bool gpu = dev.is_cuda();
  const bool forced = kiln::force_guard_failure();
  kiln::manual_seed(7);
  auto rnd = [&](kiln::Dims s) { return kiln::randn(s, kiln::DType::f32, dev); };
  Tensor x = rnd({32, 1024}), w = rnd({1024}), b = rnd({1024});

  // 1. Calls on the same tensors with new values written into them: every
  // call reads what the inputs hold now.
  kiln::reset_stats();
  for (int i = 0; i < 6; ++i) {
    x.copy_(rnd({32, 1024}));
    Tensor got = graphed_chain(x, w, b, 0.5);
    same(got, eager([&] { return graphed_chain(x, w, b, 0.5); }),
         "chain call " + std::to_string(i));
  }
  kiln::Stats st = kiln::stats();
  std::printf("chain: %llu captures, %llu replays\n",
              (unsigned long long)st.graph_captures,
              (unsigned long long)st.graph_replays);
  if (gpu && !forced)
    expect(st.graph_captures == 1 && st.graph_replays == 4 &&
               st.compiled_calls == 6,
           "chain: one plain call, one capture, four replays");
  else
    expect(st.graph_captures == 0 && st.graph_replays == 0,
           "chain: no graph off the GPU or with every guard failing");

  // 2. Results held across calls are not overwritten by later calls.
  std::vector<Tensor> held, want;
  for (int i = 0; i < 6; ++i) {
    x.copy_(rnd({32, 1024}));
    held.push_back(graphed_chain(x, w, b, 0.5));
    want.push_back(eager([&] { return graphed_chain(x, w, b, 0.5); }));
  }
  for (size_t i = 0; i < held.size(); ++i)
    same(held[i], want[i], "held result " + std::to_string(i));
  held.clear();

  // 3. A new shape, a new scalar: new keys, right results.
  Tensor x2 = rnd({7, 1024});
  for (int i = 0; i < 3; ++i) {
    same(graphed_chain(x2, w, b, 0.5),
         eager([&] { return graphed_chain(x2, w, b, 0.5); }), "new shape");
    same(graphed_chain(x, w, b, 2.0),
         eager([&] { return graphed_chain(x, w, b, 2.0); }), "new scalar");
  }

  // 4. A matrix product inside the graph.
  Tensor a = rnd({64, 256}), w1 = rnd({512, 256}), w2 = rnd({256, 512});
  for (int i = 0; i < 4; ++i) {
    a.copy_(rnd({64, 256}));
    same(graphed_mlp(a, w1, w2), eager([&] { return graphed_mlp(a, w1, w2); }),
         "mlp call " + std::to_string(i));
  }

  // 5. In-place updates: each call adds once, replays included, and moves
  // the argument's version as an eager in-place op does.
  Tensor y = rnd({4096}), xs = rnd({4096});
  Tensor y_eager = y.clone();
  kiln::reset_stats();
  uint32_t v0 = y.storage()->version.load();
  for (int i = 0; i < 5; ++i) {
    graphed_axpy(y, xs, 0.25);
    kiln::set_compiled_enabled(false);
    graphed_axpy(y_eager, xs, 0.25);
    kiln::set_compiled_enabled(true);
  }
  same(y, y_eager, "in-place updates");
  expect(y.storage()->version.load() - v0 >= 5, "in-place: versions move");
  if (gpu && !forced)
    expect(kiln::stats().graph_replays == 3, "in-place: three replays");

  // 6. The argument returned: the replay's result is this call's argument.
  kiln::reset_stats();
  Tensor z = rnd({4096}), z_eager = z.clone();
  for (int i = 0; i < 4; ++i) {
    Tensor r = graphed_return_arg(z, xs);
    kiln::set_compiled_enabled(false);
    (void)graphed_return_arg(z_eager, xs);
    kiln::set_compiled_enabled(true);
    expect(r.data_ptr() == z.data_ptr(), "returned argument is the argument");
  }
  same(z, z_eager, "returned argument");
  if (gpu && !forced)
    expect(kiln::stats().graph_replays == 2 && kiln::stats().compiled_calls == 4,
           "returned argument: two replays");

  // 6b. A cache written in place by copy_: four steps at one position (a
  // plain call, a capture, two replays), then two at another (a new key):
  // the cache and every result as eager's.
  {
    kiln::reset_stats();
    Tensor cache = rnd({8, 256}), k = rnd({1, 256});
    Tensor cache_eager = cache.clone();
    for (int i = 0; i < 6; ++i) {
      const int64_t pos = i < 4 ? 3 : 5;
      k.copy_(rnd({1, 256}));
      Tensor got = graphed_cache_step(cache, k, pos);
      kiln::set_compiled_enabled(false);
      Tensor want = graphed_cache_step(cache_eager, k, pos);
      kiln::set_compiled_enabled(true);
      same(got, want, "cache step " + std::to_string(i));
    }
    same(cache, cache_eager, "cache written in place");
    if (gpu && !forced)
      expect(kiln::stats().graph_replays == 2 && kiln::stats().compiled_calls == 6,
             "cache step: two replays");
  }

  // 7. Another stream, and the allocator's cache emptied between calls
  // (the graphs' memory is theirs: it stays).
  if (gpu) {
    kiln::CudaStream s = kiln::create_cuda_stream(dev.index);
    {
      kiln::CudaStreamGuard on(s);
      for (int i = 0; i < 3; ++i) {
        x.copy_(rnd({32, 1024}));
        Tensor got = graphed_chain(x, w, b, 0.5);
        same(got, eager([&] { return graphed_chain(x, w, b, 0.5); }),
             "other stream");
      }
      kiln::synchronize(s);
    }
    kiln::destroy_cuda_stream(s);
    kiln::set_cuda_memory_limit(size_t(1) << 40, dev.index);
    kiln::set_cuda_memory_limit(0, dev.index);
    for (int i = 0; i < 3; ++i) {
      x.copy_(rnd({32, 1024}));
      same(graphed_chain(x, w, b, 0.5),
           eager([&] { return graphed_chain(x, w, b, 0.5); }),
           "after the cache was emptied");
    }
  }
  std::printf("%d cases, %d mismatches\n", g_cases, g_mismatches);
  return g_mismatches ? 1 : 0;
}

} // namespace graphs_cases
