// Training steps, forward and backward (issue 17): Kiln's compiled backward
// ([[kiln::compile("backward")]]) against the same functions' eager
// autograd, on fresh random inputs; bench/train_torch.py times PyTorch's
// side (eager and torch.compile) on the same shapes. A step is a call and
// backward() on its result, the leaves' gradients dropped before (so every
// step writes them afresh, as with optimizer.zero_grad(set_to_none=True)).
// Two figures, as kiln_bench: kernel time (20 steps between one pair of
// CUDA events, / 20) and single-step latency; kernel launches per step.
// Prints one JSON object per line.
//
//   train_bench [--reps N] [--only NAME] [--compiled-only]
#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using kiln::Tensor;

[[kiln::compile("backward", "dtypes=f32")]] Tensor
ln_gelu_res(const Tensor &x, const Tensor &w, const Tensor &b) {
  return x + kiln::gelu(kiln::layer_norm(x, w, b, 1e-5), "tanh");
}

// Softmax cross-entropy against one-hot targets, averaged over the rows.
[[kiln::compile("backward=logits", "dtypes=bf16")]] Tensor
xent(const Tensor &logits, const Tensor &onehot) {
  Tensor picked = kiln::sum(logits * onehot, -1);
  return kiln::mean(kiln::logsumexp(logits, -1) - picked);
}

// An MLP block (issue 13's shapes): two GEMMs, a tanh-GELU between them, a
// residual; its backward is four GEMMs and the GELU's derivative.
[[kiln::compile("backward", "dtypes=bf16")]] Tensor
mlp_block(const Tensor &x, const Tensor &w1, const Tensor &b1,
          const Tensor &w2, const Tensor &b2) {
  return x + kiln::linear(kiln::gelu(kiln::linear(x, w1, b1), "tanh"), w2, b2);
}

namespace {

struct Case {
  const char *name, *shape;
  double bytes; // fewest bytes a step moves (the MLP block: its FLOPs)
  std::vector<Tensor> inputs;
  std::vector<bool> grad;
  std::function<Tensor(const std::vector<Tensor> &)> fn;
  bool scalar = false; // backward() without a gradient
};

double rel_diff(const Tensor &a, const Tensor &b) {
  double num = kiln::max_abs_diff(a, b);
  double den =
      kiln::max_abs_diff(b, kiln::zeros(b.sizes(), b.dtype(), b.device()));
  return den > 0 ? num / den : num;
}

bool g_compiled_only = false; // --compiled-only: for profiling

void run(const Case &c, int reps) {
  kiln::Device dev = c.inputs[0].device();
  Tensor probe;
  {
    kiln::no_grad ng;
    Tensor y = c.fn(c.inputs);
    if (!c.scalar)
      probe = kiln::randn(y.sizes(), y.dtype(), dev);
  }
  std::vector<Tensor> leaves = c.inputs;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (c.grad[i])
      leaves[i].requires_grad_();
  auto step = [&] {
    for (size_t i = 0; i < leaves.size(); ++i)
      if (c.grad[i])
        leaves[i].mutable_grad() = Tensor();
    Tensor y = c.fn(leaves);
    if (c.scalar)
      y.backward();
    else
      y.backward(probe);
  };
  std::string out = std::string("{\"workload\": \"") + c.name +
                    "\", \"shape\": \"" + c.shape + "\", \"bytes\": " +
                    std::to_string(c.bytes);
  std::vector<std::vector<Tensor>> grads(2);
  for (int compiled = g_compiled_only ? 1 : 0; compiled < 2; ++compiled) {
    kiln::set_compiled_enabled(compiled != 0);
    step(); // warm: module loading, allocator
    kiln::reset_stats();
    step();
    kiln::Stats s = kiln::stats();
    for (size_t i = 0; i < leaves.size(); ++i)
      if (c.grad[i])
        grads[size_t(compiled)].push_back(leaves[i].grad().clone());
    double kt = kiln::median(kiln::time_calls(dev, step, 3, reps, 20));
    double st = kiln::median(kiln::time_calls(dev, step, 3, reps, 1));
    const char *side = compiled ? "compiled" : "eager";
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  ", \"%s_kernel_ms\": %.4f, \"%s_single_ms\": %.4f, "
                  "\"%s_launches\": %d, \"%s_compiled_calls\": %d, "
                  "\"%s_fallbacks\": %d",
                  side, kt, side, st, side, int(s.kernel_launches), side,
                  int(s.compiled_calls), side, int(s.fallback_calls));
    out += buf;
  }
  kiln::set_compiled_enabled(true);
  double worst = 0;
  for (size_t i = 0; i < grads[0].size() && i < grads[1].size(); ++i)
    worst = std::fmax(worst, rel_diff(grads[1][i].to(kiln::f32),
                                      grads[0][i].to(kiln::f32)));
  char buf[128];
  std::snprintf(buf, sizeof buf, ", \"grad_rel_diff\": %.3g}", worst);
  std::printf("%s%s\n", out.c_str(), buf);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  int reps = 30;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--compiled-only"))
      g_compiled_only = true;
  }
  kiln::Device dev = kiln::cuda_available() ? kiln::Device::cuda(0)
                                            : kiln::Device::cpu();
  kiln::manual_seed(0);
  std::vector<Case> cases;
  {
    const int64_t N = 16384, C = 4096;
    Case c{"layer norm + tanh-GELU + residual, fwd+bwd", "16384x4096 f32",
           // read x, write y; read x and dy, write dx (w, b, their
           // gradients: one row each)
           double(N * C) * 4 * 5, {}, {true, true, true}, {}, false};
    c.inputs = {kiln::randn({N, C}, kiln::f32, dev),
                kiln::randn({C}, kiln::f32, dev),
                kiln::randn({C}, kiln::f32, dev)};
    c.fn = [](const std::vector<Tensor> &a) {
      return ln_gelu_res(a[0], a[1], a[2]);
    };
    cases.push_back(std::move(c));
  }
  {
    const int64_t N = 16384, V = 32000;
    std::vector<float> hot(size_t(N * V), 0.0f);
    for (int64_t i = 0; i < N; ++i)
      hot[size_t(i * V + (i * 7919) % V)] = 1.0f;
    Case c{"softmax cross-entropy (one-hot), fwd+bwd", "16384x32000 bf16",
           // read logits and the one-hot (forward), read them again and
           // write dlogits (backward)
           double(N * V) * 2 * 5, {}, {true, false}, {}, true};
    c.inputs = {kiln::randn({N, V}, kiln::bf16, dev),
                kiln::from_vector(hot, {N, V}).to(kiln::bf16).to(dev)};
    c.fn = [](const std::vector<Tensor> &a) { return xent(a[0], a[1]); };
    cases.push_back(std::move(c));
  }
  {
    const int64_t N = 8192, C = 4096, H = 16384;
    Case c{"MLP block 4096-16384-4096 + residual, fwd+bwd", "8192 rows bf16",
           // FLOPs, not bytes: 6 GEMMs of 2*N*C*H (2 forward, 4 backward)
           6.0 * 2 * double(N) * C * H, {}, {true, true, true, true, true},
           {}, false};
    c.inputs = {kiln::randn({N, C}, kiln::bf16, dev),
                kiln::randn({H, C}, kiln::bf16, dev) * 0.02,
                kiln::randn({H}, kiln::bf16, dev) * 0.02,
                kiln::randn({C, H}, kiln::bf16, dev) * 0.02,
                kiln::randn({C}, kiln::bf16, dev) * 0.02};
    c.fn = [](const std::vector<Tensor> &a) {
      return mlp_block(a[0], a[1], a[2], a[3], a[4]);
    };
    cases.push_back(std::move(c));
  }
  for (const Case &c : cases)
    if (only.empty() || std::string(c.name).find(only) != std::string::npos)
      run(c, reps);
  return 0;
}
