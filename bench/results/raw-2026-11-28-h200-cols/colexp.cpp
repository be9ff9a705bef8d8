// Reductions over a dim that is not the innermost (rows that are
// neighbours in memory: column mode): kernel time, the compiled path's use,
// and the error against a float64 reference, for one plugin build (TAG).
#include <kiln/kiln.h>
#include <cstdio>
#include <functional>
using kiln::Tensor;
[[kiln::compile]] Tensor log_softmax0(const Tensor &x) { return kiln::log_softmax(x, 0); }
[[kiln::compile]] Tensor softmax0(const Tensor &x) { return kiln::softmax(x, 0); }
[[kiln::compile]] Tensor softmax1(const Tensor &x) { return kiln::softmax(x, 1); }
[[kiln::compile]] Tensor mean1(const Tensor &x) { return kiln::mean(x, 1); }
[[kiln::compile]] Tensor sum0(const Tensor &x) { return kiln::sum(x, 0); }
[[kiln::compile]] Tensor var0(const Tensor &x) { return kiln::var(x, 0, false, 0); }
[[kiln::compile]] Tensor lse1(const Tensor &x) { return kiln::logsumexp(x, 1); }
#ifndef TAG
#define TAG "?"
#endif
static void one(const char *name, kiln::DType dt, const kiln::Dims &shape, double bytes,
                const std::function<Tensor()> &fn, const Tensor &ref) {
  kiln::Device d = kiln::Device::cuda(0);
  kiln::reset_stats();
  Tensor c = fn();
  kiln::synchronize(d);
  const bool ran = kiln::stats().compiled_calls == 1;
  const double err = kiln::max_abs_diff(c.to(kiln::f64), ref);
  const double kt = kiln::median(kiln::time_calls(d, [&] { fn(); }, 3, 30, 20));
  std::printf("%s\t%s %s\t%s\t%.4f\tran=%d\terr64=%.2g\t%.0fGB/s\n", TAG, name,
              kiln::dtype_name(dt), shape.str().c_str(), kt, ran, err, bytes / kt / 1e6);
}
int main() {
  kiln::Device d = kiln::Device::cuda(0);
  struct C { const char *name; kiln::Dims shape; kiln::DType dt; int k; };
  // k: 0 log_softmax0, 1 softmax0, 2 softmax1, 3 mean1, 4 sum0, 5 var0, 6 lse1
  const C cases[] = {
      {"log_softmax dim 0", {4096, 1024}, kiln::f32, 0},
      {"softmax dim 0", {4096, 1024}, kiln::bf16, 1},
      {"softmax dim 1", {32, 64, 4096}, kiln::f32, 2},
      {"mean dim 1", {64, 197, 768}, kiln::f32, 3},
      {"mean dim 1", {64, 197, 768}, kiln::bf16, 3},
      {"sum dim 0", {8192, 4096}, kiln::f32, 4},
      {"var dim 0", {4096, 1024}, kiln::f32, 5},
      {"logsumexp dim 1", {16, 2048, 512}, kiln::f32, 6},
      {"sum dim 0", {65536, 64}, kiln::f32, 4},
  };
  for (const C &c : cases) {
    Tensor x = kiln::randn(c.shape, kiln::f32, d).to(c.dt);
    Tensor x64 = x.to(kiln::f64);
    const double n = double(x.numel()), e = double(kiln::element_size(c.dt));
    switch (c.k) {
    case 0: one(c.name, c.dt, c.shape, 2 * e * n, [&] { return log_softmax0(x); }, kiln::log_softmax(x64, 0)); break;
    case 1: one(c.name, c.dt, c.shape, 2 * e * n, [&] { return softmax0(x); }, kiln::softmax(x64, 0)); break;
    case 2: one(c.name, c.dt, c.shape, 2 * e * n, [&] { return softmax1(x); }, kiln::softmax(x64, 1)); break;
    case 3: one(c.name, c.dt, c.shape, e * n, [&] { return mean1(x); }, kiln::mean(x64, 1)); break;
    case 4: one(c.name, c.dt, c.shape, e * n, [&] { return sum0(x); }, kiln::sum(x64, 0)); break;
    case 5: one(c.name, c.dt, c.shape, e * n, [&] { return var0(x); }, kiln::var(x64, 0, false, 0)); break;
    case 6: one(c.name, c.dt, c.shape, e * n, [&] { return lse1(x); }, kiln::logsumexp(x64, 1)); break;
    }
  }
}
