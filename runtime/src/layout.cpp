// The layout ops' geometry (kiln/ops.def's KILN_VIEW entries): the Tensor
// methods apply it, and compiled code checks it before its launches, so
// both raise on the same inputs with the same messages.
#include "detail.h"

#include <kiln/tensor.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace kiln {

using detail::fail;

const char *view_name(ViewKind k) {
  switch (k) {
#define KILN_POINTWISE(...)
#define KILN_VIEW(Name, name, arity, args)                                            \
  case ViewKind::Name:                                                         \
    return #name;
#include <kiln/ops.def>
  }
  return "?";
}

namespace {

int64_t numel_of(const Dims &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

// Replaces one -1 by the size that keeps numel; checks the element count.
Dims infer_shape(Dims shape, int64_t numel, const char *fn) {
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0)
        fail("%s: only one dimension can be -1 in shape %s", fn,
             shape.str().c_str());
      infer = i;
    } else if (shape[i] < 0) {
      fail("%s: invalid size %lld in shape %s", fn, (long long)shape[i],
           shape.str().c_str());
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      fail("%s: shape %s is invalid for a tensor of %lld elements", fn,
           shape.str().c_str(), (long long)numel);
    shape[infer] = numel / known;
  } else if (known != numel) {
    fail("%s: shape %s is invalid for a tensor of %lld elements", fn,
         shape.str().c_str(), (long long)numel);
  }
  return shape;
}

// Strides that view (sizes, strides) as `shape` without copying, if any
// (PyTorch's computeStride: each run of dims contiguous with one another
// can be re-split freely).
std::optional<Dims> view_strides(const Dims &sizes, const Dims &strides,
                                 const Dims &shape, int64_t numel) {
  Dims out;
  out.resize(shape.rank());
  if (numel == 0 || sizes.rank() == 0)
    return contiguous_strides(shape);
  int view_d = shape.rank() - 1;
  int64_t chunk_base = strides[sizes.rank() - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = sizes.rank() - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 ||
        (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel)
        return std::nullopt;
      if (d > 0) {
        chunk_base = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1)
    return std::nullopt;
  return out;
}

Dims dims_of(std::span<const int64_t> a) { return Dims(a); }

void want_args(std::span<const int64_t> args, size_t n, const char *fn) {
  if (args.size() != n)
    fail("%s: takes %zu integer arguments, not %zu", fn, n, args.size());
}

} // namespace

namespace detail {
int64_t piece_count(int64_t n, int64_t chunks, int64_t size) {
  if (n == 0)
    return chunks > 0 ? chunks : 1;
  const int64_t width = chunks > 0 ? (n + chunks - 1) / chunks : size;
  return (n + width - 1) / width;
}
} // namespace detail

Layout view_layout(ViewKind kind, const Layout &in,
                   std::span<const int64_t> args, bool *copies) {
  const std::string name = std::string("kiln::Tensor::") + view_name(kind);
  const char *fn = name.c_str();
  const int rank = in.sizes.rank();
  const int64_t numel = numel_of(in.sizes);
  if (copies)
    *copies = false;
  Layout out = in;
  switch (kind) {
  case ViewKind::View:
  case ViewKind::Reshape: {
    Dims shape = infer_shape(dims_of(args), numel, fn);
    if (auto st = view_strides(in.sizes, in.strides, shape, numel))
      return {shape, *st, in.offset};
    if (kind == ViewKind::View)
      fail("%s: cannot view a tensor of shape %s and strides %s as %s "
           "without a copy (use reshape)",
           fn, in.sizes.str().c_str(), in.strides.str().c_str(),
           shape.str().c_str());
    if (copies)
      *copies = true;
    return {shape, contiguous_strides(shape), 0};
  }
  case ViewKind::Contiguous:
    want_args(args, 0, fn);
    if (contiguous_layout(in.sizes, in.strides))
      return in;
    if (copies)
      *copies = true;
    return {in.sizes, contiguous_strides(in.sizes), 0};
  case ViewKind::Transpose: {
    want_args(args, 2, fn);
    int d0 = detail::wrap_dim(int(args[0]), rank, fn);
    int d1 = detail::wrap_dim(int(args[1]), rank, fn);
    std::swap(out.sizes[d0], out.sizes[d1]);
    std::swap(out.strides[d0], out.strides[d1]);
    return out;
  }
  case ViewKind::Permute: {
    if (int(args.size()) != rank)
      fail("%s: the order %s names %zu dims of a tensor of rank %d", fn,
           dims_of(args).str().c_str(), args.size(), rank);
    bool seen[kMaxRank] = {};
    for (int i = 0; i < rank; ++i) {
      int d = detail::wrap_dim(int(args[i]), rank, fn);
      if (seen[d])
        fail("%s: dim %d appears twice in the order %s", fn, d,
             dims_of(args).str().c_str());
      seen[d] = true;
      out.sizes[i] = in.sizes[d];
      out.strides[i] = in.strides[d];
    }
    return out;
  }
  case ViewKind::Slice: {
    want_args(args, 4, fn);
    int d = detail::wrap_dim(int(args[0]), rank, fn);
    int64_t start = args[1], end = args[2], step = args[3];
    if (step <= 0)
      fail("%s: step must be positive, got %lld", fn, (long long)step);
    int64_t n = in.sizes[d];
    if (start < 0)
      start += n;
    if (end < 0)
      end += n;
    start = start < 0 ? 0 : start > n ? n : start;
    end = end < start ? start : end > n ? n : end;
    out.sizes[d] = (end - start + step - 1) / step;
    out.strides[d] = in.strides[d] * step;
    out.offset = in.offset + start * in.strides[d];
    return out;
  }
  case ViewKind::Part: {
    want_args(args, 4, fn);
    const int64_t d = args[0], start = args[1], len = args[2], full = args[3];
    if (d >= 0)
      fail("%s: dim %lld must count from the end", fn, (long long)d);
    if (rank < -d || in.sizes[int(rank + d)] == 1)
      return out; // broadcast along d: every piece reads all of it
    const int i = int(rank + d);
    if (in.sizes[i] != full)
      fail("%s: size %lld at dim %d does not broadcast to %lld", fn,
           (long long)in.sizes[i], i, (long long)full);
    if (start < 0 || len < 0 || start + len > full)
      fail("%s: [%lld, %lld) is not within %lld", fn, (long long)start,
           (long long)(start + len), (long long)full);
    out.sizes[i] = len;
    out.offset = in.offset + start * in.strides[i];
    return out;
  }
  case ViewKind::Piece: {
    want_args(args, 4, fn);
    if (rank == 0)
      fail("%s: a zero-dimensional tensor cannot be split", fn);
    const int d = detail::wrap_dim(int(args[0]), rank, fn);
    const int64_t index = args[1], chunks = args[2], size = args[3];
    const int64_t n = in.sizes[d];
    if (chunks < 0 || (chunks > 0 && size != 0))
      fail("%s: chunks %lld with size %lld (one of them, the other 0)", fn,
           (long long)chunks, (long long)size);
    if (chunks == 0 && (size < 0 || (size == 0 && n != 0)))
      fail("%s: split size %lld must be positive for a dim of size %lld", fn,
           (long long)size, (long long)n);
    const int64_t width = chunks > 0 ? (n + chunks - 1) / chunks : size;
    const int64_t count = detail::piece_count(n, chunks, size);
    if (index < 0 || index >= count)
      fail("%s: there is no piece %lld: dim %d of size %lld makes %lld", fn,
           (long long)index, d, (long long)n, (long long)count);
    if (n == 0)
      return out;
    const int64_t start = index * width;
    out.sizes[d] = std::min(n, start + width) - start;
    out.offset = in.offset + start * in.strides[d];
    return out;
  }
  case ViewKind::Broadcast: // the shape the host computed (ops.def)
  case ViewKind::Expand: {
    Dims shape = dims_of(args);
    int r = shape.rank(), lead = r - rank;
    if (lead < 0)
      fail("%s: cannot expand shape %s to %s (fewer dims)", fn,
           in.sizes.str().c_str(), shape.str().c_str());
    out.sizes.resize(r);
    out.strides.resize(r);
    for (int i = 0; i < r; ++i) {
      int j = i - lead;
      if (j < 0) {
        if (shape[i] < 0)
          fail("%s: size -1 is not allowed in a new leading dim (shape %s "
               "to %s)",
               fn, in.sizes.str().c_str(), shape.str().c_str());
        out.sizes[i] = shape[i];
        out.strides[i] = 0;
      } else if (shape[i] == -1 || shape[i] == in.sizes[j]) {
        out.sizes[i] = in.sizes[j];
        out.strides[i] = in.strides[j];
      } else if (in.sizes[j] == 1 && shape[i] >= 0) {
        out.sizes[i] = shape[i];
        out.strides[i] = 0;
      } else {
        fail("%s: cannot expand shape %s to %s", fn, in.sizes.str().c_str(),
             shape.str().c_str());
      }
    }
    return out;
  }
  case ViewKind::Unsqueeze: {
    want_args(args, 1, fn);
    if (rank >= kMaxRank)
      fail("%s: a tensor of rank %d cannot gain a dim (maximum rank %d)", fn,
           rank, kMaxRank);
    int d = detail::wrap_dim(int(args[0]), rank + 1, fn);
    out.sizes = {};
    out.strides = {};
    for (int i = 0; i <= rank; ++i) {
      if (i == d) {
        out.sizes.push_back(1);
        out.strides.push_back(d < rank ? in.sizes[d] * in.strides[d] : 1);
      }
      if (i < rank) {
        out.sizes.push_back(in.sizes[i]);
        out.strides.push_back(in.strides[i]);
      }
    }
    return out;
  }
  case ViewKind::Squeeze: {
    want_args(args, 1, fn);
    if (rank == 0)
      return in;
    int d = detail::wrap_dim(int(args[0]), rank, fn);
    if (in.sizes[d] != 1)
      return in;
    out.sizes = {};
    out.strides = {};
    for (int i = 0; i < rank; ++i)
      if (i != d) {
        out.sizes.push_back(in.sizes[i]);
        out.strides.push_back(in.strides[i]);
      }
    return out;
  }
  }
  fail("%s: unknown layout op", fn);
}

} // namespace kiln
