// Many short rows that cannot be read 16 bytes at a time (a ViT's 197
// tokens; 1001 columns): Kiln's element-by-element rows kernels
// (`rowsany<S>`) as kiln::gen::plan_cuda launches them today against the
// same kernels launched otherwise, and their instances of a compile-time
// thread count for rows contiguous along R (rowsany<S>t<TPR>, kiln-opt
// after 2026-12-02). Every launch is checked against a float64 reference.
//   kiln-opt --emit=cuda --dtypes=f32,bf16 sm.kir > sm.cu
//   kiln-opt --emit=cuda --dtypes=f32 ln.kir > ln.cu
//   kiln-opt --emit=cuda --dtypes=bf16 rms.kir > rms.cu
//   nvcc -O3 -std=c++20 -arch=sm_90 -I runtime/include -I <dir> odd_rows_tpr.cu
// (sm.kir: `%r = softmax %x {dims=[-1], keepdim=false}` in graph @sm;
// ln.kir: layer_norm %x, %w, %b, 1e-5 in @ln; rms.kir: rms_norm %x, %w,
// 1e-6 in @rms.)
#include <kiln/generated.cuh>

#include "kernel_time.cuh"
#include "ln.cu"
#include "rms.cu"
#include "sm.cu"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using bf = kiln::bfloat16;

template <int N> static kiln::RowStrides<N> plain_rows(int64_t R) {
  kiln::RowStrides<N> st{};
  st.s[0][0] = st.s[1][0] = R; // the output and x walk rows; weights broadcast
  for (int o = 0; o < N; ++o)
    st.s[o][1] = 1;
  return st;
}

struct Config {
  const char *label;
  int tpr, vpt, slots, rpg, block;
  int fixed = 0; // the instance of a compile-time thread count (rowsany<S>t<fixed>)
};

enum class Op { softmax, layer_norm, rms_norm };

static float bf_to_f(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static uint16_t f_to_bf(float f) { // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

int main() {
  const int64_t most = 393216 * 77 + 64;
  float *x, *w, *b, *y;
  CK(cudaMalloc(&x, most * 4));
  CK(cudaMalloc(&y, most * 4));
  CK(cudaMalloc(&w, 8192 * 4));
  CK(cudaMalloc(&b, 8192 * 4));
  std::vector<float> hx(most), hw(8192), hb(8192);
  std::vector<uint16_t> hxh(most), hwh(8192);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (auto &v : hx) v = 2 * nd(rng);
  for (auto &v : hw) v = 1 + 0.1f * nd(rng);
  for (auto &v : hb) v = 0.1f * nd(rng);
  for (size_t i = 0; i < hx.size(); ++i) hxh[i] = f_to_bf(hx[i]);
  for (size_t i = 0; i < hw.size(); ++i) hwh[i] = f_to_bf(hw[i]);
  bf *xh, *wh, *yh;
  CK(cudaMalloc(&xh, most * 2));
  CK(cudaMalloc(&yh, most * 2));
  CK(cudaMalloc(&wh, 8192 * 2));
  CK(cudaMemcpy(x, hx.data(), most * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, hw.data(), 8192 * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), 8192 * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(xh, hxh.data(), most * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(wh, hwh.data(), 8192 * 2, cudaMemcpyHostToDevice));

  struct Case {
    const char *name;
    Op op;
    bool half;
    int64_t rows, cols;
    std::vector<Config> configs; // the first: as plan_cuda launches it today
  };
  // f32 rows of 197: 50 slots of 4, a warp of 2 slots each today; bf16:
  // 25 slots of 8, 16 threads of 2 today. 1001: f32 64 threads of 4 (a
  // block each), bf16 a warp of 4.
  const std::vector<Config> f197 = {{"shipped t32 v2", 32, 2, 2, 1, 256},
                                    {"fixed t32 v2", 32, 2, 2, 1, 256, 32},
                                    {"fixed t32 v2 b128", 32, 2, 2, 1, 128, 32},
                                    {"fixed t32 v2 b64", 32, 2, 2, 1, 64, 32}};
  const std::vector<Config> h197 = {{"shipped t16 v2", 16, 2, 2, 1, 256},
                                    {"fixed t16 v2", 16, 2, 2, 1, 256, 16},
                                    {"fixed t16 v2 b128", 16, 2, 2, 1, 128, 16},
                                    {"fixed t16 v2 b64", 16, 2, 2, 1, 64, 16}};
  // f32 rows of 77 (CLIP's tokens): 20 slots of 4, 8 threads of 4; bf16:
  // 10 slots of 8, 8 threads of 2. 301 f32: a warp of 3 (the 4-slot
  // instance); 577 bf16 (a ViT at 384 pixels): a warp of 3.
  const std::vector<Case> cases = {
      {"softmax f32 151296x197", Op::softmax, false, 151296, 197, f197},
      {"softmax bf16 151296x197", Op::softmax, true, 151296, 197, h197},
      {"layer norm f32 151296x197", Op::layer_norm, false, 151296, 197, f197},
      {"RMS norm bf16 151296x197", Op::rms_norm, true, 151296, 197, h197},
      {"softmax f32 393216x77", Op::softmax, false, 393216, 77,
       {{"shipped t8 v4", 8, 4, 4, 1, 256}, {"fixed t8 v4", 8, 4, 4, 1, 256, 8}, {"fixed t8 v4 b128", 8, 4, 4, 1, 128, 8}}},
      {"softmax bf16 393216x77", Op::softmax, true, 393216, 77,
       {{"shipped t8 v2", 8, 2, 2, 1, 256}, {"fixed t8 v2", 8, 2, 2, 1, 256, 8}, {"fixed t8 v2 b128", 8, 2, 2, 1, 128, 8}}},
      {"layer norm f32 393216x77", Op::layer_norm, false, 393216, 77,
       {{"shipped t8 v4", 8, 4, 4, 1, 256}, {"fixed t8 v4", 8, 4, 4, 1, 256, 8}, {"fixed t8 v4 b128", 8, 4, 4, 1, 128, 8}}},
      {"softmax f32 100000x301", Op::softmax, false, 100000, 301,
       {{"shipped t32 v3", 32, 3, 4, 1, 256}, {"fixed t32 v3", 32, 3, 4, 1, 256, 32}, {"fixed t32 v3 b128", 32, 3, 4, 1, 128, 32}}},
      {"layer norm f32 100000x301", Op::layer_norm, false, 100000, 301,
       {{"shipped t32 v3", 32, 3, 4, 1, 256}, {"fixed t32 v3", 32, 3, 4, 1, 256, 32}, {"fixed t32 v3 b128", 32, 3, 4, 1, 128, 32}}},
      {"softmax bf16 52428x577", Op::softmax, true, 52428, 577,
       {{"shipped t32 v3", 32, 3, 4, 1, 256}, {"fixed t32 v3", 32, 3, 4, 1, 256, 32}, {"fixed t32 v3 b128", 32, 3, 4, 1, 128, 32}}},
      {"RMS norm bf16 52428x577", Op::rms_norm, true, 52428, 577,
       {{"shipped t32 v3", 32, 3, 4, 1, 256}, {"fixed t32 v3", 32, 3, 4, 1, 256, 32}, {"fixed t32 v3 b128", 32, 3, 4, 1, 128, 32}}},
      {"softmax f32 16384x1001", Op::softmax, false, 16384, 1001,
       {{"shipped t64 v4", 64, 4, 4, 1, 64}, {"t128 v2", 128, 2, 2, 1, 128}}},
      {"layer norm f32 16384x1001", Op::layer_norm, false, 16384, 1001,
       {{"shipped t64 v4", 64, 4, 4, 1, 64}, {"t128 v2", 128, 2, 2, 1, 128}}},
      {"softmax bf16 16384x1001", Op::softmax, true, 16384, 1001,
       {{"shipped t32 v4", 32, 4, 4, 1, 256}, {"t64 v2", 64, 2, 2, 1, 64}, {"t32 v4 b128", 32, 4, 4, 1, 128}}},
  };
  std::printf("%-28s %-16s %10s %9s %10s\n", "workload", "launch", "ms", "of floor", "max err");
  // ODD_FIRST=1: only each case's first launch; ODD_197=1: only rows of
  // 197 (variants of the kernels built for one thread count).
  const bool first_only = std::getenv("ODD_FIRST") != nullptr;
  const bool only197 = std::getenv("ODD_197") != nullptr;
  for (const Case &c : cases) {
    if (only197 && c.cols != 197)
      continue;
    const int64_t n = c.rows * c.cols;
    const double bytes = double(n) * (c.half ? 4 : 8);
    // float64 reference rows
    std::vector<double> ref(n);
    for (int64_t r = 0; r < c.rows; ++r) {
      const int64_t o = r * c.cols;
      auto xin = [&](int64_t i) { return c.half ? double(bf_to_f(hxh[o + i])) : double(hx[o + i]); };
      if (c.op == Op::softmax) {
        double m = -INFINITY, s = 0;
        for (int64_t i = 0; i < c.cols; ++i) m = std::max(m, xin(i));
        for (int64_t i = 0; i < c.cols; ++i) s += std::exp(xin(i) - m);
        for (int64_t i = 0; i < c.cols; ++i) ref[o + i] = std::exp(xin(i) - m) / s;
      } else if (c.op == Op::layer_norm) {
        double m = 0, q = 0;
        for (int64_t i = 0; i < c.cols; ++i) m += xin(i);
        m /= c.cols;
        for (int64_t i = 0; i < c.cols; ++i) q += (xin(i) - m) * (xin(i) - m);
        const double rs = 1 / std::sqrt(q / c.cols + 1e-5);
        for (int64_t i = 0; i < c.cols; ++i) ref[o + i] = (xin(i) - m) * rs * hw[i] + hb[i];
      } else {
        double q = 0;
        for (int64_t i = 0; i < c.cols; ++i) q += xin(i) * xin(i);
        const double rs = 1 / std::sqrt(q / c.cols + 1e-6);
        for (int64_t i = 0; i < c.cols; ++i) ref[o + i] = xin(i) * rs * bf_to_f(hwh[i]);
      }
    }
    for (const Config &g : c.configs) {
      if (first_only && &g != &c.configs.front())
        break;
      kiln::RowSpace sp;
      sp.outer = c.rows; sp.R = c.cols; sp.inner = 1; sp.rows = c.rows;
      sp.tpr = g.tpr; sp.vpt = g.vpt; sp.vec = 0; sp.rpg = g.rpg;
      const int64_t per_block = int64_t(g.block / g.tpr) * g.rpg;
      const unsigned grid = unsigned((c.rows + per_block - 1) / per_block);
      // The instance: rowsany<slots> (tpr at run time) or rowsany<slots>t<fixed>.
#define KILN_PICK(P, ...)                                                      \
  do {                                                                         \
    const int key = g.slots * 100 + g.fixed;                                   \
    if (key == 100) P##1<<<grid, g.block>>>(__VA_ARGS__);                      \
    if (key == 200) P##2<<<grid, g.block>>>(__VA_ARGS__);                      \
    if (key == 400) P##4<<<grid, g.block>>>(__VA_ARGS__);                      \
    KILN_PICK_FIXED(P, __VA_ARGS__);                                           \
  } while (0)
#define KILN_F32_FIXED(P, ...)                                                 \
  if (key == 208) P##2t8<<<grid, g.block>>>(__VA_ARGS__);                      \
  if (key == 408) P##4t8<<<grid, g.block>>>(__VA_ARGS__);                      \
  if (key == 232) P##2t32<<<grid, g.block>>>(__VA_ARGS__);                     \
  if (key == 432) P##4t32<<<grid, g.block>>>(__VA_ARGS__)
#define KILN_H_FIXED(P, ...)                                                   \
  if (key == 208) P##2t8<<<grid, g.block>>>(__VA_ARGS__);                      \
  if (key == 216) P##2t16<<<grid, g.block>>>(__VA_ARGS__);                     \
  if (key == 232) P##2t32<<<grid, g.block>>>(__VA_ARGS__);                     \
  if (key == 432) P##4t32<<<grid, g.block>>>(__VA_ARGS__)
      auto launch = [&] {
        if (c.op == Op::softmax && !c.half) {
          const auto st = plain_rows<2>(c.cols);
#define KILN_PICK_FIXED KILN_F32_FIXED
          KILN_PICK(__kiln_sm_k0_f32_rowsany, sp, st, x, y);
        } else if (c.op == Op::layer_norm) {
          const auto st = plain_rows<4>(c.cols);
          KILN_PICK(__kiln_ln_k0_f32_rowsany, sp, st, x, w, b, y);
#undef KILN_PICK_FIXED
        } else if (c.op == Op::softmax) {
          const auto st = plain_rows<2>(c.cols);
#define KILN_PICK_FIXED KILN_H_FIXED
          KILN_PICK(__kiln_sm_k0_bf16_rowsany, sp, st, xh, yh);
        } else {
          const auto st = plain_rows<3>(c.cols);
          KILN_PICK(__kiln_rms_k0_bf16_rowsany, sp, st, xh, wh, yh);
#undef KILN_PICK_FIXED
        }
      };
      // poison the output, run once, compare with the reference
      CK(cudaMemset(y, 0xff, most * 4));
      CK(cudaMemset(yh, 0xff, most * 2));
      launch();
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      double err = 0;
      if (c.half) {
        std::vector<uint16_t> h(n);
        CK(cudaMemcpy(h.data(), yh, n * 2, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < n; ++i) {
          const double d = std::fabs(double(bf_to_f(h[i])) - ref[i]);
          err = std::isnan(d) ? INFINITY : std::max(err, d);
        }
      } else {
        std::vector<float> h(n);
        CK(cudaMemcpy(h.data(), y, n * 4, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < n; ++i) {
          const double d = std::fabs(double(h[i]) - ref[i]);
          err = std::isnan(d) ? INFINITY : std::max(err, d);
        }
      }
      std::vector<float> ts;
      for (int round = 0; round < 3; ++round)
        ts.push_back(kernel_time_ms(launch));
      const float ms = median(ts);
      std::printf("%-28s %-16s %10.4f %8.0f%% %10.2e\n", c.name, g.label, ms,
                  100.0 * bytes / 4.21e9 / ms, err);
    }
  }
}
