// Independent products of one call on two (or three) streams, against one
// after another on one stream: does the second GEMM fill the multiprocessors
// the first's last wave leaves idle? The LLaMA block's prefill has two such
// groups: the q, k and v projections of one input, and the gate and up
// projections of another. Eager kiln::linear (cuBLASLt, its heuristic's
// algorithm), bf16, outputs made once; kernel time as the benchmarks take
// it (5 calls to warm up, then 20 back-to-back calls between one pair of
// events on the main stream, / 20, the median of 30 pairs), rounds
// alternating.
//
//   clang++-19 -O2 $(kiln-config --cxxflags) -I$CUDA/include
//     bench/experiments/gemm_streams.cpp $(kiln-config --ldflags)
//     -L$CUDA/lib64 -lcudart -o gemm_streams
#include "kernel_time.cuh" // CK, median

#include <kiln/interop.h>
#include <kiln/kiln.h>

#include <functional>
#include <vector>

using kiln::Tensor;

static cudaStream_t raw(kiln::CudaStream s) {
  return static_cast<cudaStream_t>(s.handle);
}

static float kernel_time(cudaStream_t s, const std::function<void()> &f) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 5; ++i)
    f();
  std::vector<float> t;
  for (int rep = 0; rep < 30; ++rep) {
    CK(cudaEventRecord(e0, s));
    for (int i = 0; i < 20; ++i)
      f();
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms / 20);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return median(t);
}

// y[i] = x @ w[i]^T into out[i]: on `main` one after another, or the i-th
// on streams[i] (streams[0] is main), forked from and joined into main.
struct Group {
  Tensor x;
  std::vector<Tensor> w, out;
};

static void run(Group &g, const std::vector<kiln::CudaStream> &streams,
                std::vector<cudaEvent_t> &ev, bool concurrent) {
  const kiln::CudaStream main = streams[0];
  if (!concurrent) {
    kiln::CudaStreamGuard guard(main);
    for (size_t i = 0; i < g.w.size(); ++i)
      g.out[i] = kiln::linear(g.x, g.w[i]);
    return;
  }
  CK(cudaEventRecord(ev[0], raw(main)));
  for (size_t i = 1; i < g.w.size(); ++i)
    CK(cudaStreamWaitEvent(raw(streams[i]), ev[0]));
  for (size_t i = 0; i < g.w.size(); ++i) {
    kiln::CudaStreamGuard guard(streams[i]);
    g.out[i] = kiln::linear(g.x, g.w[i]);
  }
  for (size_t i = 1; i < g.w.size(); ++i) {
    CK(cudaEventRecord(ev[i], raw(streams[i])));
    CK(cudaStreamWaitEvent(raw(main), ev[i]));
  }
}

int main() {
  const kiln::Device dev = kiln::Device::cuda(0);
  std::vector<kiln::CudaStream> streams;
  std::vector<cudaEvent_t> ev(3);
  for (int i = 0; i < 3; ++i) {
    streams.push_back(kiln::create_cuda_stream(0));
    CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
  }
  auto group = [&](int64_t M, int64_t K, std::vector<int64_t> Ns) {
    kiln::CudaStreamGuard guard(streams[0]);
    Group g;
    g.x = kiln::randn({M, K}, kiln::bf16, dev);
    for (int64_t N : Ns) {
      g.w.push_back(kiln::randn({N, K}, kiln::bf16, dev) * 0.02);
      g.out.push_back(Tensor());
    }
    return g;
  };
  struct Case {
    const char *name;
    Group g;
    double flop;
  };
  std::vector<Case> cases;
  cases.push_back({"gate+up 2048x4096 -> 2x11008", group(2048, 4096, {11008, 11008}),
                   2.0 * 2048 * 4096 * 11008 * 2});
  cases.push_back({"q,k,v 2048x4096 -> 3x4096", group(2048, 4096, {4096, 4096, 4096}),
                   2.0 * 2048 * 4096 * 4096 * 3});
  cases.push_back({"q,k,v GQA 2048x4096 -> 4096,1024,1024",
                   group(2048, 4096, {4096, 1024, 1024}),
                   2.0 * 2048 * 4096 * 6144});
  cases.push_back({"gate+up 8192x4096 -> 2x11008", group(8192, 4096, {11008, 11008}),
                   2.0 * 8192 * 4096 * 11008 * 2});
  cases.push_back({"gate+up 512x4096 -> 2x11008", group(512, 4096, {11008, 11008}),
                   2.0 * 512 * 4096 * 11008 * 2});
  // Correctness: both ways give the same bits.
  for (Case &c : cases) {
    run(c.g, streams, ev, false);
    std::vector<Tensor> a = c.g.out;
    run(c.g, streams, ev, true);
    CK(cudaStreamSynchronize(raw(streams[0])));
    for (size_t i = 0; i < a.size(); ++i) {
      double d = kiln::amax(kiln::abs(a[i].to(kiln::f32) - c.g.out[i].to(kiln::f32)))
                     .item<double>();
      if (d != 0) {
        std::printf("MISMATCH %s output %zu: %g\n", c.name, i, d);
        return 1;
      }
    }
  }
  std::printf("%-40s %10s %10s %8s %9s\n", "case", "one", "streams", "gain",
              "TFLOP/s");
  for (int round = 0; round < 3; ++round)
    for (Case &c : cases) {
      float one = kernel_time(raw(streams[0]), [&] { run(c.g, streams, ev, false); });
      float two = kernel_time(raw(streams[0]), [&] { run(c.g, streams, ev, true); });
      std::printf("%-40s %10.4f %10.4f %7.2f%% %5.0f/%-5.0f\n", c.name, one, two,
                  100.0 * (one - two) / one, c.flop / one / 1e9, c.flop / two / 1e9);
    }
  return 0;
}
