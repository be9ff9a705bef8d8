// Eager matrix products (kiln/matmul.h): PyTorch's shape rules and error
// checks, then rt::gemm (kiln/gemm.h) once per product, or once per group
// of batch entries that one batch stride cannot reach.
#include "autograd_impl.h"
#include "detail.h"

#include <kiln/gemm.h>
#include <kiln/matmul.h>
#include <kiln/ops.h>

#include <algorithm>
#include <span>

namespace kiln {

using detail::fail;

namespace {

// How BLAS reads a rows x cols matrix with strides (sr, sc): row-major
// (trans false) when a row's elements are adjacent, stored transposed when a
// column's are, the other stride being the leading dimension. A single row
// or column fits either way. False: neither (the caller copies it).
struct BlasLayout {
  bool trans = false;
  int64_t ld = 1;
};
bool blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc,
                 BlasLayout &out) {
  if (rows == 0 || cols == 0) { // nothing is read
    out = {false, std::max<int64_t>(1, cols)};
    return true;
  }
  const bool one_row = rows <= 1, one_col = cols <= 1;
  if ((sc == 1 || one_col) && (one_row || sr >= std::max<int64_t>(1, cols))) {
    out = {false, one_row ? std::max<int64_t>(1, cols) : sr};
    return true;
  }
  if ((sr == 1 || one_row) && (one_col || sc >= std::max<int64_t>(1, rows))) {
    out = {true, one_col ? std::max<int64_t>(1, rows) : sc};
    return true;
  }
  return false;
}

void check_defined(const char *fn, const char *name, const Tensor &t) {
  if (!t.defined())
    fail("%s: %s is an undefined tensor", fn, name);
}

// Two operands of one product: defined, one device, one floating dtype.
void check_pair(const char *fn, const char *an, const Tensor &a, const char *bn,
                const Tensor &b) {
  check_defined(fn, an, a);
  check_defined(fn, bn, b);
  if (a.device() != b.device())
    fail("%s: %s is on %s and %s on %s: both must be on one device", fn, an,
         a.device().str().c_str(), bn, b.device().str().c_str());
  for (const auto &[name, t] : {std::pair{an, &a}, std::pair{bn, &b}})
    if (!is_floating(t->dtype()))
      fail("%s: %s has dtype %s: matrix products take f32, f16, bf16 or f64 "
           "(integer and bool products are not supported; convert with "
           ".to(kiln::f32))",
           fn, name, dtype_name(t->dtype()));
  if (a.dtype() != b.dtype())
    fail("%s: %s has dtype %s and %s has %s: both must have one dtype "
         "(convert one with .to())",
         fn, an, dtype_name(a.dtype()), bn, dtype_name(b.dtype()));
}

Dims leading(const Tensor &t, int drop) {
  return Dims(std::span<const int64_t>(t.sizes().begin(),
                                       size_t(std::max(t.dim() - drop, 0))));
}

Dims concat(Dims d, std::initializer_list<int64_t> tail) {
  for (int64_t v : tail)
    d.push_back(v);
  return d;
}

// out = act(alpha * a @ b + beta * C + bias) for a [..., m, k] and
// b [..., k, n] whose batch dims broadcast to those of out [..., m, n] (a new
// contiguous tensor); bias: undefined, or n contiguous elements. C is
// `c_data`, laid out as out (the library reads it: no copy), or out itself
// when null.
void product(Tensor a, Tensor b, const Tensor &out, double alpha, double beta,
             const Tensor &bias, rt::Epilogue act = rt::Epilogue::None,
             const void *c_data = nullptr) {
  if (out.numel() == 0)
    return;
  const int nb = out.dim() - 2;
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1);
  BlasLayout la, lb;
  if (!blas_layout(m, k, a.stride(-2), a.stride(-1), la)) {
    a = a.contiguous();
    blas_layout(m, k, a.stride(-2), a.stride(-1), la);
  }
  if (!blas_layout(k, n, b.stride(-2), b.stride(-1), lb)) {
    b = b.contiguous();
    blas_layout(k, n, b.stride(-2), b.stride(-1), lb);
  }
  // The batch dims, aligned to out's (stride 0 where an operand broadcasts),
  // size-1 dims dropped, and neighbours merged where every operand steps
  // over the inner one exactly once per outer step.
  struct BatchDim {
    int64_t size, sa, sb, sd;
  };
  BatchDim dims[kMaxRank];
  int nd = 0;
  for (int i = 0; i < nb; ++i) {
    const int64_t size = out.size(i);
    if (size == 1)
      continue;
    auto stride_of = [&](const Tensor &t) -> int64_t {
      int j = i - (nb - (t.dim() - 2));
      return j >= 0 && t.size(j) != 1 ? t.stride(j) : 0;
    };
    BatchDim d{size, stride_of(a), stride_of(b), out.stride(i)};
    if (nd > 0) {
      BatchDim &o = dims[nd - 1];
      if (o.sa == d.sa * size && o.sb == d.sb * size && o.sd == d.sd * size) {
        o = {o.size * size, d.sa, d.sb, d.sd};
        continue;
      }
    }
    dims[nd++] = d;
  }

  rt::GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.data_ptr();
  g.lda = la.ld;
  g.trans_a = la.trans;
  g.b = b.data_ptr();
  g.ldb = lb.ld;
  g.trans_b = lb.trans;
  g.ab_dtype = a.dtype();
  g.d = out.data_ptr();
  g.ldd = n;
  g.d_dtype = out.dtype();
  g.c = beta == 0 ? nullptr : c_data ? c_data : out.data_ptr();
  g.ldc = n;
  g.alpha = alpha;
  g.beta = beta;
  if (bias.defined()) {
    g.bias = bias.data_ptr();
    g.bias_dtype = bias.dtype();
  }
  g.epilogue = act;
  // One B for every batch entry and A's rows evenly spaced through the
  // batch (a linear layer's [batch, seq, in] input): one GEMM of batch * m
  // rows, as out's rows are evenly spaced too.
  if (nd == 1 && dims[0].sb == 0 && !la.trans && dims[0].sa > 0 &&
      (m == 1 ? dims[0].sa >= std::max<int64_t>(1, k)
              : dims[0].sa == m * la.ld)) {
    g.m = m * dims[0].size;
    g.lda = dims[0].sa / m;
    nd = 0;
  }
  if (nd == 0) {
    rt::gemm(out.device(), g);
    return;
  }
  // The innermost batch dim is one strided batch; the dims outside it, if
  // any, a loop of calls.
  const BatchDim &in = dims[nd - 1];
  g.batch = in.size;
  g.stride_a = in.sa;
  g.stride_b = in.sb;
  g.stride_c = g.stride_d = in.sd;
  int64_t outer = 1;
  for (int i = 0; i < nd - 1; ++i)
    outer *= dims[i].size;
  const size_t es = a.element_size(), ds = out.element_size();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rem = o, oa = 0, ob = 0, od = 0;
    for (int i = nd - 2; i >= 0; --i) {
      int64_t idx = rem % dims[i].size;
      rem /= dims[i].size;
      oa += idx * dims[i].sa;
      ob += idx * dims[i].sb;
      od += idx * dims[i].sd;
    }
    g.a = static_cast<const char *>(a.data_ptr()) + oa * int64_t(es);
    g.b = static_cast<const char *>(b.data_ptr()) + ob * int64_t(es);
    g.d = static_cast<char *>(out.data_ptr()) + od * int64_t(ds);
    g.c = beta == 0 ? nullptr
          : c_data  ? static_cast<const char *>(c_data) + od * int64_t(ds)
                    : g.d;
    rt::gemm(out.device(), g);
  }
}

// A bias of one value per output column (shape [n], or [1, ..., 1, n]), as
// n contiguous elements; undefined if `b` is not of that form.
Tensor column_bias(const Tensor &b, int64_t n) {
  if (b.dim() == 0 || b.size(-1) != n)
    return Tensor();
  for (int i = 0; i + 1 < b.dim(); ++i)
    if (b.size(i) != 1)
      return Tensor();
  return b.reshape({n}).contiguous();
}

// Whether the library can read addend `c` as the GEMM's C in place of the
// result `out` (viewed as `result`): c has the result's shape, dtype and
// device and is contiguous, as out is, so one layout serves both.
bool reads_in_place(const Tensor &c, const Tensor &out, const Dims &result) {
  return c.sizes() == result && c.is_contiguous() &&
         c.dtype() == out.dtype() && c.device() == out.device();
}

// The result of a product with an addend `c` of any shape broadcasting to
// `shape`: c added as a bias where it is one value per column and
// beta == 1; else read by the library as C where it has the result's
// contiguous layout; else copied into the result first (one copy). beta
// scales it; beta == 0 reads nothing of c.
Tensor product_plus(const char *fn, const Tensor &a, const Tensor &b,
                    const Tensor &c, const Dims &shape, const Dims &result,
                    double alpha, double beta) {
  Tensor out = detail::empty_for(fn, shape, a.dtype(), a.device());
  Tensor bias;
  const void *c_data = nullptr;
  if (c.defined() && beta != 0) {
    bias = beta == 1 ? column_bias(c, shape[shape.rank() - 1]) : Tensor();
    if (!bias.defined() && out.numel() > 0) {
      if (reads_in_place(c, out, result))
        c_data = c.data_ptr();
      else
        detail::copy_same_device(out.view(result), c, fn);
    }
  }
  product(a, b, out, alpha, bias.defined() || !c.defined() ? 0 : beta, bias,
          rt::Epilogue::None, c_data);
  return out.view(result);
}

// `c` (the addend of addmm, the bias of linear) next to the operands.
void check_addend(const char *fn, const char *name, const Tensor &c,
                  const Tensor &like, const Dims &result) {
  check_defined(fn, name, c);
  if (c.device() != like.device())
    fail("%s: %s is on %s and the operands on %s: all must be on one device",
         fn, name, c.device().str().c_str(), like.device().str().c_str());
  if (c.dtype() != like.dtype())
    fail("%s: %s has dtype %s and the operands %s: all must have one dtype "
         "(convert with .to())",
         fn, name, dtype_name(c.dtype()), dtype_name(like.dtype()));
  if (!rt::broadcasts_to(c.sizes(), result))
    fail("%s: %s of shape %s does not broadcast to the result's shape %s", fn,
         name, c.sizes().str().c_str(), result.str().c_str());
}

} // namespace

namespace {

// A product as [..., m, k] @ [..., k, n] operands, the shape of the
// matrices it writes, and the result's (a 1-D operand's dim dropped).
struct Prepared {
  Tensor a, b;
  Dims shape, result;
};

Prepared prepare_matmul(const char *fn, const Tensor &a, const Tensor &b) {
  check_pair(fn, "a", a, "b", b);
  if (a.dim() == 0 || b.dim() == 0)
    fail("%s: both operands need at least one dim, got shapes %s and %s", fn,
         a.sizes().str().c_str(), b.sizes().str().c_str());
  // A 1-D operand becomes a matrix of one row (a) or one column (b).
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  const int64_t ka = a2.size(-1), kb = b2.size(-2);
  if (ka != kb) {
    if (a.dim() == 1 && b.dim() == 1)
      fail("%s: 1-D operands of sizes %lld and %lld: a dot product needs "
           "equal sizes",
           fn, (long long)ka, (long long)kb);
    fail("%s: shapes %s and %s cannot be multiplied: a's last dim (%lld) "
         "must equal b's %s (%lld)",
         fn, a.sizes().str().c_str(), b.sizes().str().c_str(), (long long)ka,
         b.dim() == 1 ? "size" : "second-to-last dim", (long long)kb);
  }
  Dims ba = leading(a2, 2), bb = leading(b2, 2), batch;
  if (!rt::broadcast_shapes({&ba, &bb}, batch))
    fail("%s: batch dims %s and %s (of shapes %s and %s) do not broadcast", fn,
         ba.str().c_str(), bb.str().c_str(), a.sizes().str().c_str(),
         b.sizes().str().c_str());
  const int64_t m = a2.size(-2), n = b2.size(-1);
  Dims result = batch;
  if (a.dim() > 1)
    result.push_back(m);
  if (b.dim() > 1)
    result.push_back(n);
  return {a2, b2, concat(batch, {m, n}), result};
}

Prepared prepare_linear(const char *fn, const Tensor &x, const Tensor &w) {
  check_pair(fn, "x", x, "w", w);
  if (x.dim() == 0)
    fail("%s: x must have at least one dim, got a 0-d tensor", fn);
  if (w.dim() != 1 && w.dim() != 2)
    fail("%s: w must be [out, in] or [in], got shape %s", fn,
         w.sizes().str().c_str());
  if (x.size(-1) != w.size(-1))
    fail("%s: x of shape %s and w of shape %s do not fit: x's last dim "
         "(%lld) must equal w's last dim (%lld)",
         fn, x.sizes().str().c_str(), w.sizes().str().c_str(),
         (long long)x.size(-1), (long long)w.size(-1));
  Tensor x2 = x.dim() == 1 ? x.unsqueeze(0) : x;
  Tensor wt = w.dim() == 2 ? w.transpose(0, 1) : w.unsqueeze(1); // [in, out]
  const int64_t m = x2.size(-2), n = wt.size(1);
  Dims result = leading(x, 1);
  if (w.dim() == 2)
    result.push_back(n);
  return {x2, wt, concat(leading(x2, 2), {m, n}), result};
}

} // namespace

static Tensor matmul_eager(const Tensor &a, const Tensor &b) {
  const char *fn = "kiln::matmul";
  Prepared p = prepare_matmul(fn, a, b);
  Tensor out = detail::empty_for(fn, p.shape, a.dtype(), a.device());
  product(p.a, p.b, out, 1, 0, Tensor());
  return out.view(p.result);
}

static Tensor linear_eager(const Tensor &x, const Tensor &w, const Tensor &b) {
  const char *fn = "kiln::linear";
  Prepared p = prepare_linear(fn, x, w);
  if (b.defined())
    check_addend(fn, "b", b, x, p.result);
  return product_plus(fn, p.a, p.b, b, p.shape, p.result, 1, 1);
}

static Tensor bmm_eager(const Tensor &a, const Tensor &b) {
  const char *fn = "kiln::bmm";
  check_pair(fn, "a", a, "b", b);
  if (a.dim() != 3 || b.dim() != 3)
    fail("%s: expected 3-D tensors, got shapes %s and %s", fn,
         a.sizes().str().c_str(), b.sizes().str().c_str());
  if (a.size(0) != b.size(0))
    fail("%s: batch sizes %lld and %lld differ (shapes %s and %s); bmm does "
         "not broadcast (kiln::matmul does)",
         fn, (long long)a.size(0), (long long)b.size(0),
         a.sizes().str().c_str(), b.sizes().str().c_str());
  if (a.size(2) != b.size(1))
    fail("%s: shapes %s and %s cannot be multiplied: a's last dim (%lld) "
         "must equal b's second dim (%lld)",
         fn, a.sizes().str().c_str(), b.sizes().str().c_str(),
         (long long)a.size(2), (long long)b.size(1));
  Tensor out = detail::empty_for(fn, {a.size(0), a.size(1), b.size(2)},
                                 a.dtype(), a.device());
  product(a, b, out, 1, 0, Tensor());
  return out;
}

static Tensor addmm_eager(const Tensor &c, const Tensor &a, const Tensor &b, double beta,
             double alpha) {
  const char *fn = "kiln::addmm";
  check_pair(fn, "a", a, "b", b);
  if (a.dim() != 2 || b.dim() != 2)
    fail("%s: a and b must be 2-D, got shapes %s and %s", fn,
         a.sizes().str().c_str(), b.sizes().str().c_str());
  if (a.size(1) != b.size(0))
    fail("%s: shapes %s and %s cannot be multiplied: a's last dim (%lld) "
         "must equal b's first dim (%lld)",
         fn, a.sizes().str().c_str(), b.sizes().str().c_str(),
         (long long)a.size(1), (long long)b.size(0));
  Dims shape{a.size(0), b.size(1)};
  check_addend(fn, "c", c, a, shape);
  return product_plus(fn, a, b, c, shape, shape, alpha, beta);
}

// --- autograd: the products' derivatives ---

namespace {
Tensor last_two_swapped(const Tensor &t) {
  return t.transpose(t.dim() - 2, t.dim() - 1);
}
} // namespace

Tensor matmul(const Tensor &a, const Tensor &b) {
  autograd::Recorder rec("matmul", {&a, &b});
  Tensor r = matmul_eager(a, b);
  if (rec)
    rec.finish(r, {a, b}, [](const Tensor &g, const std::vector<Tensor> &sv,
                             const std::vector<bool> &need) {
      const Tensor &a = sv[0], &b = sv[1];
      // As 2-D-or-more products: a 1-D a is a row, a 1-D b a column.
      Tensor A = a.dim() == 1 ? a.unsqueeze(0) : a;
      Tensor B = b.dim() == 1 ? b.unsqueeze(1) : b;
      Tensor G = g;
      if (b.dim() == 1)
        G = G.unsqueeze(G.dim());
      if (a.dim() == 1)
        G = G.unsqueeze(G.dim() - 1);
      std::vector<Tensor> out(2);
      if (need[0])
        out[0] = autograd::sum_to(matmul_eager(G, last_two_swapped(B)),
                                  A.sizes())
                     .reshape(a.sizes());
      if (need[1])
        out[1] = autograd::sum_to(matmul_eager(last_two_swapped(A), G),
                                  B.sizes())
                     .reshape(b.sizes());
      return out;
    });
  return r;
}

Tensor linear(const Tensor &x, const Tensor &w, const Tensor &b) {
  autograd::Recorder rec("linear", {&x, &w, &b});
  Tensor r = linear_eager(x, w, b);
  if (rec)
    rec.finish(r, {x, w}, [](const Tensor &g, const std::vector<Tensor> &sv,
                             const std::vector<bool> &need) {
      const Tensor &x = sv[0], &w = sv[1];
      std::vector<Tensor> out(3);
      if (w.dim() == 1) { // y = x . w over the last dim
        Tensor gu = g.unsqueeze(g.dim());
        if (need[0])
          out[0] = gu * w;
        if (need[1])
          out[1] = autograd::sum_to(gu * x, w.sizes());
      } else {
        if (need[0])
          out[0] = matmul_eager(g, w);
        if (need[1]) {
          const int64_t o = w.size(0), i = w.size(1);
          Tensor g2 = g.reshape({-1, o}), x2 = x.reshape({-1, i});
          out[1] = matmul_eager(g2.transpose(0, 1), x2);
        }
      }
      if (need[2])
        out[2] = g; // summed to the bias's shape
      return out;
    });
  return r;
}

Tensor bmm(const Tensor &a, const Tensor &b) {
  autograd::Recorder rec("bmm", {&a, &b});
  Tensor r = bmm_eager(a, b);
  if (rec)
    rec.finish(r, {a, b}, [](const Tensor &g, const std::vector<Tensor> &sv,
                             const std::vector<bool> &need) {
      std::vector<Tensor> out(2);
      if (need[0])
        out[0] = bmm_eager(g, sv[1].transpose(1, 2));
      if (need[1])
        out[1] = bmm_eager(sv[0].transpose(1, 2), g);
      return out;
    });
  return r;
}

Tensor addmm(const Tensor &c, const Tensor &a, const Tensor &b, double beta,
             double alpha) {
  autograd::Recorder rec("addmm", {&c, &a, &b});
  Tensor r = addmm_eager(c, a, b, beta, alpha);
  if (rec)
    rec.finish(r, {a, b},
               [beta, alpha](const Tensor &g, const std::vector<Tensor> &sv,
                             const std::vector<bool> &need) {
                 std::vector<Tensor> out(3);
                 if (need[0])
                   out[0] = g * beta;
                 if (need[1])
                   out[1] = matmul_eager(g, sv[1].transpose(0, 1)) * alpha;
                 if (need[2])
                   out[2] = matmul_eager(sv[0].transpose(0, 1), g) * alpha;
                 return out;
               });
  return r;
}

} // namespace kiln

namespace kiln::gen {


bool product_shape(Product p, const Dims &a, const Dims &b,
                   std::initializer_list<const Dims *> addends, Dims &out) {
  const int ra = a.rank(), rb = b.rank();
  Dims result;
  if (p == Product::Bmm) {
    if (ra != 3 || rb != 3 || a[0] != b[0] || a[2] != b[1])
      return false;
    result = Dims{a[0], a[1], b[2]};
  } else if (p == Product::Matmul) {
    if (ra == 0 || rb == 0)
      return false;
    const int64_t ka = a[ra - 1], kb = rb == 1 ? b[0] : b[rb - 2];
    if (ka != kb)
      return false;
    Dims ba(std::span<const int64_t>(a.begin(), size_t(std::max(ra - 2, 0))));
    Dims bb(std::span<const int64_t>(b.begin(), size_t(std::max(rb - 2, 0))));
    if (!rt::broadcast_shapes({&ba, &bb}, result))
      return false;
    if (ra > 1)
      result.push_back(a[ra - 2]);
    if (rb > 1)
      result.push_back(b[rb - 1]);
  } else {
    if (ra == 0 || (rb != 1 && rb != 2) || a[ra - 1] != b[rb - 1])
      return false;
    result = Dims(std::span<const int64_t>(a.begin(), size_t(ra - 1)));
    if (rb == 2)
      result.push_back(b[0]);
  }
  for (const Dims *d : addends)
    if (!rt::broadcasts_to(*d, result))
      return false;
  out = result;
  return true;
}

bool attention_products_shape(Product p, const Dims &q, const Dims &k,
                              const Dims &v) {
  const int r = k.rank();
  if (r < 2)
    return false; // k.transpose(-2, -1) raises
  Dims kt = k, s, o;
  std::swap(kt[r - 1], kt[r - 2]);
  return product_shape(p, q, kt, {}, s) && product_shape(p, s, v, {}, o);
}

void check_attention_products(Product p, const Tensor &q, const Tensor &k,
                              const Tensor &v) {
  if (attention_products_shape(p, q.sizes(), k.sizes(), v.sizes()))
    return;
  auto eager = [p](const Tensor &a, const Tensor &b) {
    return p == Product::Bmm ? bmm(a, b) : matmul(a, b);
  };
  // Each raises where its product_shape fails (an empty tensor of the
  // scores' shape stands in for them).
  const Tensor kt = k.transpose(-2, -1);
  Dims s;
  if (!product_shape(p, q.sizes(), kt.sizes(), {}, s))
    (void)eager(q, kt);
  else
    (void)eager(empty(s, q.dtype(), q.device()), v);
  detail::fail("attention written as %s: operands of shapes the products "
               "do not take",
               p == Product::Bmm ? "bmm" : "matmul");
}

Tensor product(Product p, const Tensor &a, const Tensor &b, const Tensor &bias,
               const Tensor &addend, rt::Epilogue act) {
  // bmm's operands passed product_shape: 3-D, one batch; as matmul's then.
  const char *fn = p == Product::Matmul ? "kiln::matmul"
                   : p == Product::Bmm  ? "kiln::bmm"
                                        : "kiln::linear";
  Prepared pr = p == Product::Linear ? prepare_linear(fn, a, b)
                                     : prepare_matmul(fn, a, b);
  Tensor out = detail::empty_for(fn, pr.shape, a.dtype(), a.device());
  const int64_t n = pr.shape[pr.shape.rank() - 1];
  // One value per output column goes to the GEMM's bias; any other addend
  // is added by the GEMM as beta * C: read in place where it has the
  // result's contiguous layout (a residual), else copied into the result
  // first.
  Tensor col, c;
  for (const Tensor *t : {&bias, &addend}) {
    if (!t->defined())
      continue;
    if (t->dtype() != a.dtype())
      fail("%s: an addend has dtype %s and the operands %s", fn,
           dtype_name(t->dtype()), dtype_name(a.dtype()));
    Tensor cb = col.defined() ? Tensor() : column_bias(*t, n);
    if (cb.defined())
      col = cb;
    else
      c = c.defined() ? c + *t : *t;
  }
  const void *c_data = nullptr;
  if (c.defined() && out.numel() > 0) {
    if (reads_in_place(c, out, pr.result))
      c_data = c.data_ptr();
    else
      detail::copy_same_device(out.view(pr.result), c, fn);
  }
  kiln::product(pr.a, pr.b, out, 1, c.defined() ? 1 : 0, col, act, c_data);
  return out.view(pr.result);
}

} // namespace kiln::gen
