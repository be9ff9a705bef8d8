// A kernel for the rt::launch unit test, built into a fatbin and embedded
// in kiln_unit_tests the way the plugin embeds generated kernels.
extern "C" __global__ void kiln_test_affine(float *out, const float *in,
                                            float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * scale + 1.0f;
}
