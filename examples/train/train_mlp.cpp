// Training a small MLP with Kiln's autograd, a compiled forward and
// backward, and a compiled Adam step.
//
// A two-layer classifier (16 -> 64 -> 4, ReLU) learns the labels a fixed
// random "teacher" network gives to Gaussian inputs: cross-entropy loss,
// Adam, full-batch steps. The model is a [[kiln::compile("backward=...")]]
// function: while autograd records, its compiled kernels run and one node
// records the call, whose backward runs the backward Kiln derived and
// compiled at build time (GEMMs for the products, the ReLU's mask fused
// into the kernel between them); the loss is eager ops recorded by
// autograd (kiln/autograd.h). The Adam step is a [[kiln::compile]]
// function called inside kiln::no_grad, so it runs as one fused kernel per
// parameter. The same training runs twice in one
// process from the same seed - all eager (kiln::set_compiled_enabled(false))
// and compiled - and the two loss curves are printed side by side; they
// agree to float32 rounding.
//
//   train_mlp [--steps N] [--device cpu|cuda] [--csv FILE]
// plot_loss.py FILE out.png draws the CSV.
#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using kiln::Tensor;

// The Adam step (Kingma & Ba), in place, as optimizers write it: one kernel
// reading p, m, v, g and writing p, m, v.
[[kiln::compile]] void adam_step(Tensor &p, Tensor &m, Tensor &v,
                                 const Tensor &g, double lr, double b1,
                                 double b2, double eps, int64_t step) {
  m *= b1;
  m += g * (1 - b1);
  v *= b2;
  v += g * g * (1 - b2);
  double bc1 = 1 - std::pow(b1, double(step));
  double bc2 = 1 - std::pow(b2, double(step));
  p -= (m / bc1) / (kiln::sqrt(v / bc2) + eps) * lr;
}

// The model's forward pass, compiled with its backward for the parameters
// (x is data: a call where it requires grad runs this body as eager ops).
// The hidden layer's pre-activation is saved for the backward; the rest is
// recomputed there.
[[kiln::compile("backward=w1,b1,w2,b2")]] Tensor mlp(const Tensor &x,
                                                     const Tensor &w1,
                                                     const Tensor &b1,
                                                     const Tensor &w2,
                                                     const Tensor &b2) {
  return kiln::linear(kiln::relu(kiln::linear(x, w1, b1)), w2, b2);
}

// Mean cross-entropy of logits [N, C] against one-hot targets [N, C].
Tensor cross_entropy(const Tensor &logits, const Tensor &onehot) {
  return -kiln::mean(kiln::sum(kiln::log_softmax(logits, -1) * onehot, -1));
}

struct Run {
  std::vector<double> loss;
  double accuracy = 0;
  kiln::Stats stats;
};

Run train(bool compiled, int steps, kiln::Device dev) {
  kiln::set_compiled_enabled(compiled);
  kiln::manual_seed(42);
  const int64_t n = 512, in = 16, hidden = 64, classes = 4;
  Tensor x = kiln::randn({n, in}, kiln::f32, dev);
  // The teacher: a fixed random network; its argmax is the label.
  Tensor t1 = kiln::randn({32, in}, kiln::f32, dev);
  Tensor t2 = kiln::randn({classes, 32}, kiln::f32, dev);
  Tensor labels = kiln::argmax(kiln::matmul(kiln::tanh(kiln::matmul(x, t1.transpose(0, 1))),
                                            t2.transpose(0, 1)),
                               1);
  Tensor onehot =
      (labels.unsqueeze(1) == kiln::arange(classes, kiln::i64, dev)).to(kiln::f32);

  // Parameters, as PyTorch's nn.Linear initialises them (uniform in
  // +-1/sqrt(fan_in)).
  auto uniform = [&](kiln::Dims shape, int64_t fan_in) {
    double b = 1 / std::sqrt(double(fan_in));
    return ((kiln::rand(shape, kiln::f32, dev) * 2.0 - 1.0) * b).requires_grad_();
  };
  std::vector<Tensor> params = {uniform({hidden, in}, in), uniform({hidden}, in),
                                uniform({classes, hidden}, hidden),
                                uniform({classes}, hidden)};
  std::vector<Tensor> m, v;
  for (const Tensor &p : params) {
    m.push_back(kiln::zeros(p.sizes(), kiln::f32, dev));
    v.push_back(kiln::zeros(p.sizes(), kiln::f32, dev));
  }

  kiln::reset_stats();
  Run r;
  for (int step = 1; step <= steps; ++step) {
    Tensor logits = mlp(x, params[0], params[1], params[2], params[3]);
    Tensor loss = cross_entropy(logits, onehot);
    for (Tensor &p : params)
      p.mutable_grad() = Tensor(); // zero_grad
    loss.backward();
    r.loss.push_back(loss.item<double>());
    kiln::no_grad ng;
    for (size_t i = 0; i < params.size(); ++i)
      adam_step(params[i], m[i], v[i], params[i].grad(), 1e-2, 0.9, 0.999,
                1e-8, step);
  }
  {
    kiln::no_grad ng;
    Tensor pred = kiln::argmax(mlp(x, params[0], params[1], params[2], params[3]), 1);
    r.accuracy = kiln::mean((pred == labels).to(kiln::f32)).item<double>();
  }
  r.stats = kiln::stats();
  kiln::set_compiled_enabled(true);
  return r;
}

int main(int argc, char **argv) {
  int steps = 300;
  kiln::Device dev = kiln::Device::cpu();
  const char *csv = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      dev = std::strcmp(argv[++i], "cuda") ? kiln::Device::cpu()
                                           : kiln::Device::cuda();
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
      csv = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--steps N] [--device cpu|cuda] [--csv FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  Run eager = train(false, steps, dev);
  Run comp = train(true, steps, dev);

  std::printf("MLP 16-64-4, Adam lr 1e-2, %d full-batch steps on %s\n", steps,
              dev.str().c_str());
  std::printf("%6s  %12s  %12s  %10s\n", "step", "loss eager", "loss compiled",
              "|diff|");
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    double d = std::fabs(eager.loss[size_t(s)] - comp.loss[size_t(s)]);
    worst = std::fmax(worst, d / (1e-3 + std::fabs(eager.loss[size_t(s)])));
    if (s == 0 || (s + 1) % 25 == 0)
      std::printf("%6d  %12.6f  %12.6f  %10.2e\n", s + 1,
                  eager.loss[size_t(s)], comp.loss[size_t(s)], d);
  }
  std::printf("accuracy after training: eager %.3f, compiled %.3f\n",
              eager.accuracy, comp.accuracy);
  std::printf("compiled run: %llu compiled calls (forward and backward "
              "passes, Adam steps, the evaluation), %llu eager-body calls\n",
              (unsigned long long)comp.stats.compiled_calls,
              (unsigned long long)comp.stats.fallback_calls);
  // (Under KILN_FORCE_GUARD_FAILURE every call runs the eager body.)
  bool ok = worst < 1e-3 && comp.loss.back() < 0.5 * comp.loss.front() &&
            (kiln::force_guard_failure() ||
             (comp.stats.compiled_calls >= uint64_t(6 * steps) &&
              comp.stats.fallback_calls == 0));
  std::printf("largest relative loss difference %.2e: %s\n", worst,
              ok ? "ok" : "MISMATCH");
  if (csv) {
    FILE *f = std::fopen(csv, "w");
    if (!f) {
      std::perror(csv);
      return 1;
    }
    std::fprintf(f, "step,loss_eager,loss_compiled\n");
    for (int s = 0; s < steps; ++s)
      std::fprintf(f, "%d,%.9g,%.9g\n", s + 1, eager.loss[size_t(s)],
                   comp.loss[size_t(s)]);
    std::fclose(f);
  }
  return ok ? 0 : 1;
}
