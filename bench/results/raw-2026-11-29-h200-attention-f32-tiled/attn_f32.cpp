// f32 attention through kiln::scaled_dot_product_attention (eager, no
// plugin): kernel time, 20 back-to-back calls per CUDA event pair (5 for
// the long shape), median of 30. Same method as the 2026-11-29 probe.
#include <kiln/kiln.h>
#include <kiln/timing.h>
#include <cstdio>
int main() {
  const kiln::Device d = kiln::Device::cuda(0);
  kiln::manual_seed(1);
  struct Shape { int64_t B, H, S, D; int inner; };
  for (Shape s : {Shape{16, 8, 1024, 64, 20}, Shape{2, 8, 4096, 128, 5}}) {
    auto mk = [&] { return kiln::randn({s.B, s.H, s.S, s.D}, kiln::DType::f32).to(d); };
    kiln::Tensor q = mk(), k = mk(), v = mk();
    for (bool causal : {false, true}) {
      auto f = [&] { (void)kiln::scaled_dot_product_attention(q, k, v, kiln::Tensor(), causal); };
      f();
      kiln::synchronize(d);
      double ms = kiln::median(kiln::time_calls(d, f, 3, 30, s.inner));
      double flops = 4.0 * s.B * s.H * double(s.S) * s.S * s.D * (causal ? 0.5 : 1.0);
      std::printf("{\"workload\": \"attention f32 %ldx%ldx%ldx%ld%s\", \"kt_ms\": %.4f, \"TFLOPs\": %.1f}\n",
                  (long)s.B, (long)s.H, (long)s.S, (long)s.D, causal ? " causal" : "", ms, flops / ms / 1e9);
    }
  }
}
