// f32 attention (Kiln's own kernel; cuDNN takes only f16/bf16): kernel
// time of B=16, H=8, S=1024, D=64, plain and causal.
#include <kiln/kiln.h>
#include <kiln/timing.h>
#include <cstdio>
int main() {
  const kiln::Device d = kiln::Device::cuda(0);
  kiln::manual_seed(1);
  auto mk = [&] { return kiln::randn({16, 8, 1024, 64}, kiln::DType::f32).to(d); };
  kiln::Tensor q = mk(), k = mk(), v = mk();
  for (bool causal : {false, true}) {
    auto f = [&] { (void)kiln::scaled_dot_product_attention(q, k, v, kiln::Tensor(), causal); };
    f();
    kiln::synchronize(d);
    double ms = kiln::median(kiln::time_calls(d, f, 3, 30, 20));
    double flops = 4.0 * 16 * 8 * 1024.0 * 1024 * 64 * (causal ? 0.5 : 1.0);
    std::printf("{\"workload\": \"attention f32 16x8x1024x64%s\", \"kt_ms\": %.4f, \"TFLOPs\": %.1f}\n",
                causal ? " causal" : "", ms, flops / ms / 1e9);
  }
}
