// Decode attention over a key/value cache and the new token's key and value
// (bf16, and one f32 shape, CUDA), five ways, each checked against the first and timed:
//   cat+sdpa      - kiln::cat of cache and new key (and value), then
//                   scaled_dot_product_attention (cuDNN where it loads): what
//                   a compiled decode ran before the pieces were fused;
//   pieces        - kiln::gen::attention_pieces: the decode kernels read the
//                   cache and the new key where they are; no cat in memory;
//   pieces+cats   - the same, writing the grown caches too (read once);
//   sdpa(cache)   - attention alone over a cache already grown (cuDNN for
//                   16-bit; f32 runs Kiln's own kernels), and
//   pieces(cache) - the decode kernels over that one piece.
// Kernel time: 20 back-to-back calls per event pair, median of 30; single
// call: one call per event pair, median of 30. Floor: the bytes each must
// move at the 1 GiB-copy bandwidth. Built with
//   cfg=build/bin/kiln-config
//   clang++-19 -O2 $($cfg --cxxflags) bench/experiments/decode_attention.cpp \
//     $($cfg --ldflags) -o .bench/decode_attention
#include <kiln/attention.h>
#include <kiln/join.h>
#include <kiln/kiln.h>
#include <kiln/stats.h>
#include <kiln/timing.h>

#include <cstdio>
#include <functional>
#include <string>

using namespace kiln;

int main() {
  const Device d = Device::cuda(0);
  const double bw = copy_bandwidth(d, size_t(1) << 30);
  std::printf("copy bandwidth %.3f TB/s, cuDNN %s\n", bw / 1e12,
              cudnn_attention_available() ? "loaded" : "absent");
  struct Shape {
    int64_t B, Hq, Hkv, S, D;
    DType dt = bf16;
  };
  std::printf("| shape | way | kernel ms | single ms | floor ms | launches | max |diff| vs cat+sdpa |\n"
              "|---|---|---|---|---|---|---|\n");
  for (Shape s : {Shape{16, 32, 32, 2048, 128}, Shape{16, 32, 8, 4096, 128},
                  Shape{1, 32, 32, 2048, 128}, Shape{64, 32, 8, 1024, 64},
                  Shape{16, 32, 32, 2048, 128, f32}}) {
    manual_seed(1);
    auto r = [&](int64_t H, int64_t N, int64_t D) {
      return randn({s.B, H, N, D}, f32, d).to(s.dt);
    };
    Tensor q = r(s.Hq, 1, s.D), kc = r(s.Hkv, s.S, s.D), vc = r(s.Hkv, s.S, s.D),
           k = r(s.Hkv, 1, s.D), v = r(s.Hkv, 1, s.D);
    Tensor K = cat({kc, k}, -2), V = cat({vc, v}, -2);
    Tensor kw = empty(K.sizes(), s.dt, d), vw = empty(V.sizes(), s.dt, d);
    const double cache = double(K.numel() + V.numel()) * element_size(s.dt);
    struct Way {
      const char *name;
      std::function<Tensor()> fn;
      double bytes;
    };
    Way ways[] = {
        {"cat+sdpa",
         [&] { return scaled_dot_product_attention(q, cat({kc, k}, -2), cat({vc, v}, -2)); },
         3 * cache},
        {"pieces", [&] { return gen::attention_pieces(q, {kc, k}, {vc, v}); }, cache},
        {"pieces+cats",
         [&] { return gen::attention_pieces(q, {kc, k}, {vc, v}, Tensor(), false, std::nullopt, kw, vw); },
         2 * cache},
        {"sdpa(cache)", [&] { return scaled_dot_product_attention(q, K, V); }, cache},
        {"pieces(cache)", [&] { return gen::attention_pieces(q, {K}, {V}); }, cache},
    };
    Tensor want = ways[0].fn().to(f32);
    for (Way &w : ways) {
      Tensor got = w.fn().to(f32);
      const double diff = amax(abs(got - want)).item<double>();
      reset_stats();
      w.fn();
      synchronize(d);
      const uint64_t launches = stats().kernel_launches;
      const double kt = median(time_calls(d, [&] { w.fn(); }, 5, 30, 20));
      const double sc = median(time_calls(d, [&] { w.fn(); }, 5, 30, 1));
      std::printf("| %s B%lld Hq%lld Hkv%lld S%lld+1 D%lld | %s | %.4f | %.4f | %.4f | %llu | %.2e |\n",
                  dtype_name(s.dt), (long long)s.B, (long long)s.Hq, (long long)s.Hkv,
                  (long long)s.S, (long long)s.D, w.name, kt, sc, w.bytes / bw * 1e3,
                  (unsigned long long)launches, diff);
    }
    if (amax(abs(kw.to(f32) - K.to(f32))).item<double>() != 0 ||
        amax(abs(vw.to(f32) - V.to(f32))).item<double>() != 0)
      std::printf("MISMATCH: the written cats differ from kiln::cat's\n");
  }
  return 0;
}
