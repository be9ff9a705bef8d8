// A LLaMA-style decoder block (llama_block.h), prefill and decode, compiled
// by Kiln: checked against the same block run eagerly, against a float64
// run of the eager block, and (with --write DIR) written out with its
// weights and inputs for PyTorch to check on identical numbers
// (bench/llama_check.py). Prints the kernels each call launched.
//
//   llama_block [--size small|7b] [--device cpu|cuda] [--write DIR]
//
// small (the default): hidden 256, 8 query heads over 2 key/value heads,
// MLP 688, batch 2 x 33 tokens; decode: batch 2, 40 cached tokens. 7b:
// LLaMA-7B's widths (hidden 4096, 32 heads, MLP 11008), 1 x 2048 prefill,
// 16 x 1 decode over a 2048-token cache (a GPU's work). bf16 throughout.
#include "llama_block.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

using kiln::Tensor;

namespace {

// max |a - b| / max |b|, in float64.
double rel(const Tensor &a, const Tensor &b) {
  Tensor a64 = a.to(kiln::Device::cpu()).to(kiln::f64);
  Tensor b64 = b.to(kiln::Device::cpu()).to(kiln::f64);
  const double scale = kiln::max_abs_diff(b64, kiln::zeros(b64.sizes(), kiln::f64));
  return kiln::max_abs_diff(a64, b64) / (scale > 0 ? scale : 1);
}

// The block's tensors as float64 on the CPU: the reference.
llama::Block widen(const llama::Block &b) {
  auto f = [](const Tensor &t) { return t.to(kiln::Device::cpu()).to(kiln::f64); };
  llama::Block r = b;
  for (Tensor *t : {&r.attn_norm, &r.wq, &r.wk, &r.wv, &r.wo, &r.mlp_norm,
                    &r.w_gate, &r.w_up, &r.w_down})
    *t = f(*t);
  return r;
}

// Raw tensors in one file, described by a JSON manifest beside it.
struct Writer {
  std::ofstream data, manifest;
  size_t offset = 0;
  bool first = true;
  Writer(const std::string &dir, const std::string &name)
      : data(dir + "/" + name + ".bin", std::ios::binary),
        manifest(dir + "/" + name + ".json") {
    manifest << "{\"file\": \"" << name << ".bin\", \"tensors\": [";
  }
  void put(const char *what, const Tensor &t) {
    Tensor c = t.to(kiln::Device::cpu()).contiguous();
    const size_t n = size_t(c.numel()) * c.element_size();
    data.write(static_cast<const char *>(c.data_ptr()), std::streamsize(n));
    manifest << (first ? "" : ", ") << "\n  {\"name\": \"" << what
             << "\", \"dtype\": \"" << kiln::dtype_name(c.dtype())
             << "\", \"shape\": [";
    for (int d = 0; d < c.dim(); ++d)
      manifest << (d ? ", " : "") << c.size(d);
    manifest << "], \"offset\": " << offset << "}";
    offset += n;
    first = false;
  }
  void weights(const llama::Block &b) {
    put("attn_norm", b.attn_norm), put("wq", b.wq), put("wk", b.wk);
    put("wv", b.wv), put("wo", b.wo), put("mlp_norm", b.mlp_norm);
    put("w_gate", b.w_gate), put("w_up", b.w_up), put("w_down", b.w_down);
  }
  ~Writer() {
    manifest << "\n]}\n";
  }
};

struct Run {
  Tensor compiled, eager;
  uint64_t launches = 0, compiled_calls = 0, fallbacks = 0;
};

template <class F> Run run(F f) {
  Run r;
  kiln::set_compiled_enabled(false);
  r.eager = f();
  kiln::set_compiled_enabled(true);
  kiln::reset_stats();
  r.compiled = f();
  kiln::Stats s = kiln::stats();
  r.launches = s.kernel_launches;
  r.compiled_calls = s.compiled_calls;
  r.fallbacks = s.fallback_calls;
  return r;
}

} // namespace

int main(int argc, char **argv) {
  std::string size = "small", write;
  kiln::Device dev = kiln::cuda_available() ? kiln::Device::cuda(0) : kiln::Device::cpu();
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc)
      size = argv[++i];
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      dev = !std::strcmp(argv[++i], "cpu") ? kiln::Device::cpu() : kiln::Device::cuda(0);
    else if (!std::strcmp(argv[i], "--write") && i + 1 < argc)
      write = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--size small|7b] [--device cpu|cuda] [--write DIR]\n",
                   argv[0]);
      return 2;
    }
  }
  llama::Config c;
  int64_t B = 1, T = 2048, DB = 16, S = 2048;
  if (size == "small") {
    c.hidden = 256, c.heads = 8, c.kv_heads = 2, c.mlp = 688;
    B = 2, T = 33, DB = 2, S = 40;
  }
  const kiln::DType dt = kiln::bf16;
  const int64_t D = c.head_dim();
  llama::Block blk = llama::make_block(c, 1, dt, dev);
  kiln::manual_seed(2);
  Tensor x = kiln::randn({B, T, c.hidden}, kiln::f32, dev).to(dt);
  Tensor xd = kiln::randn({DB, 1, c.hidden}, kiln::f32, dev).to(dt);
  Tensor kc = kiln::randn({DB, c.kv_heads, S, D}, kiln::f32, dev).to(dt);
  Tensor vc = kiln::randn({DB, c.kv_heads, S, D}, kiln::f32, dev).to(dt);
  Tensor cos, sin, dcos, dsin;
  llama::rope_tables(c, 0, T, dt, dev, cos, sin);
  llama::rope_tables(c, S, 1, dt, dev, dcos, dsin);

  Run pre = run([&] { return blk.prefill(x, cos, sin); });
  Run dec = run([&] { return blk.decode(xd, kc, vc, dcos, dsin); });
  // The same step over caches with room for 8 more tokens, written in
  // place at position S: eager's caches and the compiled call's, apart.
  auto room = [&](const Tensor &cache) {
    Tensor r = kiln::zeros({DB, c.kv_heads, S + 8, D}, dt, dev);
    r.slice(2, 0, S).copy_(cache);
    return r;
  };
  Tensor kc_e = room(kc), vc_e = room(vc), kc_c = room(kc), vc_c = room(vc);
  bool eager_turn = true;
  Run cached = run([&] {
    const bool e = eager_turn;
    eager_turn = false;
    return blk.decode_cached(xd, e ? kc_e : kc_c, e ? vc_e : vc_c, dcos, dsin, S);
  });

  // float64 references: the eager block on float64 copies, on the CPU.
  kiln::set_compiled_enabled(false);
  llama::Block wide = widen(blk);
  auto f64 = [](const Tensor &t) { return t.to(kiln::Device::cpu()).to(kiln::f64); };
  Tensor pre_ref = wide.prefill(f64(x), f64(cos), f64(sin));
  Tensor dec_ref = wide.decode(f64(xd), f64(kc), f64(vc), f64(dcos), f64(dsin));
  kiln::set_compiled_enabled(true);

  bool ok = true;
  auto report = [&](const char *what, const Run &r, const Tensor &ref) {
    const double ce = rel(r.compiled, r.eager), cr = rel(r.compiled, ref),
                 er = rel(r.eager, ref);
    // bf16: both runs round at each op's store; compiled keeps more in f32.
    const bool good = r.compiled_calls == 1 && r.fallbacks == 0 && ce < 3e-2 &&
                      cr < 3e-2 && cr <= 2 * er + 1e-2;
    ok &= good;
    std::printf("%-8s %s: compiled (%llu kernel launches) vs eager %.2e, vs "
                "float64 %.2e (eager vs float64 %.2e) %s\n",
                what, r.compiled.str().c_str(), (unsigned long long)r.launches,
                ce, cr, er, good ? "ok" : "MISMATCH");
  };
  std::printf("LLaMA-style block (%s): hidden %lld, %lld heads over %lld "
              "key/value heads, MLP %lld, bf16 on %s\n",
              size.c_str(), (long long)c.hidden, (long long)c.heads,
              (long long)c.kv_heads, (long long)c.mlp, dev.str().c_str());
  report("prefill", pre, pre_ref);
  report("decode", dec, dec_ref);
  report("decode, cache written in place", cached, dec_ref);
  {
    // What the compiled call wrote into the caches is eager's (position S,
    // and nothing else: the rest is as it was).
    const double dk = rel(kc_c, kc_e), dv = rel(vc_c, vc_e);
    const bool good = dk < 3e-2 && dv < 3e-2 &&
                      rel(kc_c.slice(2, 0, S), kc) == 0 &&
                      rel(vc_c.slice(2, S + 1, S + 8), kiln::zeros({DB, c.kv_heads, 7, D}, dt, dev)) == 0;
    ok &= good;
    std::printf("%-8s caches: compiled vs eager %.2e (keys), %.2e (values) %s\n",
                "decode", dk, dv, good ? "ok" : "MISMATCH");
  }

  if (!write.empty()) {
    {
      Writer w(write, "llama_prefill");
      w.weights(blk);
      w.put("x", x), w.put("cos", cos), w.put("sin", sin);
      w.put("kiln_out", pre.compiled);
    }
    {
      Writer w(write, "llama_decode");
      w.weights(blk);
      w.put("x", xd), w.put("k_cache", kc), w.put("v_cache", vc);
      w.put("cos", dcos), w.put("sin", dsin);
      w.put("kiln_out", dec.compiled);
    }
    std::printf("wrote %s/llama_{prefill,decode}.{json,bin} (heads %lld, "
                "kv_heads %lld, eps %g) for bench/llama_check.py\n",
                write.c_str(), (long long)c.heads, (long long)c.kv_heads, c.eps);
  }
  return ok ? 0 : 1;
}
