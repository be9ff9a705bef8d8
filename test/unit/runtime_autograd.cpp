// Autograd (kiln/autograd.h): every differentiable op of kiln/ops.def, the
// products, attention, joins and layout ops checked against central finite
// differences in float64 (torch.autograd.gradcheck's method), and the
// user model: accumulation, no_grad, detach, in-place updates, the checks
// on saved tensors.
#include "runtime_test_util.h"

#include <kiln/autograd.h>

#include <functional>
#include <random>
#include <set>

using namespace kiln;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor> &)>;

// Values for an input: uniform in [lo, hi], each at least `gap` from zero
// when gap > 0 (away from kinks: abs, relu, maximum), deterministic.
std::vector<double> sample(size_t n, double lo, double hi, double gap,
                           unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double &x : v) {
    do
      x = u(rng);
    while (gap > 0 && std::fabs(x) < gap);
  }
  return v;
}

struct Input {
  std::vector<double> values;
  Dims shape;
  bool grad = true; // differentiate with respect to it
};

Tensor make(const Input &in, Device dev) {
  return from_vector(in.values, in.shape, dev);
}

// d sum(f(inputs) * w) / d inputs by backward(), against central
// differences of the same sum; w random, so every output element counts.
void gradcheck(const Fn &f, std::vector<Input> inputs, Device dev,
               const std::string &what, double eps = 1e-6) {
  SCOPED_TRACE(what);
  std::vector<Tensor> ts;
  for (const Input &in : inputs) {
    Tensor t = make(in, dev);
    if (in.grad)
      t.requires_grad_();
    ts.push_back(t);
  }
  Tensor out = f(ts);
  ASSERT_TRUE(out.requires_grad()) << "the result has no history";
  manual_seed(7);
  Tensor w = randn(out.sizes(), DType::f64, dev);
  sum(out * w).backward();
  auto objective = [&](const std::vector<Tensor> &xs) {
    no_grad ng;
    return sum(f(xs) * w).item<double>();
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].grad)
      continue;
    ASSERT_TRUE(ts[i].grad().defined()) << "input " << i << " got no gradient";
    EXPECT_EQ(ts[i].grad().sizes(), ts[i].sizes());
    EXPECT_EQ(ts[i].grad().dtype(), DType::f64);
    std::vector<double> analytic = kt::values(ts[i].grad());
    for (size_t j = 0; j < inputs[i].values.size(); ++j) {
      std::vector<Tensor> xs;
      for (const Input &in : inputs)
        xs.push_back(make(in, dev));
      std::vector<double> plus = inputs[i].values, minus = plus;
      plus[j] += eps;
      minus[j] -= eps;
      xs[i] = from_vector(plus, inputs[i].shape, dev);
      double hi = objective(xs);
      xs[i] = from_vector(minus, inputs[i].shape, dev);
      double lo = objective(xs);
      double numeric = (hi - lo) / (2 * eps);
      EXPECT_NEAR(analytic[j], numeric, 1e-6 + 1e-5 * std::fabs(numeric))
          << "input " << i << " element " << j;
    }
  }
}

Input in(Dims shape, double lo = -1.5, double hi = 1.5, double gap = 0,
         unsigned seed = 1) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return {sample(size_t(n), lo, hi, gap, seed), shape};
}

class Autograd : public kt::DeviceTest {};

} // namespace

// Every pointwise op of the table: differentiable ones against finite
// differences (with a broadcast operand and with a number operand), the
// others' results not requiring grad.
TEST_P(Autograd, EveryPointwiseOp) {
  const std::set<std::string> not_differentiable = {
      "gt", "lt", "ge", "le", "eq", "ne", "trunc_div", "floor", "ceil", "trunc", "round"};
  int checked = 0;
  for (int i = 0; i < int(OpId::NumPointwise); ++i) {
    OpId op = OpId(i);
    std::string name = op_name(op);
    // Domains: positive where the op needs it, away from kinks and ties.
    double lo = -1.5, hi = 1.5, gap = 0.1;
    if (name == "log" || name == "sqrt" || name == "rsqrt" || name == "pow" ||
        name == "log2" || name == "log10")
      lo = 0.3, hi = 2.0;
    if (name == "log1p") // a > -1
      lo = -0.7, hi = 1.5;
    if (name == "tan")
      lo = -1.0, hi = 1.0;
    // fmod: a / b between 1 and 2 (away from the jumps, trunc(a / b) = 1).
    if (name == "fmod")
      lo = 1.3, hi = 1.9, gap = 0;
    Input a = in({3, 4}, lo, hi, gap, 11 + i);
    if (name == "where") {
      Input b = in({3, 4}, -1, 1, 0, 3), c = in({4}, -1, 1, 0, 4);
      Tensor cond = from_vector(sample(12, -1, 1, 0, 5), {3, 4}, dev()) > 0.0;
      gradcheck(
          [&](const std::vector<Tensor> &x) {
            return where(cond, x[0], x[1]);
          },
          {b, c}, dev(), name);
      ++checked;
      continue;
    }
    if (name == "clamp") {
      Input lo_t{{-0.5, -0.4, -0.6, -0.45}, {4}};
      Input hi_t{{0.5, 0.55, 0.45, 0.6}, {4}};
      Input x = in({3, 4}, -1, 1, 0, 21);
      for (double &v : x.values) // away from the bounds
        if (std::fabs(std::fabs(v) - 0.5) < 0.12)
          v = v > 0 ? 0.8 : -0.8;
      gradcheck(
          [&](const std::vector<Tensor> &t) { return clamp(t[0], t[1], t[2]); },
          {x, lo_t, hi_t}, dev(), name);
      ++checked;
      continue;
    }
    int arity = 1;
    {
      no_grad ng; // probe the arity through the eager op's check
      Tensor t = make(a, dev());
      try {
        pointwise(op, {t});
      } catch (const Error &) {
        arity = 2;
      }
    }
    if (not_differentiable.count(name)) {
      Tensor x = make(a, dev()).requires_grad_();
      Tensor r = arity == 1 ? pointwise(op, {x}) : pointwise(op, {x, x});
      EXPECT_FALSE(r.requires_grad()) << name;
      continue;
    }
    if (arity == 1) {
      gradcheck([&](const std::vector<Tensor> &x) { return pointwise(op, {x[0]}); },
                {a}, dev(), name);
    } else {
      Input b = in({4}, lo, hi, gap, 91 + i);
      if (name == "pow")
        b = in({4}, 0.5, 2.5, 0, 91 + i);
      if (name == "fmod")
        b = in({4}, 1.0, 1.25, 0, 91 + i);
      gradcheck(
          [&](const std::vector<Tensor> &x) {
            return pointwise(op, {x[0], x[1]});
          },
          {a, b}, dev(), name + " with a broadcast operand");
      gradcheck(
          [&](const std::vector<Tensor> &x) {
            return pointwise(op, {x[0], 1.25});
          },
          {a}, dev(), name + " with a number");
      gradcheck(
          [&](const std::vector<Tensor> &x) {
            return pointwise(op, {0.75, x[0]});
          },
          {name == "pow"    ? a
           : name == "fmod" ? in({3, 4}, 0.4, 0.7, 0, 5)
                            : in({3, 4}, 0.3, 2.0, 0.1, 5)},
          dev(),
          name + " of a number");
    }
    ++checked;
  }
  EXPECT_EQ(checked + int(not_differentiable.size()), int(OpId::NumPointwise));
  // gelu's tanh form has its own table entry.
  gradcheck([](const std::vector<Tensor> &x) { return gelu(x[0], "tanh"); },
            {in({3, 4})}, dev(), "gelu tanh");
}

TEST_P(Autograd, Reductions) {
  Input x = in({3, 4, 2}, -1.5, 1.5, 0, 2);
  using R = Tensor (*)(const Tensor &, int64_t, bool);
  const std::pair<const char *, R> ops[] = {
      {"sum", [](const Tensor &t, int64_t d, bool k) { return sum(t, d, k); }},
      {"mean", [](const Tensor &t, int64_t d, bool k) { return mean(t, d, k); }},
      {"amax", [](const Tensor &t, int64_t d, bool k) { return amax(t, d, k); }},
      {"amin", [](const Tensor &t, int64_t d, bool k) { return amin(t, d, k); }},
      {"logsumexp",
       [](const Tensor &t, int64_t d, bool k) { return logsumexp(t, d, k); }},
      {"var", [](const Tensor &t, int64_t d, bool k) { return var(t, d, k); }},
  };
  for (auto [name, op] : ops)
    for (int64_t d : {0, 1, -1})
      for (bool keep : {false, true})
        gradcheck([&](const std::vector<Tensor> &t) { return op(t[0], d, keep); },
                  {x}, dev(),
                  std::string(name) + " dim " + std::to_string(d) +
                      (keep ? " keepdim" : ""));
  gradcheck([](const std::vector<Tensor> &t) { return sum(t[0]); }, {x}, dev(),
            "sum of all");
  gradcheck([](const std::vector<Tensor> &t) { return mean(t[0]); }, {x}, dev(),
            "mean of all");
  gradcheck([](const std::vector<Tensor> &t) { return amax(t[0]); }, {x}, dev(),
            "amax of all");
  gradcheck([](const std::vector<Tensor> &t) { return var(t[0]); }, {x}, dev(),
            "var of all");
  gradcheck([](const std::vector<Tensor> &t) { return var(t[0], 1, false, 0); },
            {x}, dev(), "var correction 0");
  gradcheck([](const std::vector<Tensor> &t) { return logsumexp(t[0]); }, {x},
            dev(), "logsumexp of all");
  // Ties share the gradient, as PyTorch's amax.
  Tensor t = from_vector<double>({1, 3, 3, 2}, {4}, dev()).requires_grad_();
  amax(t).backward();
  EXPECT_EQ(kt::values(t.grad()), (std::vector<double>{0, 0.5, 0.5, 0}));
  // argmax has no derivative: its result does not require grad.
  EXPECT_FALSE(argmax(make(x, dev()).requires_grad_(), 0).requires_grad());
}

TEST_P(Autograd, RowOpsAndNorms) {
  Input x = in({3, 5}, -2, 2, 0, 3);
  for (int64_t d : {0, 1}) {
    gradcheck([&](const std::vector<Tensor> &t) { return softmax(t[0], d); },
              {x}, dev(), "softmax " + std::to_string(d));
    gradcheck([&](const std::vector<Tensor> &t) { return log_softmax(t[0], d); },
              {x}, dev(), "log_softmax " + std::to_string(d));
  }
  Input w = in({5}, 0.5, 1.5, 0, 4), b = in({5}, -1, 1, 0, 5);
  gradcheck(
      [](const std::vector<Tensor> &t) { return layer_norm(t[0], t[1], t[2]); },
      {x, w, b}, dev(), "layer_norm");
  gradcheck(
      [](const std::vector<Tensor> &t) {
        return layer_norm(t[0], Tensor(), Tensor(), 1e-3);
      },
      {x}, dev(), "layer_norm without weight and bias");
  gradcheck(
      [](const std::vector<Tensor> &t) { return rms_norm(t[0], t[1], 1e-4); },
      {x, w}, dev(), "rms_norm");
  gradcheck([](const std::vector<Tensor> &t) { return rms_norm(t[0], Tensor()); },
            {x}, dev(), "rms_norm without weight");
}

TEST_P(Autograd, LayoutOps) {
  Input x = in({2, 3, 4}, -1, 1, 0, 6);
  const std::pair<const char *, Fn> views[] = {
      {"view", [](auto &t) { return t[0].view({6, 4}) * 1.5; }},
      {"reshape", [](auto &t) { return t[0].transpose(0, 1).reshape({12, 2}); }},
      {"transpose", [](auto &t) { return t[0].transpose(0, 2) * t[0].transpose(0, 2); }},
      {"permute", [](auto &t) { return t[0].permute({2, 0, 1}).contiguous(); }},
      {"expand",
       [](auto &t) { return t[0].unsqueeze(1).expand({2, 5, 3, 4}) * 2.0; }},
      {"squeeze", [](auto &t) { return t[0].unsqueeze(0).squeeze(0); }},
      {"slice", [](auto &t) { return t[0].slice(2, 1, 4, 2); }},
      {"split", [](auto &t) { return t[0].split(2, 2)[1] * t[0].chunk(2, 2)[0]; }},
  };
  for (const auto &[name, f] : views)
    gradcheck(f, {x}, dev(), name);
}

TEST_P(Autograd, Products) {
  struct Case {
    Dims a, b;
  };
  for (const Case &c : {Case{{3, 4}, {4, 5}}, Case{{4}, {4, 5}}, Case{{3, 4}, {4}},
                        Case{{4}, {4}}, Case{{2, 3, 4}, {4, 5}},
                        Case{{2, 1, 3, 4}, {3, 4, 2}}})
    gradcheck([](auto &t) { return matmul(t[0], t[1]); },
              {in(c.a, -1, 1, 0, 8), in(c.b, -1, 1, 0, 9)}, dev(),
              "matmul " + c.a.str() + " @ " + c.b.str());
  Input x = in({2, 3, 4}, -1, 1, 0, 10), w = in({5, 4}, -1, 1, 0, 11),
        b = in({5}, -1, 1, 0, 12);
  gradcheck([](auto &t) { return linear(t[0], t[1], t[2]); }, {x, w, b}, dev(),
            "linear");
  gradcheck([](auto &t) { return linear(t[0], t[1]); }, {x, w}, dev(),
            "linear without bias");
  gradcheck([](auto &t) { return linear(t[0], t[1]); },
            {x, in({4}, -1, 1, 0, 13)}, dev(), "linear with a 1-D weight");
  gradcheck([](auto &t) { return bmm(t[0], t[1]); },
            {in({2, 3, 4}, -1, 1, 0, 14), in({2, 4, 5}, -1, 1, 0, 15)}, dev(),
            "bmm");
  gradcheck([](auto &t) { return addmm(t[0], t[1], t[2], 0.5, 2.0); },
            {in({5}, -1, 1, 0, 16), in({3, 4}, -1, 1, 0, 17),
             in({4, 5}, -1, 1, 0, 18)},
            dev(), "addmm");
}

TEST_P(Autograd, Attention) {
  Input q = in({2, 4, 3, 5}, -1, 1, 0, 20), k = in({2, 2, 6, 5}, -1, 1, 0, 21),
        v = in({2, 2, 6, 3}, -1, 1, 0, 22);
  gradcheck([](auto &t) { return scaled_dot_product_attention(t[0], t[1], t[2]); },
            {q, k, v}, dev(), "grouped-query attention");
  Input kq = in({2, 4, 3, 5}, -1, 1, 0, 23), vq = in({2, 4, 3, 3}, -1, 1, 0, 24);
  gradcheck(
      [](auto &t) {
        return scaled_dot_product_attention(t[0], t[1], t[2], Tensor(), true,
                                            0.3);
      },
      {q, kq, vq}, dev(), "causal attention with a scale");
  Tensor bool_mask =
      from_vector(sample(18, -1, 1, 0, 25), {3, 6}, dev()) > -0.5;
  gradcheck(
      [&](auto &t) {
        return scaled_dot_product_attention(t[0], t[1], t[2], bool_mask);
      },
      {q, k, v}, dev(), "attention with a bool mask");
  gradcheck(
      [](auto &t) {
        return scaled_dot_product_attention(t[0], t[1], t[2], t[3]);
      },
      {q, k, v, in({3, 6}, -1, 1, 0, 26)}, dev(),
      "attention with an additive mask (its gradient too)");
}

TEST_P(Autograd, JoinsAndCopies) {
  Input a = in({2, 3}, -1, 1, 0, 30), b = in({2, 1}, -1, 1, 0, 31);
  gradcheck([](auto &t) { return cat({t[0], t[1], t[0]}, 1); }, {a, b}, dev(),
            "cat");
  gradcheck([](auto &t) { return stack({t[0], t[0] * t[0]}, 1); }, {a}, dev(),
            "stack");
  gradcheck([](auto &t) { return t[0].clone() * t[0]; }, {a}, dev(), "clone");
  gradcheck(
      [](auto &t) {
        Tensor y = zeros({2, 3}, DType::f64, t[0].device());
        y.copy_(t[1]); // broadcast: the gradient sums over the copies
        return y * t[0];
      },
      {a, b}, dev(), "copy_");
  // A cast: the gradient comes back in the input's dtype.
  Tensor x = make(a, dev()).requires_grad_();
  sum(x.to(DType::f32) * 2.0f).backward();
  EXPECT_EQ(x.grad().dtype(), DType::f64);
  EXPECT_EQ(kt::values(x.grad()), std::vector<double>(6, 2.0));
}

TEST_P(Autograd, InPlaceUpdates) {
  Input x = in({2, 3}, -1, 1, 0, 40), w = in({3}, -1, 1, 0, 41);
  gradcheck(
      [](auto &t) {
        Tensor y = t[0] * 2.0;
        y += t[1];
        y *= t[1]; // reads y's old value: kept before the write
        y /= 3.0;
        return y;
      },
      {x, w}, dev(), "+=, *=, /= on a result");
  gradcheck(
      [](auto &t) {
        Tensor y = zeros({2, 3}, DType::f64, t[0].device());
        y += t[0]; // a fresh tensor that takes history
        return y * y;
      },
      {x}, dev(), "+= on a fresh tensor");
  // A leaf that requires grad: only inside no_grad (an optimizer step).
  Tensor p = make(x, dev()).requires_grad_();
  EXPECT_KILN_ERROR(p += 1.0, "a leaf tensor that requires grad");
  {
    no_grad ng;
    p += 1.0;
  }
  // A result saved for backward, then written in place: the write raises
  // (the saved copy shares the storage).
  Tensor e = exp(p);
  EXPECT_KILN_ERROR(e += 1.0, "storage is shared");
  // A saved operand written where autograd does not record: backward
  // raises, as PyTorch's version counter.
  Tensor a = make(x, dev());
  Tensor y = a * p; // saves a
  a += 1.0;         // a requires nothing: not recorded, but its version moves
  EXPECT_KILN_ERROR(sum(y).backward(), "written in place after it was saved");
}

TEST_P(Autograd, UserModel) {
  Input x = in({2, 3}, -1, 1, 0, 50);
  Tensor p = make(x, dev()).requires_grad_();
  EXPECT_TRUE(p.requires_grad());
  EXPECT_TRUE(p.is_leaf());
  Tensor y = sum(p * p);
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.grad_fn_name(), "sum");
  // retain_graph keeps the saved tensors; gradients accumulate.
  y.backward(Tensor(), true);
  y.backward();
  std::vector<double> g = kt::values(p.grad());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], 4 * x.values[i], 1e-12);
  EXPECT_KILN_ERROR(y.backward(), "a second time");
  // Reset, as an optimizer's zero_grad.
  p.mutable_grad() = Tensor();
  EXPECT_FALSE(p.grad().defined());
  // no_grad: nothing recorded; detach: no history.
  {
    no_grad ng;
    EXPECT_FALSE(is_grad_enabled());
    EXPECT_FALSE((p * 2.0).requires_grad());
    enable_grad eg;
    EXPECT_TRUE((p * 2.0).requires_grad());
  }
  EXPECT_TRUE(is_grad_enabled());
  Tensor d = p.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.data_ptr(), p.data_ptr());
  sum(d * p).backward();
  EXPECT_EQ(kt::values(p.grad()), x.values); // d gets nothing
  // A handle copy is the same tensor; a view of a leaf has history.
  Tensor same = p;
  EXPECT_TRUE(same.grad().defined());
  EXPECT_FALSE(p.view({6}).is_leaf());
  // Errors.
  EXPECT_KILN_ERROR(zeros({2}, DType::i64).requires_grad_(),
                    "only floating tensors");
  EXPECT_KILN_ERROR((p * 2.0).backward(), "one-element tensor");
  EXPECT_KILN_ERROR(make(x, dev()).backward(), "does not require grad");
  // Integer operands get no gradient; the float one does.
  Tensor idx = from_vector<int64_t>({1, 2, 3}, {3}, dev());
  Tensor q = make(in({3}, -1, 1, 0, 51), dev()).requires_grad_();
  sum(q * idx).backward();
  EXPECT_EQ(kt::values(q.grad()), (std::vector<double>{1, 2, 3}));
}

// Gradients keep the leaf's dtype: f32 and bf16 leaves.
TEST_P(Autograd, HalfAndSingle) {
  for (DType dt : {DType::f32, DType::bf16}) {
    Tensor w = ones({4, 3}, dt, dev()).requires_grad_();
    Tensor x = full({2, 4}, 0.5, dt, dev());
    Tensor loss = mean(relu(matmul(x, w)));
    loss.backward();
    EXPECT_EQ(w.grad().dtype(), dt);
    for (double v : kt::values(w.grad()))
      EXPECT_NEAR(v, 2 * 0.5 / 6, 1e-2);
  }
}

// The row ops' and norms' gradients of f16/bf16 tensors are computed in
// f32 (as PyTorch's backward kernels), then rounded once: on rows of 1024,
// within `bound` units of the dtype's last place (relative to the largest
// gradient) of the float64 gradient. Measured on the CPU: layer_norm 0.6-0.7
// (1.7-2.0 when computed in the dtype), rms_norm 1.5-1.65 (1.8-2.1),
// softmax 0.6-0.7 (0.7-0.9).
TEST_P(Autograd, HalfRowOpsComputeInSingle) {
  manual_seed(5);
  Tensor x64 = randn({8, 1024}, DType::f64, dev());
  Tensor w64 = rand({1024}, DType::f64, dev()) + 0.5;
  Tensor g64 = randn({8, 1024}, DType::f64, dev());
  using Op = Tensor (*)(const Tensor &, const Tensor &);
  struct Case {
    const char *name;
    Op op;
    double bound;
  };
  const Case ops[] = {
      {"layer_norm",
       [](const Tensor &x, const Tensor &w) { return layer_norm(x, w, Tensor()); },
       1.2},
      {"rms_norm", [](const Tensor &x, const Tensor &w) { return rms_norm(x, w); },
       1.9},
      {"softmax", [](const Tensor &x, const Tensor &) { return softmax(x, -1); },
       0.85},
  };
  for (auto [name, op, bound] : ops) {
    Tensor xr = x64.clone().requires_grad_();
    op(xr, w64).backward(g64);
    for (DType dt : {DType::bf16, DType::f16}) {
      Tensor x = x64.to(dt).requires_grad_();
      op(x, w64.to(dt)).backward(g64.to(dt));
      // Relative to the gradient's scale, against float64 on the rounded
      // input (the input's own rounding is not the backward's error).
      Tensor xe = x64.to(dt).to(DType::f64).requires_grad_();
      op(xe, w64.to(dt).to(DType::f64)).backward(g64.to(dt).to(DType::f64));
      double scale = max_abs_diff(xe.grad(), zeros({8, 1024}, DType::f64, dev()));
      double err = max_abs_diff(x.grad().to(DType::f64), xe.grad()) / scale;
      double ulp = dt == DType::bf16 ? 0x1p-8 : 0x1p-11;
      EXPECT_LT(err, bound * ulp) << name << " " << dtype_name(dt);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Autograd, KT_DEVICES);
