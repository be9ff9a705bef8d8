// A float64 model of the eager reductions and row-wise ops for the unit
// tests, written from PyTorch's definitions (not from kiln/ops.def), with
// per-dtype tolerances, and helpers that build inputs and compare results.
#pragma once

#include "runtime_reference.h"

#include <functional>
#include <optional>
#include <random>
#include <sstream>

namespace kt {

enum class Red { Sum, Mean, Amax, Amin, Argmax, Var, Logsumexp };
enum class Row { Softmax, LogSoftmax, LayerNorm, RmsNorm };

inline const char *red_name(Red r) {
  static const char *n[] = {"sum", "mean", "amax", "amin", "argmax", "var", "logsumexp"};
  return n[int(r)];
}
inline const char *row_name(Row r) {
  static const char *n[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};
  return n[int(r)];
}

inline std::mt19937_64 &reduce_rng() {
  static std::mt19937_64 r(0x6b696c6e);
  return r;
}

// Random values representable in `dt`: normal(0, scale) for floats,
// [-20, 20] for integers, 0/1 for b8.
inline std::vector<double> random_values(kiln::DType dt, int64_t n,
                                         double scale = 2) {
  auto &r = reduce_rng();
  std::normal_distribution<double> normal(0, scale);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto &x : v) {
    if (dt == kiln::b8)
      x = double(r() & 1);
    else if (kiln::is_integral(dt))
      x = double(int(r() % 41) - 20);
    else
      x = round_to(dt, normal(r));
  }
  return v;
}

inline kiln::Tensor make_tensor(const std::vector<double> &v, const kiln::Dims &shape,
                                kiln::DType dt, kiln::Device dev) {
  return kiln::from_vector(v, shape).to(dt).to(dev);
}

// Frees a block the size of an output of `shape` and `dt`, filled with NaN
// (floats) or -12345: the caching allocator hands it to the next output of
// that size, so an element a kernel forgets to write does not read as zero.
inline void poison_output(const kiln::Dims &shape, kiln::DType dt, kiln::Device dev) {
  (void)kiln::full(shape, kiln::is_floating(dt) ? NAN : -12345.0, dt, dev);
}

// [outer, R, inner] of a reduction over `dim` (all dims when dim is none).
struct Geometry {
  int64_t outer = 1, R = 1, inner = 1;
};
inline Geometry geometry(const kiln::Dims &shape, std::optional<int> dim) {
  Geometry g;
  if (!dim) {
    for (int64_t s : shape)
      g.R *= s;
    return g;
  }
  int d = *dim < 0 ? *dim + std::max(shape.rank(), 1) : *dim;
  for (int i = 0; i < shape.rank(); ++i)
    (i < d ? g.outer : i > d ? g.inner : g.R) *= shape[i];
  return g;
}

// Reference of one reduction over [outer, R, inner]: exact (long double)
// sums, PyTorch's NaN rules. Also returns, per output, the scale of the
// rounding error a float accumulation may make (sum of |terms|).
struct RefOut {
  std::vector<double> vals, scale;
};
inline RefOut ref_reduce(Red op, const std::vector<double> &x, Geometry g,
                         int64_t correction = 1) {
  RefOut out;
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.inner; ++i) {
      auto at = [&](int64_t r) { return x[size_t((o * g.R + r) * g.inner + i)]; };
      long double s = 0, a = 0;
      double v = 0, scale = 0;
      switch (op) {
      case Red::Sum:
      case Red::Mean:
        for (int64_t r = 0; r < g.R; ++r)
          s += at(r), a += std::fabs(at(r));
        v = op == Red::Sum ? double(s) : double(s / g.R);
        scale = op == Red::Sum ? double(a) : double(a / g.R);
        break;
      case Red::Amax:
      case Red::Amin: {
        v = at(0);
        for (int64_t r = 1; r < g.R; ++r)
          v = op == Red::Amax ? nan_max(v, at(r)) : nan_min(v, at(r));
        break;
      }
      case Red::Argmax: {
        int64_t best = 0;
        for (int64_t r = 1; r < g.R && !std::isnan(at(best)); ++r)
          if (std::isnan(at(r)) || at(r) > at(best))
            best = r;
        v = double(best);
        break;
      }
      case Red::Var: {
        for (int64_t r = 0; r < g.R; ++r)
          s += at(r);
        long double m = s / g.R, q = 0;
        for (int64_t r = 0; r < g.R; ++r)
          q += (at(r) - m) * (at(r) - m);
        v = double(q / std::max<int64_t>(0, g.R - correction));
        scale = std::fabs(v);
        break;
      }
      case Red::Logsumexp: {
        double m = -INFINITY;
        for (int64_t r = 0; r < g.R; ++r)
          m = nan_max(m, at(r));
        double z = std::isinf(m) ? 0 : m;
        for (int64_t r = 0; r < g.R; ++r)
          s += std::exp((long double)(at(r) - z));
        v = double(std::log(s) + z);
        scale = std::fabs(v) + 1;
        break;
      }
      }
      out.vals.push_back(v);
      out.scale.push_back(scale);
    }
  return out;
}

// Reference of a row-wise op over [outer, R, inner] (weight/bias: R values
// or empty). `scale` per element as in RefOut.
inline RefOut ref_rowwise(Row op, const std::vector<double> &x, Geometry g,
                          const std::vector<double> &w,
                          const std::vector<double> &b, double eps) {
  RefOut out;
  out.vals.resize(x.size());
  out.scale.resize(x.size());
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.inner; ++i) {
      auto idx = [&](int64_t r) { return size_t((o * g.R + r) * g.inner + i); };
      long double m = -INFINITY, s = 0, q = 0;
      switch (op) {
      case Row::Softmax:
      case Row::LogSoftmax:
        for (int64_t r = 0; r < g.R; ++r)
          m = std::isnan(m) || std::isnan(x[idx(r)]) ? NAN
                                                     : std::max<long double>(m, x[idx(r)]);
        for (int64_t r = 0; r < g.R; ++r)
          s += std::exp(x[idx(r)] - m);
        for (int64_t r = 0; r < g.R; ++r) {
          long double d = x[idx(r)] - m;
          long double y = op == Row::Softmax ? std::exp(d) / s : d - std::log(s);
          out.vals[idx(r)] = double(y);
          out.scale[idx(r)] =
              op == Row::Softmax ? std::fabs(double(y)) : std::fabs(double(d)) + std::fabs(double(std::log(s))) + 1;
        }
        break;
      case Row::LayerNorm:
      case Row::RmsNorm: {
        if (op == Row::LayerNorm) {
          for (int64_t r = 0; r < g.R; ++r)
            s += x[idx(r)];
          m = s / g.R;
        } else {
          m = 0;
        }
        for (int64_t r = 0; r < g.R; ++r)
          q += (x[idx(r)] - m) * (x[idx(r)] - m);
        long double rs = 1 / std::sqrt(q / g.R + eps);
        for (int64_t r = 0; r < g.R; ++r) {
          long double y = (x[idx(r)] - m) * rs;
          long double yw = w.empty() ? y : y * w[size_t(r)];
          long double yb = b.empty() ? yw : yw + b[size_t(r)];
          out.vals[idx(r)] = double(yb);
          out.scale[idx(r)] = std::fabs(double(yw)) + std::fabs(double(yb)) + 1;
        }
        break;
      }
      }
    }
  return out;
}

// Accumulation epsilon (f32 for the 16-bit types) and storage epsilon.
inline double acc_eps(kiln::DType t) {
  return t == kiln::f64 ? epsilon(kiln::f64) : epsilon(kiln::f32);
}

// Compares got with want: exact for integer results and k < 0, else within
// eps(out) * |want| + k * acc_eps * scale (+ a denormal-sized atol).
inline ::testing::AssertionResult close_all(const std::vector<double> &got,
                                            const RefOut &want, kiln::DType in,
                                            kiln::DType out, double k) {
  if (got.size() != want.vals.size())
    return ::testing::AssertionFailure()
           << "got " << got.size() << " values, want " << want.vals.size();
  int bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want.vals[i];
    bool ok;
    if (k < 0 || !kiln::is_floating(out) || std::isnan(w) || std::isinf(w) ||
        std::isnan(g) || std::isinf(g))
      ok = same_value(g, w);
    else
      ok = std::fabs(g - w) <= epsilon(out) * std::fabs(w) +
                                   k * acc_eps(in) * want.scale[i] +
                                   min_normal(out);
    if (!ok && bad++ < 5)
      msg << "\n  [" << i << "] got " << g << " want " << w
          << " (diff " << g - w << ")";
  }
  if (bad)
    return ::testing::AssertionFailure()
           << bad << " of " << got.size() << " values differ:" << msg.str();
  return ::testing::AssertionSuccess();
}

inline std::string describe(const kiln::Dims &shape, kiln::DType dt,
                            std::optional<int> dim, bool keepdim) {
  std::ostringstream s;
  s << dtype_name(dt) << shape.str();
  if (dim)
    s << " dim=" << *dim << (keepdim ? " keepdim" : "");
  else
    s << " (all dims)";
  return s.str();
}

// Shape of a reduction's result.
inline kiln::Dims reduced_shape(const kiln::Dims &shape, std::optional<int> dim,
                                bool keepdim) {
  kiln::Dims out;
  if (!dim)
    return out;
  int d = *dim < 0 ? *dim + std::max(shape.rank(), 1) : *dim;
  for (int i = 0; i < shape.rank(); ++i)
    if (i != d || keepdim)
      out.push_back(i == d ? 1 : shape[i]);
  return out;
}

} // namespace kt
