// The LLaMA block's kernels one by one, for Nsight Compute: builds the
// block of examples/llama at LLaMA-7B's widths (bf16, CUDA), warms up, then
// runs `--calls` calls of prefill or decode between cudaProfilerStart and
// cudaProfilerStop, so that
//   ncu --profile-from-start off --clock-control none --cache-control none \
//       --metrics gpu__time_duration.sum --csv ./llama_decode_prof decode
// lists exactly those calls' kernels (bench/experiments/llama_torch_prof.py
// does the same for torch.compile's block). Built with
//   cfg=build/bin/kiln-config
//   clang++-19 -O2 -fplugin=$($cfg --plugin) -fplugin-arg-kiln-arch=sm_90 \
//     $($cfg --cxxflags) -Iexamples/llama -I/usr/local/cuda/include \
//     bench/experiments/llama_decode_prof.cpp $($cfg --ldflags) \
//     -L/usr/local/cuda/lib64 -lcudart -o llama_decode_prof
// `cached` is the decode step over caches updated in place
// (decode_cached). Also prints the kernel time of a call (20 back-to-back calls per event
// pair, median of `--reps`), its single-call latency (one call per event
// pair from an idle stream) and the launches a call makes.
#include "llama_block.h"

#include <kiln/timing.h>

#include <cuda_profiler_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  const std::string which = argc > 1 ? argv[1] : "decode";
  int calls = 3, reps = 30;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--calls"))
      calls = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
  }
  const kiln::Device d = kiln::Device::cuda(0);
  llama::Config c;
  const int64_t T = 2048, DB = 16, S = 2048, D = c.head_dim(), C = c.hidden;
  llama::Block blk = llama::make_block(c, 1, kiln::bf16, d);
  kiln::Tensor x = kiln::randn({1, T, C}, kiln::f32, d).to(kiln::bf16);
  kiln::Tensor cos, sin, dcos, dsin;
  llama::rope_tables(c, 0, T, kiln::bf16, d, cos, sin);
  llama::rope_tables(c, S, 1, kiln::bf16, d, dcos, dsin);
  kiln::Tensor xd = kiln::randn({DB, 1, C}, kiln::f32, d).to(kiln::bf16);
  kiln::Tensor kc = kiln::randn({DB, c.kv_heads, S, D}, kiln::f32, d).to(kiln::bf16);
  kiln::Tensor vc = kiln::randn({DB, c.kv_heads, S, D}, kiln::f32, d).to(kiln::bf16);
  // `cached`: the decode step over static caches of 4096 positions, the
  // first S filled, written in place at S (llama::Block::decode_cached).
  kiln::Tensor kcap, vcap;
  if (which == "cached") {
    kcap = kiln::zeros({DB, c.kv_heads, 4096, D}, kiln::bf16, d);
    vcap = kiln::zeros({DB, c.kv_heads, 4096, D}, kiln::bf16, d);
    kcap.slice(2, 0, S).copy_(kc);
    vcap.slice(2, 0, S).copy_(vc);
  }
  auto call = [&] {
    return which == "prefill" ? blk.prefill(x, cos, sin)
           : which == "cached"
               ? blk.decode_cached(xd, kcap, vcap, dcos, dsin, S)
               : blk.decode(xd, kc, vc, dcos, dsin);
  };
  for (int i = 0; i < 10; ++i)
    call();
  kiln::synchronize(d);
  kiln::reset_stats();
  call();
  kiln::synchronize(d);
  const kiln::Stats st = kiln::stats();
  cudaProfilerStart();
  for (int i = 0; i < calls; ++i)
    call();
  kiln::synchronize(d);
  cudaProfilerStop();
  const double kt = kiln::median(kiln::time_calls(d, [&] { call(); }, 3, reps, 20));
  const double one = kiln::median(kiln::time_calls(d, [&] { call(); }, 3, reps));
  std::printf("%s: compiled calls %llu, launches a call %llu, kernel time %.4f ms, "
              "single call %.4f ms\n",
              which.c_str(), (unsigned long long)st.compiled_calls,
              (unsigned long long)st.kernel_launches, kt, one);
  return st.compiled_calls == 1 ? 0 : 1;
}
