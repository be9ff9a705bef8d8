// The cases of test/plugin/capture/exec-products*.cpp: matrix products as
// graph ops, each a library GEMM with its epilogue (bias, residual,
// activation) fused where cuBLASLt or the CPU path can, and the pointwise
// and row work around them as fused kernels; compiled against eager and a
// float64 reference, the kernel count asserted.
#pragma once

#include "capture_compare.h"

using kiln::Tensor;

COMPILE Tensor mm(const Tensor &a, const Tensor &b) { return kiln::matmul(a, b); }

COMPILE Tensor lin(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::linear(x, w, b);
}

// The bias and the activation are the GEMM's epilogue: one library call.
COMPILE Tensor lin_gelu(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::gelu(kiln::linear(x, w, b), "tanh");
}
COMPILE Tensor mm_bias_relu(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::relu(kiln::matmul(x, w) + b);
}
// Exact GELU: cuBLASLt has only the tanh form, so the runtime applies it
// after the GEMM (a second launch on CUDA).
COMPILE Tensor lin_gelu_exact(const Tensor &x, const Tensor &w, const Tensor &b) {
  return kiln::gelu(kiln::linear(x, w, b));
}

// A transformer MLP block: the second product adds the residual as the
// GEMM's C: two library calls.
COMPILE Tensor mlp(const Tensor &x, const Tensor &w1, const Tensor &b1,
                   const Tensor &w2, const Tensor &b2) {
  Tensor h = kiln::gelu(kiln::linear(x, w1, b1), "tanh");
  return kiln::linear(h, w2, b2) + x;
}

// A residual stream (a LLaMA block's two residual adds): each product adds
// the stream as its C, the second one the first product's result, which
// the norm reads too: three launches, no pointwise kernel.
COMPILE Tensor resid_stream(const Tensor &x, const Tensor &o, const Tensor &wo,
                            const Tensor &g, const Tensor &w2) {
  Tensor r = x + kiln::linear(o, wo);
  Tensor m = kiln::rms_norm(r, g, 1e-6);
  return r + kiln::linear(m, w2);
}
// Two products added: the later one adds the earlier as its C.
COMPILE Tensor sum_of_products(const Tensor &a, const Tensor &b, const Tensor &c,
                               const Tensor &d) {
  return kiln::matmul(a, b) + kiln::matmul(c, d);
}

// A row op before the product stays one row kernel writing the GEMM's
// input; the pointwise work after it is one kernel reading its output.
COMPILE Tensor norm_mm(const Tensor &x, const Tensor &w, const Tensor &g) {
  Tensor h = kiln::gelu(kiln::rms_norm(x, g, 1e-6), "tanh");
  return kiln::sigmoid(kiln::matmul(h, w)) * 2.0;
}

// Attention's scores and softmax: a batched product, then one row kernel.
COMPILE Tensor scores(const Tensor &q, const Tensor &kt, double scale) {
  return kiln::softmax(kiln::matmul(q, kt) * scale, -1);
}

// torch.bmm: the GEMM as a batched matmul, its bias and activation the
// epilogue; the host checks bmm's shapes (3-D, one batch), not matmul's.
COMPILE Tensor bmm_gelu(const Tensor &a, const Tensor &b, const Tensor &bias) {
  return kiln::gelu(kiln::bmm(a, b) + bias, "tanh");
}
COMPILE Tensor bmm_plain(const Tensor &a, const Tensor &b) { return kiln::bmm(a, b); }

// The product used twice: no epilogue (its output is read by both).
COMPILE std::tuple<Tensor, Tensor> twice(const Tensor &a, const Tensor &b) {
  Tensor p = kiln::matmul(a, b);
  return {kiln::relu(p), p * 3.0};
}

// Two projections, each with pointwise work the other does not read (a
// LLaMA block's q and k rotations): one pointwise kernel after both
// products when the outputs' shapes are equal (three launches), the two
// per-product kernels when they differ (four).
COMPILE std::tuple<Tensor, Tensor> two_projections(const Tensor &x, const Tensor &wq,
                                                   const Tensor &wk, const Tensor &c) {
  Tensor q = kiln::linear(x, wq);
  Tensor k = kiln::linear(x, wk);
  return {kiln::sigmoid(q) * c, kiln::tanh(k) * c};
}

inline int run_products(kiln::Device dev) {
  using capture_compare::check;
  using V = std::vector<Tensor>;
  auto input = [&](kiln::Dims s, kiln::DType dt, uint64_t seed) {
    return capture_compare::input(s, dt, seed, dev);
  };
  auto k = capture_compare::kernels;
  const bool cuda = dev.is_cuda();
  // References: the original body on float64 copies.
  auto ref = [](auto f) { return capture_compare::eager_reference(f); };
  auto cpu = capture_compare::on_cpu;
  auto f64 = capture_compare::as_f64;
  for (kiln::DType dt : {kiln::DType::f32, kiln::DType::f64, kiln::DType::bf16,
                         kiln::DType::f16})
    for (int64_t M : {int64_t(1), int64_t(7), int64_t(33)}) {
      const int64_t K = 40, N = 24;
      const std::string at = " [M=" + std::to_string(M) + "]";
      Tensor a = input({M, K}, dt, 1), b = input({K, N}, dt, 2);
      Tensor w = input({N, K}, dt, 3), bias = input({N}, dt, 4);
      check("mm" + at, dt, [&] { return V{mm(a, b)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(mm(f64(a), f64(b)))}; }));
      // A transposed operand, read in place.
      Tensor bt = input({N, K}, dt, 5).transpose(0, 1);
      check("mm transposed" + at, dt, [&] { return V{mm(a, bt)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(mm(f64(a), f64(bt)))}; }));
      // A sliced operand (rows 2K apart), read in place.
      Tensor as = input({M, 2 * K}, dt, 17).slice(1, 0, K);
      check("linear of a slice" + at, dt, [&] { return V{lin(as, w, bias)}; }, 1, 0,
            k(1), ref([&] { return V{cpu(lin(f64(as), f64(w), f64(bias)))}; }));
      // An empty dim: nothing to compute, the result empty.
      Tensor a0 = input({0, K}, dt, 18);
      check("linear of no rows" + at, dt, [&] { return V{lin_gelu(a0, w, bias)}; },
            1, 0, -1, ref([&] { return V{cpu(lin_gelu(f64(a0), f64(w), f64(bias)))}; }));
      // Batched, the batch dims broadcast; 1-D operands.
      Tensor a3 = input({2, 1, M, K}, dt, 6), b3 = input({3, K, N}, dt, 7);
      check("mm batched" + at, dt, [&] { return V{mm(a3, b3)}; }, 1, 0, -1,
            ref([&] { return V{cpu(mm(f64(a3), f64(b3)))}; }));
      Tensor v = input({K}, dt, 8);
      check("mm vector" + at, dt, [&] { return V{mm(a, v)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(mm(f64(a), f64(v)))}; }));
      check("linear" + at, dt, [&] { return V{lin(a, w, bias)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(lin(f64(a), f64(w), f64(bias)))}; }));
      check("linear, no bias" + at, dt, [&] { return V{lin(a, w, Tensor())}; },
            1, 0, k(1), ref([&] { return V{cpu(lin(f64(a), f64(w), Tensor()))}; }));
      // A bias of another shape than [N]: added as the GEMM's C.
      Tensor bias2 = input({M, 1}, dt, 9);
      check("linear, [M, 1] bias" + at, dt, [&] { return V{lin(a, w, bias2)}; },
            1, 0, -1, ref([&] { return V{cpu(lin(f64(a), f64(w), f64(bias2)))}; }));
      // f64 on CUDA: the activation in the epilogue kernel (kiln/gemm.h).
      const int64_t f64_act = cuda && dt == kiln::f64;
      check("linear + tanh-GELU" + at, dt,
            [&] { return V{lin_gelu(a, w, bias)}; }, 1, 0, k(1 + f64_act),
            ref([&] { return V{cpu(lin_gelu(f64(a), f64(w), f64(bias)))}; }));
      check("matmul + bias, relu" + at, dt,
            [&] { return V{mm_bias_relu(a, b, bias)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(mm_bias_relu(f64(a), f64(b), f64(bias)))}; }));
      check("linear + exact GELU" + at, dt,
            [&] { return V{lin_gelu_exact(a, w, bias)}; }, 1, 0, k(cuda ? 2 : 1),
            ref([&] { return V{cpu(lin_gelu_exact(f64(a), f64(w), f64(bias)))}; }));
      Tensor w1 = input({64, K}, dt, 10), b1 = input({64}, dt, 11);
      Tensor w2 = input({K, 64}, dt, 12), b2 = input({K}, dt, 13);
      // The residual is the second GEMM's C, read in place: no copy.
      check("MLP block" + at, dt,
            [&] { return V{mlp(a, w1, b1, w2, b2)}; }, 1, 0, k(2 + f64_act),
            ref([&] {
              return V{cpu(mlp(f64(a), f64(w1), f64(b1), f64(w2), f64(b2)))};
            }));
      Tensor g = input({K}, dt, 14);
      Tensor wo = input({K, N}, dt, 25), w3 = input({K, K}, dt, 26);
      Tensor o = input({M, N}, dt, 27);
      check("residual stream" + at, dt,
            [&] { return V{resid_stream(a, o, wo, g, w3)}; }, 1, 0, k(3),
            ref([&] {
              return V{cpu(resid_stream(f64(a), f64(o), f64(wo), f64(g), f64(w3)))};
            }));
      Tensor c2 = input({M, 16}, dt, 28), d2 = input({16, N}, dt, 29);
      check("sum of products" + at, dt,
            [&] { return V{sum_of_products(a, b, c2, d2)}; }, 1, 0, k(2),
            ref([&] {
              return V{cpu(sum_of_products(f64(a), f64(b), f64(c2), f64(d2)))};
            }));

      check("rms_norm, GELU, matmul, sigmoid" + at, dt,
            [&] { return V{norm_mm(a, b, g)}; }, 1, 0, k(3),
            ref([&] { return V{cpu(norm_mm(f64(a), f64(b), f64(g)))}; }));
      Tensor ab = input({3, M, K}, dt, 22), bb = input({3, K, N}, dt, 23);
      check("bmm" + at, dt, [&] { return V{bmm_plain(ab, bb)}; }, 1, 0, k(1),
            ref([&] { return V{cpu(bmm_plain(f64(ab), f64(bb)))}; }));
      // b transposed (a view: read in place), the bias and GELU the epilogue.
      Tensor bbt = input({3, N, K}, dt, 24).transpose(1, 2);
      check("bmm transposed + bias, GELU" + at, dt,
            [&] { return V{bmm_gelu(ab, bbt, bias)}; }, 1, 0, k(1 + f64_act),
            ref([&] { return V{cpu(bmm_gelu(f64(ab), f64(bbt), f64(bias)))}; }));
      Tensor q = input({2, 3, M, 16}, dt, 15), kt = input({2, 3, 16, M}, dt, 16);
      check("attention scores" + at, dt,
            [&] { return V{scores(q, kt, 0.25)}; }, 1, 0, -1,
            ref([&] { return V{cpu(scores(f64(q), f64(kt), 0.25))}; }));
      Tensor wq = input({N, K}, dt, 30), wk = input({N, K}, dt, 31);
      Tensor wk5 = input({5, K}, dt, 32), cq = input({N}, dt, 33);
      Tensor c1 = input({1}, dt, 34);
      // k of N columns as q: one kernel after both products (3 launches);
      // of 5: the shapes differ, the two per-product kernels (4).
      for (auto [wkx, c, launches, what] :
           {std::tuple{wk, cq, 3, ""}, std::tuple{wk5, c1, 4, ", shapes differ"}})
        check("two projections" + std::string(what) + at, dt,
              [&] {
                auto [q, kk] = two_projections(a, wq, wkx, c);
                return V{q, kk};
              },
              1, 0, k(launches), ref([&] {
                auto [q, kk] = two_projections(f64(a), f64(wq), f64(wkx), f64(c));
                return V{cpu(q), cpu(kk)};
              }));
      check("product used twice" + at, dt,
            [&] {
              auto [r, t] = twice(a, b);
              return V{r, t};
            },
            1, 0, k(2), ref([&] {
              auto [r, t] = twice(f64(a), f64(b));
              return V{cpu(r), cpu(t)};
            }));
    }
  // Operands that do not fit: eager raises, and so does the compiled call.
  Tensor a = input({4, 6}, kiln::f32, 20), b = input({5, 3}, kiln::f32, 21);
  capture_compare::expect_raises("shapes that do not fit raise",
                                 [&] { return mm(a, b); });
  // bmm does not broadcast its batch, nor take 2-D operands (matmul would).
  Tensor a1 = input({1, 4, 6}, kiln::f32, 22), b3 = input({3, 6, 5}, kiln::f32, 23);
  capture_compare::expect_raises("bmm's batches must be equal",
                                 [&] { return bmm_plain(a1, b3); });
  Tensor a3 = input({3, 4, 6}, kiln::f32, 24), b2 = input({6, 5}, kiln::f32, 25);
  capture_compare::expect_raises("bmm takes 3-D operands",
                                 [&] { return bmm_plain(a3, b2); });
  return capture_compare::summary();
}
