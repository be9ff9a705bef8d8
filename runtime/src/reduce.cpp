// Eager reductions and row-wise ops (kiln/ops.h): checks, result shapes and
// dtypes, and the [outer, R, inner] view handed to the CPU or CUDA kernel.
#include "autograd_impl.h"
#include "detail.h"
#include "reduce_programs.h"

#include <kiln/ops.h>

namespace kiln {

using detail::fail;
using detail::ReduceKind;
using detail::ReduceLaunch;

namespace {

std::string qualified(ReduceKind k) {
  return std::string("kiln::") + detail::reduce_kind_name(k);
}

// The input's view as [outer, R, inner] and the result's shape.
struct Plan {
  ReduceKind kind;
  Tensor x; // contiguous
  int64_t outer = 1, R = 1, inner = 1;
  Dims out_shape;
  int dim = -1; // the reduced dim, -1 for all
};

const Tensor &checked(ReduceKind k, const Tensor &x) {
  if (!x.defined())
    fail("%s: the input tensor is undefined", qualified(k).c_str());
  // Composites (mean, softmax, ...) are defined on floats only.
  bool need_float =
      detail::reduce_kind_info(k).rule == detail::ReduceRule::COMPOSITE;
  if (need_float && !is_floating(x.dtype()))
    fail("%s: expected a floating-point tensor (f32, f16, bf16, f64), got %s",
         qualified(k).c_str(), dtype_name(x.dtype()));
  return x;
}

int wrap(ReduceKind k, int64_t dim, int rank) {
  int r = rank > 0 ? rank : 1; // a 0-d tensor takes dims -1 and 0
  if (dim < -r || dim >= r)
    fail("%s: dim %lld is out of range for a tensor of rank %d (expected %d "
         "to %d)",
         qualified(k).c_str(), (long long)dim, rank, -r, r - 1);
  return int(dim < 0 ? dim + r : dim);
}

Plan plan_dim(ReduceKind k, const Tensor &x, int64_t dim, bool keepdim) {
  Plan p{k};
  p.x = checked(k, x).contiguous();
  int rank = x.dim();
  p.dim = wrap(k, dim, rank);
  for (int i = 0; i < rank; ++i) {
    int64_t s = x.size(i);
    if (i < p.dim)
      p.outer *= s;
    else if (i > p.dim)
      p.inner *= s;
    else
      p.R = s;
    if (i != p.dim || keepdim)
      p.out_shape.push_back(i == p.dim ? 1 : s);
  }
  return p;
}

Plan plan_all(ReduceKind k, const Tensor &x) {
  Plan p{k};
  p.x = checked(k, x).contiguous();
  p.R = x.numel();
  return p;
}

void check_not_empty(const Plan &p) {
  if (p.R != 0)
    return;
  const ReduceKind k = p.kind;
  if (p.dim < 0)
    fail("%s: cannot reduce over an empty dimension (the tensor %s has no "
         "elements)",
         qualified(k).c_str(), p.x.sizes().str().c_str());
  fail("%s: cannot reduce over an empty dimension (dim %d of %s)",
       qualified(k).c_str(), p.dim, p.x.sizes().str().c_str());
}

ReduceLaunch launch_for(const Plan &p, const Tensor &out) {
  ReduceLaunch l;
  l.kind = p.kind;
  l.dtype = p.x.dtype();
  l.in = p.x.data_ptr();
  l.out = out.data_ptr();
  l.outer = p.outer;
  l.R = p.R;
  l.inner = p.inner;
  l.device = p.x.device().index;
  return l;
}

void run(const ReduceLaunch &l, Device dev) {
  rt::NvtxRange range(reduce_kind_name(l.kind));
  if (dev.is_cpu())
    detail::cpu_reduce(l);
  else
    detail::cuda_reduce(l);
}

// A reduction to one value per line.
Tensor reduce(const Plan &p, int64_t correction = 1) {
  const ReduceKind k = p.kind;
  // The table's rules: INDEX gives i64, SUM gives i64 for integers and
  // bools; SAME and INDEX have no result over an empty dimension.
  const detail::ReduceRule rule = detail::reduce_kind_info(k).rule;
  DType dt = p.x.dtype();
  if (rule == detail::ReduceRule::INDEX ||
      (rule == detail::ReduceRule::SUM && !is_floating(dt)))
    dt = DType::i64;
  if (rule == detail::ReduceRule::SAME || rule == detail::ReduceRule::INDEX)
    check_not_empty(p);
  Tensor out = detail::empty_for(qualified(k).c_str(), p.out_shape, dt,
                                 p.x.device());
  if (out.numel() == 0)
    return out;
  ReduceLaunch l = launch_for(p, out);
  l.correction = correction;
  run(l, p.x.device());
  return out;
}

// A row-wise op: the result has the input's shape.
Tensor rowwise(const Plan &p, const ReduceLaunch &extra) {
  Tensor out = detail::empty_for(qualified(p.kind).c_str(), p.x.sizes(),
                                 p.x.dtype(), p.x.device());
  if (out.numel() == 0)
    return out;
  ReduceLaunch l = launch_for(p, out);
  l.eps = extra.eps;
  l.weight = extra.weight;
  l.bias = extra.bias;
  l.weight_stride = extra.weight_stride;
  l.bias_stride = extra.bias_stride;
  run(l, p.x.device());
  return out;
}

// Norms: over the last dim, with optional weight and bias of its size.
Plan plan_last(ReduceKind k, const Tensor &x) {
  checked(k, x);
  if (x.dim() == 0)
    fail("%s: expected a tensor of at least one dim, got a 0-d tensor",
         qualified(k).c_str());
  return plan_dim(k, x, -1, true);
}

void set_affine(const Plan &p, const Tensor &t, const char *what,
                const void *&data, int64_t &stride) {
  if (!t.defined())
    return;
  std::string fn = qualified(p.kind);
  if (t.dim() != 1 || t.size(0) != p.R)
    fail("%s: %s must have shape [%lld] (the last dim of the input %s), got %s",
         fn.c_str(), what, (long long)p.R, p.x.sizes().str().c_str(),
         t.sizes().str().c_str());
  if (t.dtype() != p.x.dtype())
    fail("%s: %s has dtype %s but the input has %s", fn.c_str(), what,
         dtype_name(t.dtype()), dtype_name(p.x.dtype()));
  if (t.device() != p.x.device())
    fail("%s: %s is on %s but the input is on %s", fn.c_str(), what,
         t.device().str().c_str(), p.x.device().str().c_str());
  data = t.data_ptr();
  stride = t.stride(0);
}

} // namespace

// Each op records for autograd (kiln/ops.def's KILN_DERIVATIVE of its name)
// when an input requires grad.
namespace {
std::vector<int64_t> all_dims(const Tensor &x) {
  std::vector<int64_t> d;
  for (int i = 0; i < x.dim(); ++i)
    d.push_back(i);
  return d;
}
std::vector<int64_t> one_dim(const Tensor &x, int64_t dim) {
  if (x.dim() == 0)
    return {};
  return {int64_t(detail::wrap_dim(int(dim), x.dim(), "kiln autograd"))};
}
Tensor whole(ReduceKind k, const Tensor &x) {
  autograd::Recorder rec(reduce_kind_name(k), {&x});
  Tensor r = reduce(plan_all(k, x));
  if (rec)
    autograd::record_reduction(rec, reduce_kind_name(k), x, {}, {},
                               all_dims(x), false, r);
  return r;
}
Tensor along(ReduceKind k, const Tensor &x, int64_t dim, bool keepdim,
             int64_t correction = 1) {
  autograd::Recorder rec(reduce_kind_name(k), {&x});
  Tensor r = reduce(plan_dim(k, x, dim, keepdim), correction);
  if (rec) {
    std::vector<double> scalars;
    if (k == ReduceKind::Var)
      scalars.push_back(double(correction));
    autograd::record_reduction(rec, reduce_kind_name(k), x, {}, scalars,
                               one_dim(x, dim), keepdim, r);
  }
  return r;
}
} // namespace

Tensor sum(const Tensor &x) { return whole(ReduceKind::Sum, x); }
Tensor sum(const Tensor &x, int64_t dim, bool keepdim) {
  return along(ReduceKind::Sum, x, dim, keepdim);
}
Tensor mean(const Tensor &x) { return whole(ReduceKind::Mean, x); }
Tensor mean(const Tensor &x, int64_t dim, bool keepdim) {
  return along(ReduceKind::Mean, x, dim, keepdim);
}
Tensor amax(const Tensor &x) { return whole(ReduceKind::Amax, x); }
Tensor amax(const Tensor &x, int64_t dim, bool keepdim) {
  return along(ReduceKind::Amax, x, dim, keepdim);
}
Tensor amin(const Tensor &x) { return whole(ReduceKind::Amin, x); }
Tensor amin(const Tensor &x, int64_t dim, bool keepdim) {
  return along(ReduceKind::Amin, x, dim, keepdim);
}
Tensor argmax(const Tensor &x) { return reduce(plan_all(ReduceKind::Argmax, x)); }
Tensor argmax(const Tensor &x, int64_t dim, bool keepdim) {
  return reduce(plan_dim(ReduceKind::Argmax, x, dim, keepdim));
}
Tensor logsumexp(const Tensor &x) { return whole(ReduceKind::Logsumexp, x); }
Tensor logsumexp(const Tensor &x, int64_t dim, bool keepdim) {
  return along(ReduceKind::Logsumexp, x, dim, keepdim);
}
Tensor var(const Tensor &x) {
  autograd::Recorder rec("var", {&x});
  Tensor r = reduce(plan_all(ReduceKind::Var, x));
  if (rec)
    autograd::record_reduction(rec, "var", x, {}, {1.0}, all_dims(x), false,
                               r);
  return r;
}
Tensor var(const Tensor &x, int64_t dim, bool keepdim, int64_t correction) {
  return along(ReduceKind::Var, x, dim, keepdim, correction);
}

Tensor softmax(const Tensor &x, int64_t dim) {
  autograd::Recorder rec("softmax", {&x});
  Tensor r = rowwise(plan_dim(ReduceKind::Softmax, x, dim, true), {});
  if (rec)
    autograd::record_reduction(rec, "softmax", x, {}, {}, one_dim(x, dim),
                               true, r);
  return r;
}
Tensor log_softmax(const Tensor &x, int64_t dim) {
  autograd::Recorder rec("log_softmax", {&x});
  Tensor r = rowwise(plan_dim(ReduceKind::LogSoftmax, x, dim, true), {});
  if (rec)
    autograd::record_reduction(rec, "log_softmax", x, {}, {}, one_dim(x, dim),
                               true, r);
  return r;
}

Tensor layer_norm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                  double eps) {
  autograd::Recorder rec("layer_norm", {&x, &weight, &bias});
  Plan p = plan_last(ReduceKind::LayerNorm, x);
  ReduceLaunch extra;
  extra.eps = eps;
  set_affine(p, weight, "weight", extra.weight, extra.weight_stride);
  set_affine(p, bias, "bias", extra.bias, extra.bias_stride);
  Tensor r = rowwise(p, extra);
  if (rec)
    autograd::record_reduction(rec, "layer_norm", x, {&weight, &bias}, {eps},
                               one_dim(x, -1), true, r);
  return r;
}

Tensor rms_norm(const Tensor &x, const Tensor &weight, double eps) {
  autograd::Recorder rec("rms_norm", {&x, &weight});
  Plan p = plan_last(ReduceKind::RmsNorm, x);
  ReduceLaunch extra;
  extra.eps = eps < 0 ? machine_epsilon(x.dtype()) : eps;
  set_affine(p, weight, "weight", extra.weight, extra.weight_stride);
  Tensor r = rowwise(p, extra);
  if (rec)
    autograd::record_reduction(rec, "rms_norm", x, {&weight}, {extra.eps},
                               one_dim(x, -1), true, r);
  return r;
}

} // namespace kiln
