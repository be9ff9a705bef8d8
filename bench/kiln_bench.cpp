// Kiln's side of the benchmark: each workload eager (the original bodies,
// kiln::set_compiled_enabled(false)) and compiled, timed with CUDA events
// on fresh random inputs, checked against each other, with the compiled
// path proven to run (kiln::stats). Two figures per side, never mixed:
// kernel time (20 back-to-back calls between one pair of events, / 20: the
// host runs ahead, as in Triton's do_bench) and single-call latency (one
// call per event pair: host overhead included). Medians of --reps.
// Prints one JSON object per line; bench/report.py makes the table.
//
//   kiln_bench [--device cuda|cpu] [--quick] [--reps N] [--only NAME]
//   kiln_bench --sweep   (row ops over the shapes of sweep_shapes() only)
//   kiln_bench --first-call [--eager]   (one call in a fresh process)
#include "workloads.h"

#include "llama_block.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

namespace {

struct Options {
  kiln::Device dev = kiln::cuda_available() ? kiln::Device::cuda(0)
                                            : kiln::Device::cpu();
  bool quick = false;
  int reps = 50;
  std::string only; // run only workloads whose name contains this
  bool sweep = false;
};

// Max |a - b| relative to max |b|, in float64 on the host.
double rel_diff(const Tensor &a, const Tensor &b) {
  double num = kiln::max_abs_diff(a, b);
  double den = kiln::max_abs_diff(b, kiln::zeros(b.sizes(), b.dtype(), b.device()));
  return den > 0 ? num / den : num;
}

struct Workload {
  const char *name;
  const char *shape;
  double bytes;     // fewest bytes a call must move (inputs read once, output written once)
  double bytes_alg; // bytes the algorithm must move when more (0: same)
  double tol;       // compiled vs eager, relative
  std::function<Tensor()> call;
  double flops = 0; // matrix products: 2*M*N*K per product (floor by FLOPs)
  // Workloads that update their inputs: puts the initial state back before
  // each checked call (not timed), so compiled and eager start alike.
  std::function<void()> reset = [] {};
};

// Calls per event pair for kernel time.
constexpr int kBackToBack = 20;

void run(const Options &o, const Workload &w) {
  if (!o.only.empty() && std::string(w.name).find(o.only) == std::string::npos)
    return;
  std::printf("{\"workload\": \"%s\", \"shape\": \"%s\", \"device\": \"%s\", "
              "\"bytes\": %.0f, \"bytes_alg\": %.0f, \"flops\": %.0f",
              w.name, w.shape, o.dev.str().c_str(), w.bytes, w.bytes_alg, w.flops);
  auto single = [&] {
    return kiln::median(kiln::time_calls(o.dev, [&] { w.call(); }, 3, o.reps));
  };
  auto kernel = [&] {
    return kiln::median(
        kiln::time_calls(o.dev, [&] { w.call(); }, 3, o.reps, kBackToBack));
  };
  try {
    kiln::set_compiled_enabled(false);
    w.reset();
    Tensor eager = w.call().clone();
    double eager_ms = single(), eager_kt = kernel();
    kiln::set_compiled_enabled(true);
    w.reset();
    kiln::reset_stats();
    Tensor compiled = w.call();
    kiln::synchronize(o.dev);
    kiln::Stats st = kiln::stats();
    bool ran = st.compiled_calls == 1;
    double diff = rel_diff(compiled, eager);
    std::printf(", \"eager_ms\": %.6f, \"eager_kt_ms\": %.6f", eager_ms, eager_kt);
    if (ran) {
      double ms = single(), kt = kernel();
      std::printf(", \"compiled_ms\": %.6f, \"compiled_kt_ms\": %.6f, "
                  "\"kernels_per_call\": %llu",
                  ms, kt, (unsigned long long)st.kernel_launches);
    } else {
      std::printf(", \"compiled\": \"unsupported\"");
    }
    std::printf(", \"rel_diff\": %.3g, \"ok\": %s}\n", diff,
                !ran || diff <= w.tol ? "true" : "false");
  } catch (const std::exception &e) {
    std::printf(", \"error\": \"%s\"}\n", e.what());
  }
  std::fflush(stdout);
}

// Small calls: microseconds per call, two ways (as for the large
// workloads): kernel time, over runs of 200 back-to-back calls per event
// pair (the host's cost hides behind the GPU's only if it is smaller), and
// single-call latency, one call per event pair from an idle stream. Also
// the kernels one call runs and, for mode=reduce-overhead functions, how
// many of the timed calls were CUDA-graph replays.
void run_small(const Options &o, const char *name, const char *shape,
               const std::function<Tensor()> &call) {
  if (!o.only.empty() && std::string(name).find(o.only) == std::string::npos)
    return;
  std::printf("{\"workload\": \"%s\", \"shape\": \"%s\", \"device\": \"%s\", "
              "\"small\": true",
              name, shape, o.dev.str().c_str());
  auto back_to_back = [&] {
    return kiln::median(kiln::time_calls(o.dev, [&] { call(); }, 100, o.reps, 200)) * 1e3;
  };
  auto single = [&] {
    return kiln::median(kiln::time_calls(o.dev, [&] { call(); }, 100, o.reps)) * 1e3;
  };
  kiln::set_compiled_enabled(false);
  Tensor eager = call().clone();
  double eager_us = back_to_back(), eager_single = single();
  kiln::set_compiled_enabled(true);
  kiln::reset_stats();
  Tensor compiled = call();
  kiln::synchronize(o.dev);
  kiln::Stats st = kiln::stats();
  bool ran = st.compiled_calls == 1;
  std::printf(", \"eager_us\": %.3f, \"eager_single_us\": %.3f", eager_us,
              eager_single);
  if (ran) {
    double us = back_to_back(), one = single();
    kiln::Stats after = kiln::stats();
    std::printf(", \"compiled_us\": %.3f, \"compiled_single_us\": %.3f, "
                "\"kernels_per_call\": %llu, \"graph_replays\": %llu, "
                "\"rel_diff\": %.3g",
                us, one, (unsigned long long)st.kernel_launches,
                (unsigned long long)after.graph_replays, rel_diff(compiled, eager));
  } else {
    std::printf(", \"compiled\": \"unsupported\"");
  }
  std::printf("}\n");
  std::fflush(stdout);
}

// Row ops over the shapes people run (issue 14): rows of 16 (an MoE
// router's experts) to 32000 (a vocabulary) columns, a few rows (256: the
// GPU is not full) and many (2^25 elements). bench/torch_bench.py --sweep runs the same.
void sweep(const Options &o) {
  const kiln::Device d = o.dev;
  std::printf("{\"bandwidth\": %.6g, \"device\": \"%s\"}\n",
              kiln::copy_bandwidth(d, o.quick ? (1 << 22) : (size_t(1) << 30)),
              d.str().c_str());
  for (int64_t cols : {16, 32, 64, 128, 768, 1024, 4096, 8192, 32000})
    for (int64_t rows : {int64_t(256), (int64_t(1) << (o.quick ? 16 : 25)) / cols}) {
      const double e = double(rows) * double(cols);
      Tensor x = kiln::randn({rows, cols}, kiln::f32, d);
      Tensor w = kiln::randn({cols}, kiln::f32, d), b = kiln::randn({cols}, kiln::f32, d);
      Tensor xh = x.to(kiln::bf16), wh = w.to(kiln::bf16);
      char name[96], shape[64];
      auto named = [&](const char *op, const char *dt) {
        std::snprintf(name, sizeof name, "sweep %s %lldx%lld", op, (long long)rows,
                      (long long)cols);
        std::snprintf(shape, sizeof shape, "%lldx%lld %s", (long long)rows,
                      (long long)cols, dt);
      };
      named("softmax", "f32");
      run(o, {name, shape, 8 * e, 0, 1e-5, [&] { return softmax_rows(x); }});
      named("layer norm", "f32");
      run(o, {name, shape, 8 * e + 8.0 * cols, 0, 1e-5,
              [&] { return layer_norm_rows(x, w, b); }});
      named("RMS norm", "bf16");
      run(o, {name, shape, 4 * e + 2.0 * cols, 0, 1e-2,
              [&] { return rms_norm_rows(xh, wh); }});
    }
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  bool first_call = false, eager = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      o.quick = true, o.reps = 3;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      o.dev = !std::strcmp(argv[++i], "cpu") ? kiln::Device::cpu()
                                             : kiln::Device::cuda(0);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      o.only = argv[++i];
    else if (!std::strcmp(argv[i], "--first-call"))
      first_call = true;
    else if (!std::strcmp(argv[i], "--eager"))
      eager = true;
    else if (!std::strcmp(argv[i], "--sweep"))
      o.sweep = true;
  }
  if (o.sweep) {
    sweep(o);
    return 0;
  }
  if (first_call) {
    // Process start to the first result of sin(x) + cos(y) on 2^20 floats.
    kiln::set_compiled_enabled(!eager);
    Tensor x = kiln::randn({1 << 20}, kiln::f32, o.dev);
    Tensor y = kiln::randn({1 << 20}, kiln::f32, o.dev);
    Tensor r = sin_plus_cos(x, y);
    kiln::synchronize(o.dev);
    std::printf("{\"first_call\": \"%s\", \"compiled_calls\": %llu}\n",
                eager ? "eager" : "compiled",
                (unsigned long long)kiln::stats().compiled_calls);
    return 0;
  }

  const int64_t n = o.quick ? (1 << 16) : (int64_t(1) << 26);
  const kiln::Device d = o.dev;
  Tensor x = kiln::randn({n}, kiln::f32, d), y = kiln::randn({n}, kiln::f32, d);
  Tensor xs = kiln::randn({n}, kiln::f32, d).to(kiln::f32);
  const double fn = double(n);

  std::printf("{\"bandwidth\": %.6g, \"device\": \"%s\"}\n",
              kiln::copy_bandwidth(d, o.quick ? (1 << 22) : (size_t(1) << 30)),
              d.str().c_str());
  char s1[64];
  std::snprintf(s1, sizeof s1, "%lld f32", (long long)n);
  run(o, {"sin(x)+cos(y)", s1, 12 * fn, 0, 1e-6, [&] { return sin_plus_cos(x, y); }});
  run(o, {"sin^2x+cos^2x", s1, 8 * fn, 0, 1e-6, [&] { return sin2_cos2(x); }});
  run(o, {"seed (c+x)(c-x)", s1, 12 * fn, 0, 1e-6, [&] { return seed_model(y, x); }});
  run(o, {"tanh-GELU", s1, 8 * fn, 0, 1e-6, [&] { return gelu_tanh(x); }});
  run(o, {"3x: x=sin x+cos x", s1, 8 * fn, 0, 1e-6, [&] { return sin_cos_loop(x); }});
  // A value that depends on every element gates every output: x is read
  // twice (the second time after the sum), so 12 B/element is the floor
  // of any algorithm; 8 B/element would need all of x on chip.
  run(o, {"where(sum(x)>t,2x,x)", s1, 8 * fn, 12 * fn, 1e-6,
          [&] { return where_sum(xs, 0.0); }});
  run(o, {"var(x)", s1, 4 * fn, 0, 1e-5, [&] { return var_all(x); }});

  {
    // State updated in place; the step number makes the bias corrections
    // runtime scalars.
    Tensor p0 = kiln::randn({n}, kiln::f32, d), m0 = kiln::randn({n}, kiln::f32, d) * 0.1,
           v0 = kiln::abs(kiln::randn({n}, kiln::f32, d)) * 0.01,
           g = kiln::randn({n}, kiln::f32, d);
    Tensor p = p0.clone(), m = m0.clone(), v = v0.clone();
    Workload w{"Adam step (in place)", s1, 28 * fn, 0, 1e-5, [&] {
                 adam_step(p, m, v, g, 1e-3, 0.9, 0.999, 1e-8, 10);
                 return p;
               }};
    w.reset = [&] {
      p.copy_(p0);
      m.copy_(m0);
      v.copy_(v0);
    };
    run(o, w);
  }

  const int64_t srows = o.quick ? 64 : 32768, scols = 1024;
  Tensor sx = kiln::randn({srows, scols}, kiln::f32, d);
  char s2[64];
  std::snprintf(s2, sizeof s2, "%lldx%lld f32", (long long)srows, (long long)scols);
  run(o, {"softmax", s2, 8.0 * srows * scols, 0, 1e-5,
          [&] { return softmax_rows(sx); }});
  run(o, {"log_softmax", s2, 8.0 * srows * scols, 0, 1e-5,
          [&] { return log_softmax_rows(sx); }});
  run(o, {"softmax, composed", s2, 8.0 * srows * scols, 0, 1e-5,
          [&] { return softmax_composed(sx); }});
  run(o, {"logsumexp loss", s2, 4.0 * srows * scols, 0, 1e-5,
          [&] { return lse_loss(sx); }});
  {
    const int64_t B = o.quick ? 1 : 8, T = o.quick ? 16 : 1024, C = 4096, H = 32;
    Tensor hx = kiln::randn({B, T, C}, kiln::f32, d), hb = kiln::randn({C}, kiln::f32, d);
    char sh[64];
    std::snprintf(sh, sizeof sh, "%lldx%lldx%lld f32, 32 heads", (long long)B,
                  (long long)T, (long long)C);
    run(o, {"bias, head split, softmax", sh, 8.0 * B * T * C, 0, 1e-5,
            [&] { return bias_heads_softmax(hx, hb, H); }});
  }

  const int64_t lrows = o.quick ? 64 : 16384, lcols = 4096;
  Tensor lx = kiln::randn({lrows, lcols}, kiln::f32, d);
  Tensor lw = kiln::randn({lcols}, kiln::f32, d), lb = kiln::randn({lcols}, kiln::f32, d);
  char s3[64];
  std::snprintf(s3, sizeof s3, "%lldx%lld f32", (long long)lrows, (long long)lcols);
  run(o, {"layer norm", s3, 8.0 * lrows * lcols, 0, 1e-5,
          [&] { return layer_norm_rows(lx, lw, lb); }});
  run(o, {"layer norm, composed", s3, 8.0 * lrows * lcols, 0, 1e-5,
          [&] { return layer_norm_composed(lx, lw, lb); }});

  {
    const int64_t B = o.quick ? 1 : 8, H = o.quick ? 2 : 16, T = o.quick ? 64 : 1024;
    Tensor s = kiln::randn({B, H, T, T}, kiln::f32, d).to(kiln::bf16);
    // Causal: key j visible from query i when j <= i.
    Tensor i = kiln::arange(T, kiln::f32, d).reshape({T, 1});
    Tensor keep = kiln::arange(T, kiln::f32, d).reshape({1, T}) <= i;
    char s8[64];
    std::snprintf(s8, sizeof s8, "%lldx%lldx%lldx%lld bf16, [T, T] mask",
                  (long long)B, (long long)H, (long long)T, (long long)T);
    run(o, {"masked softmax", s8, 4.0 * B * H * T * T + double(T * T), 0, 1e-2,
            [&] { return masked_softmax(s, keep, 0.125); }});
  }

  Tensor rx = lx.to(kiln::bf16), rw = lw.to(kiln::bf16);
  char s4[64];
  std::snprintf(s4, sizeof s4, "%lldx%lld bf16", (long long)lrows, (long long)lcols);
  // bf16: compiled keeps f32 between steps, eager rounds each op's result
  // to bf16 (one bf16 ulp apart at most).
  run(o, {"RMS norm", s4, 4.0 * lrows * lcols, 0, 1e-2,
          [&] { return rms_norm_rows(rx, rw); }});
  run(o, {"RMS norm, mixed precision", s4, 4.0 * lrows * lcols, 0, 1e-2,
          [&] { return rms_norm_mixed(rx, rw); }});

  // Matrix products: the floor is FLOPs over the matrix units' rate, not
  // bytes (report.py). bf16 as models run them; f32 with TF32 off.
  if (d.is_cuda() || o.quick) {
    const int64_t M = o.quick ? 64 : 8192, K = o.quick ? 64 : 4096, N = K;
    Tensor mx = kiln::randn({M, K}, kiln::bf16, d);
    Tensor mw = (kiln::randn({N, K}, kiln::f32, d) * (1.0 / std::sqrt(double(K)))).to(kiln::bf16);
    Tensor mb = kiln::randn({N}, kiln::bf16, d);
    char s5[96];
    std::snprintf(s5, sizeof s5, "%lldx%lld @ %lldx%lld bf16", (long long)M,
                  (long long)K, (long long)K, (long long)N);
    double fl = 2.0 * M * N * K;
    run(o, {"linear+bias+tanh-GELU", s5, 2.0 * (M * K + N * K + N + M * N), 0, 1e-2,
            [&] { return linear_bias_gelu(mx, mw, mb); }, fl});
    Tensor lg = kiln::randn({K}, kiln::bf16, d), lbias = kiln::randn({K}, kiln::bf16, d);
    Tensor kw = (kiln::randn({K, N}, kiln::f32, d) * (1.0 / std::sqrt(double(K)))).to(kiln::bf16);
    run(o, {"layer norm+tanh-GELU+matmul", s5, 2.0 * (M * K + N * K + 2 * K + M * N), 0, 1e-2,
            [&] { return norm_gelu_matmul(mx, lg, lbias, kw); }, fl});
    const int64_t H = 4 * K;
    Tensor w1 = (kiln::randn({H, K}, kiln::f32, d) * (1.0 / std::sqrt(double(K)))).to(kiln::bf16);
    Tensor w2 = (kiln::randn({K, H}, kiln::f32, d) * (1.0 / std::sqrt(double(H)))).to(kiln::bf16);
    Tensor b1 = kiln::randn({H}, kiln::bf16, d), b2 = kiln::randn({K}, kiln::bf16, d);
    char s6[96];
    std::snprintf(s6, sizeof s6, "%lldx%lld, %lld->%lld->%lld bf16", (long long)M,
                  (long long)K, (long long)K, (long long)H, (long long)K);
    run(o, {"MLP block (+residual)", s6, 2.0 * (2 * M * K + 2 * H * K + H + K), 0, 1e-2,
            [&] { return mlp_block(mx, w1, b1, w2, b2); }, 4.0 * M * H * K});
    // Self-attention as model code (B, T, C, H): the floor is its FLOPs.
    const int64_t AB = o.quick ? 1 : 8, AT = o.quick ? 64 : 1024,
                  AC = o.quick ? 64 : 1024, AH = o.quick ? 1 : 16;
    Tensor ax = kiln::randn({AB, AT, AC}, kiln::bf16, d);
    Tensor aqkv = (kiln::randn({3 * AC, AC}, kiln::f32, d) * (1.0 / std::sqrt(double(AC)))).to(kiln::bf16);
    Tensor awo = (kiln::randn({AC, AC}, kiln::f32, d) * (1.0 / std::sqrt(double(AC)))).to(kiln::bf16);
    char s8[96];
    std::snprintf(s8, sizeof s8, "B=%lld T=%lld C=%lld H=%lld bf16", (long long)AB,
                  (long long)AT, (long long)AC, (long long)AH);
    run(o, {"self-attention (model code)", s8,
            2.0 * (2 * AB * AT * AC + 4 * AC * AC), 0, 2e-2,
            [&] { return self_attention(ax, aqkv, awo, AH); },
            2.0 * AB * AT * AC * 4 * AC + 4.0 * AB * AT * AT * AC});
    // Attention, fused (B, H, T, D): the floor is its FLOPs (4 B H T^2 D,
    // half of it causal) or its bytes (q, k, v read once, o written once).
    struct Att {
      const char *name;
      int64_t B, H, T, D;
      kiln::DType dt;
      bool causal;
    };
    for (Att a : {Att{"attention", 16, 8, 1024, 64, kiln::bf16, false},
                  Att{"attention, causal", 16, 8, 1024, 64, kiln::bf16, true},
                  Att{"attention f32", 16, 8, 1024, 64, kiln::f32, false},
                  Att{"attention, T=4096 D=128", 4, 16, 4096, 128, kiln::bf16, false},
                  Att{"attention, T=4096 D=128 causal", 4, 16, 4096, 128, kiln::bf16,
                      true}}) {
      if (o.quick)
        a.B = 1, a.H = 2, a.T = 64;
      Tensor q = kiln::randn({a.B, a.H, a.T, a.D}, kiln::f32, d).to(a.dt);
      Tensor k = kiln::randn({a.B, a.H, a.T, a.D}, kiln::f32, d).to(a.dt);
      Tensor v = kiln::randn({a.B, a.H, a.T, a.D}, kiln::f32, d).to(a.dt);
      char sa[96];
      std::snprintf(sa, sizeof sa, "B=%lld H=%lld T=%lld D=%lld %s%s", (long long)a.B,
                    (long long)a.H, (long long)a.T, (long long)a.D,
                    kiln::dtype_name(a.dt), a.dt == kiln::f32 ? " (no TF32)" : "");
      const double n = double(a.B * a.H * a.T * a.D);
      run(o, {a.name, sa, 4.0 * n * kiln::element_size(a.dt), 0, 1e-6,
              [&, a] {
                return a.causal ? attention_causal(q, k, v) : attention(q, k, v);
              },
              4.0 * n * double(a.T) * (a.causal ? 0.5 : 1.0)});
    }
    // A LLaMA-style decoder block at LLaMA-7B's widths (issue 15):
    // prefill, 1 x 2048 tokens, causal; decode, 16 sequences of one new
    // token over a 2048-token cache. Floors: the FLOPs (prefill) and the
    // bytes of the weights and caches read once (decode).
    {
      llama::Config c;
      if (o.quick)
        c.hidden = 256, c.heads = 8, c.kv_heads = 8, c.mlp = 688;
      const int64_t T = o.quick ? 64 : 2048, DB = o.quick ? 2 : 16,
                    S = o.quick ? 64 : 2048, D = c.head_dim(), C = c.hidden;
      llama::Block blk = llama::make_block(c, 1, kiln::bf16, d);
      Tensor x = kiln::randn({1, T, C}, kiln::f32, d).to(kiln::bf16);
      Tensor cos, sin, dcos, dsin;
      llama::rope_tables(c, 0, T, kiln::bf16, d, cos, sin);
      llama::rope_tables(c, S, 1, kiln::bf16, d, dcos, dsin);
      const double wparams = double(C) * (2 * C + 2 * c.kv_heads * D) +
                             3.0 * double(C) * double(c.mlp) + 2.0 * C;
      char sp[128];
      std::snprintf(sp, sizeof sp, "1x%lld, hidden %lld, %lld heads, MLP %lld bf16",
                    (long long)T, (long long)C, (long long)c.heads, (long long)c.mlp);
      run(o, {"LLaMA block prefill", sp, 2.0 * (wparams + 2.0 * T * C), 0, 5e-2,
              [&] { return blk.prefill(x, cos, sin); },
              2.0 * T * wparams + 2.0 * T * T * C});
      Tensor xd = kiln::randn({DB, 1, C}, kiln::f32, d).to(kiln::bf16);
      Tensor kc = kiln::randn({DB, c.kv_heads, S, D}, kiln::f32, d).to(kiln::bf16);
      Tensor vc = kiln::randn({DB, c.kv_heads, S, D}, kiln::f32, d).to(kiln::bf16);
      char sd[128];
      std::snprintf(sd, sizeof sd, "%lldx1, cache %lld, hidden %lld bf16",
                    (long long)DB, (long long)S, (long long)C);
      run(o, {"LLaMA block decode", sd,
              2.0 * (wparams + 2.0 * DB * c.kv_heads * S * D + 2.0 * DB * C), 0, 5e-2,
              [&] { return blk.decode(xd, kc, vc, dcos, dsin); }});
    }
    const int64_t S = o.quick ? 64 : 4096;
    Tensor fa = kiln::randn({S, S}, kiln::f32, d), fb = kiln::randn({S, S}, kiln::f32, d);
    char s7[64];
    std::snprintf(s7, sizeof s7, "%lld^3 f32 (no TF32)", (long long)S);
    run(o, {"matmul f32", s7, 12.0 * S * S, 0, 1e-5,
            [&] { return matmul_plain(fa, fb); }, 2.0 * S * S * S});
  }

  Tensor tx = kiln::randn({4096}, kiln::f32, d), ty = kiln::randn({4096}, kiln::f32, d);
  run_small(o, "small sin+cos", "4096 f32", [&] { return sin_plus_cos(tx, ty); });
  Tensor gx = kiln::randn({32, 1024}, kiln::f32, d);
  Tensor gw = kiln::randn({1024}, kiln::f32, d), gb = kiln::randn({1024}, kiln::f32, d);
  run_small(o, "small layer norm+GELU", "32x1024 f32",
            [&] { return layer_norm_gelu(gx, gw, gb); });
  Tensor mg = kiln::randn({1024}, kiln::f32, d), mb = kiln::randn({1024}, kiln::f32, d);
  run_small(o, "small chain", "32x1024 f32, LN + 8 pointwise + softmax",
            [&] { return small_chain(gx, mg, mb); });
  run_small(o, "small chain graphed", "32x1024 f32, LN + 8 pointwise + softmax",
            [&] { return small_chain_graphed(gx, mg, mb); });
  Tensor m1 = kiln::randn({64, 1024}, kiln::f32, d) * (1.0 / 32);
  Tensor m2 = kiln::randn({1024, 64}, kiln::f32, d) * (1.0 / 8);
  run_small(o, "small model", "32x1024 f32, MLP 1024-64-1024 twice",
            [&] { return small_model(gx, mg, mb, m1, m2); });
  run_small(o, "small model graphed", "32x1024 f32, MLP 1024-64-1024 twice",
            [&] { return small_model_graphed(gx, mg, mb, m1, m2); });
  if (d.is_cuda())
    std::printf("{\"bare_launch_us\": %.3f}\n", kiln::bare_launch_us(d));
  return 0;
}
