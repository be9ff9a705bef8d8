// A kernel for the rt::launch unit test, built into a fatbin and embedded
// in kiln_unit_tests the way the plugin embeds generated kernels.
extern "C" __global__ void kiln_test_affine(float *out, const float *in,
                                            float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * scale + 1.0f;
}

// kiln/generated.cuh, as the generated kernels use it: row_reduce over
// thread groups of tpr threads (a warp's lanes or a whole block), and
// 16-byte vector loads and stores.
#include <kiln/generated.cuh>

// Row r of `rows` rows of R floats: its group of tpr threads sums it
// (red_sum) and finds its argmax (red_argmax); thread 0 of the group
// writes both.
extern "C" __global__ void kiln_test_row_reduce(const float *in, float *sums,
                                                long long *argmax, int rows,
                                                int R, int tpr) {
  __shared__ double smem[64];
  const int groups = blockDim.x / tpr, t = threadIdx.x % tpr;
  const int row = blockIdx.x * groups + threadIdx.x / tpr;
  // Every thread of a block reaches the block reduction's barriers.
  const bool live = row < rows;
  float s = 0;
  kiln::scalar::ArgAcc<float> best{kiln::scalar::lowest<float>(), -1};
  if (live)
    for (int k = t; k < R; k += tpr) {
      const float x = in[(long long)row * R + k];
      s = kiln::gen::red_sum::combine(s, x);
      best = kiln::gen::red_argmax::combine(best, kiln::scalar::ArgAcc<float>{x, k});
    }
  s = kiln::gen::row_reduce<kiln::gen::red_sum>(s, tpr, reinterpret_cast<float *>(smem));
  best = kiln::gen::row_reduce<kiln::gen::red_argmax>(
      best, tpr, reinterpret_cast<kiln::scalar::ArgAcc<float> *>(smem));
  if (live && t == 0) {
    sums[row] = s;
    argmax[row] = best.index;
  }
}

// out = in * 2 through Vec<T, V> loads and stores (n a multiple of V).
template <class T, int V>
__device__ void vec_twice(const T *in, T *out, int n) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (i >= n)
    return;
  kiln::gen::Vec<T, V> v = kiln::gen::vec_load<V>(in + i);
#pragma unroll
  for (int k = 0; k < V; ++k)
    v.v[k] = T(v.v[k] * T(2));
  kiln::gen::vec_store(out + i, v);
}
extern "C" __global__ void kiln_test_vec_f32x4(const float *in, float *out, int n) {
  vec_twice<float, 4>(in, out, n);
}
extern "C" __global__ void kiln_test_vec_f64x2(const double *in, double *out, int n) {
  vec_twice<double, 2>(in, out, n);
}

// out[i] = in[i] through the rows kernel's packed hold of bools
// (kiln::gen::Held<bool, V>): V bytes loaded as a Vec, each tested in place.
template <int V>
__device__ void held_bools(const bool *in, int *out, int n) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (i >= n)
    return;
  kiln::gen::Held<bool, V> h;
  h = kiln::gen::vec_load<V>(in + i);
#pragma unroll
  for (int k = 0; k < V; ++k)
    out[i + k] = h.v[k] ? 1 : 0;
}
extern "C" __global__ void kiln_test_held_bools(const bool *in, int *out, int n,
                                                int v) {
  switch (v) {
  case 2: held_bools<2>(in, out, n); break;
  case 4: held_bools<4>(in, out, n); break;
  case 8: held_bools<8>(in, out, n); break;
  case 16: held_bools<16>(in, out, n); break;
  }
}

// kiln::U32Div on the device (__umulhi): q[k] = n[k] / d[k].
extern "C" __global__ void kiln_test_u32div(const uint32_t *n, const uint32_t *d,
                                            const kiln::U32Div *div, uint32_t *q,
                                            int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count)
    q[k] = div[k].div(n[k]);
}
