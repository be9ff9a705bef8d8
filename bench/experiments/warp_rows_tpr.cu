// Rows a warp each (f32 rows of 513-1024 columns: the 6- and 8-slot
// instances, which kiln::gen::plan_cuda launches only with tpr = 32):
// Kiln's generated kernels as they are against the same kernels with tpr a
// compile-time 32 (`sed 's/const int tpr = sp.tpr;/const int tpr = 32;/'`
// on kiln-opt's output), in one process; outputs compared bit for bit.
//   kiln-opt --pipeline --emit=cuda --dtypes=f32 sm.kir > sm.cu  (and ln768.kir)
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include -I <dir> warp_rows_tpr.cu
#include <kiln/generated.cuh>

#include "kernel_time.cuh"
#include "ln768.cu"
#include "ln768c.cu"
#include "sm.cu"
#include "smc.cu"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

// Strides of a plain [rows, R] operand set: the output and x walk rows of
// R, every operand (a weight, a bias: stride 0 along the rows) is
// contiguous along R.
template <int N> static kiln::RowStrides<N> plain_rows(int64_t R) {
  kiln::RowStrides<N> st{};
  st.s[0][0] = st.s[1][0] = R;
  for (int o = 0; o < N; ++o)
    st.s[o][1] = 1;
  return st;
}

struct Case {
  std::string name;
  int64_t rows, cols;
  std::function<void(const kiln::RowSpace &, float *, float *, float *, float *)> a, b;
};

int main() {
  const int64_t most = 43690 * 1024;
  float *x, *w, *bb, *y, *y2;
  CK(cudaMalloc(&x, most * 4));
  CK(cudaMalloc(&y, most * 4));
  CK(cudaMalloc(&y2, most * 4));
  CK(cudaMalloc(&w, 1024 * 4));
  CK(cudaMalloc(&bb, 1024 * 4));
  {
    std::vector<float> h(most);
    std::mt19937 rng(3);
    std::normal_distribution<float> nd;
    for (auto &v : h) v = nd(rng);
    CK(cudaMemcpy(x, h.data(), most * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, h.data(), 1024 * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bb, h.data() + 1024, 1024 * 4, cudaMemcpyHostToDevice));
  }
  auto grid = [](const kiln::RowSpace &sp) { return unsigned((sp.rows + 7) / 8); };
  std::vector<Case> cases = {
      {"softmax 32768x1024", 32768, 1024,
       [&](const kiln::RowSpace &sp, float *x, float *, float *, float *y) {
         const auto st = plain_rows<2>(sp.R);
         __kiln_sm_k0_f32_rows8full<<<grid(sp), 256>>>(sp, st, x, y); },
       [&](const kiln::RowSpace &sp, float *x, float *, float *, float *y) {
         const auto st = plain_rows<2>(sp.R);
         __kiln_smc_k0_f32_rows8full<<<grid(sp), 256>>>(sp, st, x, y); }},
      {"softmax 43690x768", 43690, 768,
       [&](const kiln::RowSpace &sp, float *x, float *, float *, float *y) {
         const auto st = plain_rows<2>(sp.R);
         __kiln_sm_k0_f32_rows6full<<<grid(sp), 256>>>(sp, st, x, y); },
       [&](const kiln::RowSpace &sp, float *x, float *, float *, float *y) {
         const auto st = plain_rows<2>(sp.R);
         __kiln_smc_k0_f32_rows6full<<<grid(sp), 256>>>(sp, st, x, y); }},
      {"layer norm 43690x768", 43690, 768,
       [&](const kiln::RowSpace &sp, float *x, float *w, float *b, float *y) {
         const auto st = plain_rows<4>(sp.R);
         __kiln_ln_k0_f32_rows6full<<<grid(sp), 256>>>(sp, st, x, w, b, y); },
       [&](const kiln::RowSpace &sp, float *x, float *w, float *b, float *y) {
         const auto st = plain_rows<4>(sp.R);
         __kiln_lnc_k0_f32_rows6full<<<grid(sp), 256>>>(sp, st, x, w, b, y); }},
      {"layer norm 32768x1024", 32768, 1024,
       [&](const kiln::RowSpace &sp, float *x, float *w, float *b, float *y) {
         const auto st = plain_rows<4>(sp.R);
         __kiln_ln_k0_f32_rows8full<<<grid(sp), 256>>>(sp, st, x, w, b, y); },
       [&](const kiln::RowSpace &sp, float *x, float *w, float *b, float *y) {
         const auto st = plain_rows<4>(sp.R);
         __kiln_lnc_k0_f32_rows8full<<<grid(sp), 256>>>(sp, st, x, w, b, y); }},
  };
  std::printf("%-24s %10s %10s  (kernel time ms, 20 back-to-back / 20, median of 30; 3 rounds each)\n",
              "workload", "shipped", "tpr 32");
  for (Case &c : cases) {
    kiln::RowSpace sp;
    sp.outer = c.rows; sp.R = c.cols; sp.inner = 1; sp.rows = c.rows;
    sp.tpr = 32; sp.vpt = int(c.cols / 128); sp.vec = 1; sp.rpg = 1;
    const size_t n = size_t(c.rows * c.cols);
    CK(cudaMemset(y, 0xff, n * 4));
    CK(cudaMemset(y2, 0xff, n * 4));
    c.a(sp, x, w, bb, y);
    c.b(sp, x, w, bb, y2);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> h1(n), h2(n);
    CK(cudaMemcpy(h1.data(), y, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2.data(), y2, n * 4, cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(h1.data(), h2.data(), n * 4) == 0;
    std::vector<float> ma, mb;
    for (int round = 0; round < 3; ++round)
      for (int which = 0; which < 2; ++which) {
        auto &f = which ? c.b : c.a;
        (which ? mb : ma).push_back(kernel_time_ms([&] { f(sp, x, w, bb, y); }));
      }
    std::printf("%-24s %10.4f %10.4f  rounds %.4f/%.4f %.4f/%.4f %.4f/%.4f  outputs %s\n",
                c.name.c_str(), median(ma), median(mb), ma[0], mb[0], ma[1], mb[1], ma[2],
                mb[2], same ? "identical" : "DIFFER");
  }
}
