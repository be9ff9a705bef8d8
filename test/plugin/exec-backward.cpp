// [[kiln::compile("backward")]]: the backward derived, fused and compiled at
// build time (AOTAutograd). A call autograd records runs the forward
// kernels and records one node; backward() runs the backward's kernels.
// Gradients against eager autograd (the original body, fast paths off) and
// against eager autograd in float64; counters prove both compiled paths
// ran (2 compiled calls, no fallback) and the plan shows what fused.
// The CPU loops only (a CUDA build of the same is exec-backward-cuda.cpp's).
// RUN: %kiln_cxx -fplugin-arg-kiln-cuda=off -c %s -o %t.o -Rpass=kiln 2> %t.remarks
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --check-prefixes=CHECK,%compiled
// explain.json says what the backward saves and assumes:
// RUN: rm -rf %t.dbg && %kiln_cxx -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dbg -c %s -o %t.dbg.o
// RUN: python3 %S/debug/Inputs/flatjson.py %t.dbg/exec-backward.cpp/xent/explain.json | FileCheck %s --check-prefix=JSON
// JSON: fast_paths[0].backward.status = "compiled"
// JSON: fast_paths[0].backward.gradients = 1
// JSON: fast_paths[0].backward.saves[0] = "the tensor arguments"
// JSON: fast_paths[0].backward.saves_also[0] = "%{{[0-9]+}} (logsumexp, line {{[0-9]+}})"
// JSON: fast_paths[0].backward.assumes[0] = "'onehot' does not require grad"
// JSON: fast_paths[0].backward.assumes[1] = "'onehot' has the shape of 'logits'"
#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

// The specialisation with a weight and a bias:
// REMARK-DAG: compiled 'ln_gelu_res (region 1, specialisation 1) (backward)': {{.*}} fused into 2 kernels
// REMARK-DAG: backward: saves the tensor arguments; recomputes every other value
[[kiln::compile("backward", "dtypes=f32")]] kiln::Tensor
ln_gelu_res(const kiln::Tensor &x, const kiln::Tensor &w,
            const kiln::Tensor &b) {
  return x + kiln::gelu(kiln::layer_norm(x, w, b, 1e-5), "tanh");
}

// The loss of a classifier: logsumexp over the classes minus the logit of
// the right one (a one-hot mask), averaged over the rows.
// The forward saves the logsumexp per row; the backward reads it (and
// computes no gradient for the one-hot targets): one kernel, which divides
// the output gradient by the row count itself (once per thread).
// REMARK-DAG: compiled 'xent (backward)': {{.*}} fused into 1 kernel
// REMARK-DAG: backward: saves the tensor arguments, {{.*}} (logsumexp, line
// REMARK-DAG: backward: assumes 'onehot' does not require grad
// REMARK-DAG: backward: assumes 'onehot' has the shape of 'logits' (checked when autograd records a call
[[kiln::compile("backward=logits", "dtypes=f32")]] kiln::Tensor
xent(const kiln::Tensor &logits, const kiln::Tensor &onehot) {
  kiln::Tensor picked = kiln::sum(logits * onehot, -1);
  return kiln::mean(kiln::logsumexp(logits, -1) - picked);
}

// Softmax written by hand: the max's gradient arrives as wide as x (its
// keepdim result is broadcast back), and is summed over the row first.
// REMARK-DAG: compiled 'softmax_by_hand (backward)': {{.*}} fused into 1 kernel
[[kiln::compile("backward", "dtypes=f32")]] kiln::Tensor
softmax_by_hand(const kiln::Tensor &x) {
  kiln::Tensor e = kiln::exp(x - kiln::amax(x, -1, true));
  return e / kiln::sum(e, -1, true);
}

// A weight broadcast along the rows, a host scalar, a cast: the weight's
// gradient is as wide as x, summed to [C] by autograd.
[[kiln::compile("backward", "dtypes=f32")]] kiln::Tensor
scaled_sin(const kiln::Tensor &x, const kiln::Tensor &w, double s) {
  return kiln::sin(x * w).to(kiln::f64) * s + kiln::tanh(x);
}

// RMS norm in f32 of a bf16 activation, cast back.
[[kiln::compile("backward", "dtypes=bf16")]] kiln::Tensor
rms_mixed(const kiln::Tensor &x, const kiln::Tensor &w) {
  return kiln::rms_norm(x.to(kiln::f32), w.to(kiln::f32), 1e-6).to(x.dtype());
}

// An MLP block: the products' gradients are products (GEMMs); the hidden
// pre-activation and activation are saved by the forward, not computed
// again.
// REMARK-DAG: compiled 'mlp (region 1, specialisation 1) (backward)': {{.*}} fused into 5 kernels (4 are library GEMMs)
// REMARK-DAG: backward: saves the tensor arguments, 'h' (linear, line [[@LINE+5]])
// REMARK-DAG: backward: assumes 'x' has 2 or more dims
[[kiln::compile("backward", "dtypes=f32")]] kiln::Tensor
mlp(const kiln::Tensor &x, const kiln::Tensor &w1, const kiln::Tensor &b1,
    const kiln::Tensor &w2, const kiln::Tensor &b2) {
  kiln::Tensor h = kiln::linear(x, w1, b1);
  return x + kiln::linear(kiln::gelu(h, "tanh"), w2, b2);
}

// Two results: no compiled backward (a remark says why); autograd records
// the original body's ops.
// REMARK-DAG: exec-backward.cpp:[[@LINE+1]]:{{.*}}no compiled backward: it returns 2 tensors
[[kiln::compile("backward", "dtypes=f32")]] void two(const kiln::Tensor &x, kiln::Tensor &s,
                                       kiln::Tensor &c) {
  s = kiln::sin(x);
  c = kiln::cos(x);
}

// COMPILED: ln_gelu_res: compiled calls 2, fallbacks 0, grads 3, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: ln_gelu_res: compiled calls 0, fallbacks 1, grads 3, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: xent: compiled calls 2, fallbacks 0, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: xent: compiled calls 0, fallbacks 1, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: softmax_by_hand: compiled calls 2, fallbacks 0, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: softmax_by_hand: compiled calls 0, fallbacks 1, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: scaled_sin: compiled calls 2, fallbacks 0, grads 2, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: scaled_sin: compiled calls 0, fallbacks 1, grads 2, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: rms_mixed bf16: compiled calls 2, fallbacks 0, grads 2, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: rms_mixed bf16: compiled calls 0, fallbacks 1, grads 2, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: mlp 2-D: compiled calls 2, fallbacks 0, grads 5, vs eager {{.*}} ok, vs f64 {{.*}} ok
// COMPILED: mlp 3-D, weights only: compiled calls 2, fallbacks 0, grads 4, vs eager {{.*}} ok, vs f64 {{.*}} ok
// FORCED: mlp 2-D: compiled calls 0, fallbacks 1, grads 5, vs eager {{.*}} ok, vs f64 {{.*}} ok
// CHECK: two: compiled calls 0, fallbacks 1, grads 1, vs eager {{.*}} ok, vs f64 {{.*}} ok
// CHECK: twice through one node: ok
// CHECK: saved then updated: backward raised
// CHECK-NOT: MISMATCH

using Fn = std::function<kiln::Tensor(const std::vector<kiln::Tensor> &)>;

// exec-backward-cuda.cpp runs the same on the GPU.
#ifdef KILN_BACKWARD_ON_CUDA
const kiln::Device dev = kiln::Device::cuda(0);
#else
const kiln::Device dev = kiln::Device::cpu();
#endif

// Gradients of sum(f(inputs) * probe) with respect to the inputs that
// require grad, as fresh leaves of `dt`.
struct Run {
  std::vector<kiln::Tensor> grads;
  kiln::Stats stats;
};
Run grads_of(const Fn &f, const std::vector<kiln::Tensor> &inputs,
             const std::vector<bool> &want, kiln::DType dt,
             const kiln::Tensor &probe) {
  std::vector<kiln::Tensor> leaves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    kiln::Tensor t = kiln::is_floating(inputs[i].dtype()) ? inputs[i].to(dt).clone()
                                                   : inputs[i].clone();
    if (want[i])
      t.requires_grad_();
    leaves.push_back(t);
  }
  kiln::reset_stats();
  kiln::Tensor y = f(leaves);
  y.backward(probe.to(y.dtype()));
  Run r;
  r.stats = kiln::stats();
  for (size_t i = 0; i < leaves.size(); ++i)
    if (want[i])
      r.grads.push_back(leaves[i].grad());
  return r;
}

double rel_err(const kiln::Tensor &a, const kiln::Tensor &ref) {
  std::vector<double> av =
      a.to(kiln::f64).to(kiln::Device::cpu()).to_vector<double>();
  std::vector<double> rv =
      ref.to(kiln::f64).to(kiln::Device::cpu()).to_vector<double>();
  double worst = av.size() == rv.size() ? 0 : INFINITY, scale = 0;
  for (double v : rv)
    scale = std::fmax(scale, std::fabs(v));
  for (size_t i = 0; i < av.size() && i < rv.size(); ++i)
    worst = std::fmax(worst, std::fabs(av[i] - rv[i]) / (scale + 1e-30));
  return std::isnan(worst) ? INFINITY : worst;
}

void check(const char *name, const Fn &f,
           const std::vector<kiln::Tensor> &inputs,
           const std::vector<bool> &want, kiln::DType dt, double tol) {
  kiln::Tensor y0;
  {
    kiln::no_grad ng;
    kiln::set_compiled_enabled(false);
    std::vector<kiln::Tensor> cast;
    for (const kiln::Tensor &t : inputs)
      cast.push_back(kiln::is_floating(t.dtype()) ? t.to(dt) : t);
    y0 = f(cast);
    kiln::set_compiled_enabled(true);
  }
  kiln::Tensor probe = kiln::randn(y0.sizes(), kiln::f64, dev);
  Run compiled = grads_of(f, inputs, want, dt, probe);
  kiln::set_compiled_enabled(false);
  Run eager = grads_of(f, inputs, want, dt, probe);
  Run exact = grads_of(f, inputs, want, kiln::f64, probe);
  kiln::set_compiled_enabled(true);
  double e_eager = 0, e_exact = 0, e_ref = 0;
  for (size_t i = 0; i < compiled.grads.size(); ++i) {
    e_eager = std::fmax(e_eager, rel_err(compiled.grads[i], eager.grads[i]));
    e_exact = std::fmax(e_exact, rel_err(compiled.grads[i], exact.grads[i]));
    e_ref = std::fmax(e_ref, rel_err(eager.grads[i], exact.grads[i]));
    if (compiled.grads[i].dtype() != eager.grads[i].dtype() ||
        !(compiled.grads[i].sizes() == eager.grads[i].sizes()))
      e_eager = INFINITY;
  }
  // Compiled within the tolerance of float64, and no further from it than
  // a few times eager's own error.
  bool ok_exact = e_exact <= std::fmax(tol, 4 * e_ref);
  std::printf("%s: compiled calls %d, fallbacks %d, grads %d, vs eager %.3g "
              "%s, vs f64 %.3g %s\n",
              name, int(compiled.stats.compiled_calls),
              int(compiled.stats.fallback_calls), int(compiled.grads.size()),
              e_eager, e_eager <= tol ? "ok" : "MISMATCH", e_exact,
              ok_exact ? "ok" : "MISMATCH");
}

int main() {
  kiln::manual_seed(11);
  const int N = 37, C = 203;
  kiln::Tensor x = kiln::randn({N, C}, kiln::f32, dev);
  kiln::Tensor w = kiln::randn({C}, kiln::f32, dev);
  kiln::Tensor b = kiln::randn({C}, kiln::f32, dev);
  check("ln_gelu_res",
        [](const auto &a) { return ln_gelu_res(a[0], a[1], a[2]); },
        {x, w, b}, {true, true, true}, kiln::f32, 2e-5);

  std::vector<float> hot(size_t(N * C), 0.0f);
  for (int i = 0; i < N; ++i)
    hot[size_t(i * C + (i * 7) % C)] = 1.0f;
  kiln::Tensor onehot = kiln::from_vector(hot, {N, C}).to(dev);
  check("xent", [](const auto &a) { return xent(a[0], a[1]); },
        {x * 3.0, onehot}, {true, false}, kiln::f32, 2e-5);

  check("softmax_by_hand",
        [](const auto &a) { return softmax_by_hand(a[0]); }, {x * 2.0},
        {true}, kiln::f32, 2e-5);

  check("scaled_sin",
        [](const auto &a) { return scaled_sin(a[0], a[1], 0.75); },
        {x, w}, {true, true}, kiln::f32, 2e-5);

  check("rms_mixed bf16",
        [](const auto &a) { return rms_mixed(a[0], a[1]); }, {x, w},
        {true, true}, kiln::bf16, 2e-2);

  {
    kiln::Tensor w1 = kiln::randn({96, C}, kiln::f32, dev) * 0.1;
    kiln::Tensor b1 = kiln::randn({96}, kiln::f32, dev);
    kiln::Tensor w2 = kiln::randn({C, 96}, kiln::f32, dev) * 0.1;
    kiln::Tensor b2 = kiln::randn({C}, kiln::f32, dev);
    auto f = [](const auto &a) { return mlp(a[0], a[1], a[2], a[3], a[4]); };
    check("mlp 2-D", f, {x, w1, b1, w2, b2}, {true, true, true, true, true},
          kiln::f32, 1e-4);
    // Batched rows: the weights' gradients come out per batch, summed.
    kiln::Tensor x3 = kiln::randn({3, 5, C}, kiln::f32, dev);
    check("mlp 3-D, weights only", f, {x3, w1, b1, w2, b2},
          {false, true, true, true, true}, kiln::f32, 1e-4);
  }

  check("two",
        [](const auto &a) {
          kiln::Tensor s, c;
          two(a[0], s, c);
          return s * c;
        },
        {x}, {true}, kiln::f32, 2e-5);

  // A node's backward runs once per backward(); retain_graph runs it again
  // and the gradients accumulate.
  {
    kiln::Tensor xl = x.clone().requires_grad_();
    kiln::Tensor y = softmax_by_hand(xl);
    kiln::Tensor probe = kiln::randn(y.sizes(), kiln::f32, dev);
    y.backward(probe, true);
    kiln::Tensor once = xl.grad().clone();
    y.backward(probe);
    std::printf("twice through one node: %s\n",
                kiln::allclose(xl.grad(), once * 2.0, 1e-5, 1e-6)
                    ? "ok"
                    : "MISMATCH");
  }

  // The arguments are saved: writing one in place after the call makes
  // backward raise, as eager's saved tensors do.
  {
    kiln::Tensor xl = x.clone().requires_grad_();
    kiln::Tensor wl = w.clone();
    kiln::Tensor y = scaled_sin(xl, wl, 2.0);
    wl += 1.0;
    try {
      kiln::sum(y).backward();
      std::printf("saved then updated: MISMATCH (no error)\n");
    } catch (const kiln::Error &e) {
      std::printf("saved then updated: backward raised\n");
    }
  }
  return 0;
}
