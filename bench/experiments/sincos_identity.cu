// Does CUDA's sincosf give exactly sinf's and cosf's results? Fused code
// replaces sin(a), cos(a) of one value with kiln::scalar::sincos, so it
// must. Exhaustive over all 2^32 float bit patterns (NaNs compared as NaN);
// for double, 2^32 hashed bit patterns.
//   nvcc -O3 -arch=sm_90 sincos_identity.cu -o sincos_identity && ./sincos_identity
#include <cstdio>
#include <cstdint>
#include <cstring>

__global__ void check(uint64_t base, unsigned long long *bad, uint32_t *first) {
  uint64_t i = base + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t bits = uint32_t(i);
  float a;
  memcpy(&a, &bits, 4);
  float s1 = sinf(a), c1 = cosf(a), s2, c2;
  sincosf(a, &s2, &c2);
  auto same = [](float x, float y) {
    return (x != x && y != y) || __float_as_uint(x) == __float_as_uint(y);
  };
  if (!same(s1, s2) || !same(c1, c2)) {
    if (atomicAdd(bad, 1ull) == 0)
      *first = bits;
  }
}

__global__ void check64(uint64_t base, unsigned long long *bad) {
  uint64_t i = base + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint64_t h = i * 0x9E3779B97F4A7C15ull; // splitmix64
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  if (i & 1) // half of them in [-1e4, 1e4], where real inputs live
    h = __double_as_longlong((double(h >> 11) / double(1ull << 53) - 0.5) * 2e4);
  double a = __longlong_as_double(h);
  double s1 = sin(a), c1 = cos(a), s2, c2;
  sincos(a, &s2, &c2);
  auto same = [](double x, double y) {
    return (x != x && y != y) || __double_as_longlong(x) == __double_as_longlong(y);
  };
  if (!same(s1, s2) || !same(c1, c2))
    atomicAdd(bad, 1ull);
}

int main() {
  unsigned long long *bad;
  uint32_t *first;
  cudaMallocManaged(&bad, sizeof *bad);
  cudaMallocManaged(&first, sizeof *first);
  *bad = 0;
  const uint64_t chunk = 1ull << 30;
  for (uint64_t base = 0; base < (1ull << 32); base += chunk)
    check<<<chunk / 256, 256>>>(base, bad, first);
  unsigned long long *bad64;
  cudaMallocManaged(&bad64, sizeof *bad64);
  *bad64 = 0;
  for (uint64_t base = 0; base < (1ull << 32); base += chunk)
    check64<<<chunk / 256, 256>>>(base, bad64);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("sincos identity: CUDA error %s\n", cudaGetErrorString(e));
    return 2;
  }
  printf("sincos identity: %llu of 2^32 floats differ%s", *bad, *bad ? "" : "\n");
  if (*bad)
    printf(" (first: bits 0x%08x)\n", *first);
  printf("sincos identity (double): %llu of 2^32 sampled doubles differ\n", *bad64);
  return *bad != 0 || *bad64 != 0;
}
