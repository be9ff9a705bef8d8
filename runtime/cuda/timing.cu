// CUDA event timing on the runtime's stream (the legacy default stream).
#include <kiln/timing.h>

#include <cuda_runtime.h>

#include <string>

namespace kiln::detail {

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw Error(std::string("kiln timing: ") + what + ": " +
                cudaGetErrorString(e));
}

std::vector<double> cuda_time_calls(Device dev, const std::function<void()> &fn,
                                    int warmup, int reps, int calls) {
  check(cudaSetDevice(dev.index), "cudaSetDevice");
  for (int i = 0; i < warmup; ++i)
    fn();
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(start, 0), "cudaEventRecord");
    for (int c = 0; c < calls; ++c)
      fn();
    check(cudaEventRecord(stop, 0), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(double(t) / calls);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

double cuda_copy_bandwidth(Device dev, size_t bytes, int reps) {
  check(cudaSetDevice(dev.index), "cudaSetDevice");
  void *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMemset(a, 1, bytes), "cudaMemset");
  std::vector<double> ms = cuda_time_calls(
      dev,
      [&] {
        check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0),
              "cudaMemcpyAsync");
      },
      3, reps, 1);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * double(bytes) / (median(ms) * 1e-3);
}

__global__ void kiln_empty_kernel() {}

double cuda_bare_launch_us(Device dev, int reps) {
  std::vector<double> ms = cuda_time_calls(
      dev,
      [] {
        kiln_empty_kernel<<<1, 32>>>();
        check(cudaGetLastError(), "empty kernel launch");
      },
      100, reps, 200);
  return median(ms) * 1e3;
}

} // namespace kiln::detail
