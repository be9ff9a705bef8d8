// cat and stack (kiln/join.h); Tensor::chunk and Tensor::split are views
// (tensor.cpp).
#include "cuda_backend.h"
#include "autograd_impl.h"
#include "detail.h"

#include <kiln/join.h>

#include <string>

namespace kiln {

using detail::fail;

namespace {

// torch's legacy rule: a 1-D tensor with no elements takes no part in cat's
// shape rule.
bool skipped(const Dims &s) { return s.rank() == 1 && s[0] == 0; }

// cat's shape rule, shared by the eager op and compiled code's check: the
// result's shape and the wrapped dim, or why eager raises.
std::string cat_rule(std::span<const Dims> shapes, int64_t dim, Dims &out,
                     int &d) {
  if (shapes.empty())
    return "expected a non-empty list of tensors";
  int first = -1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].rank() == 0)
      return detail::format("a zero-dimensional tensor (at position %zu) "
                            "cannot be concatenated",
                            i);
    if (first < 0 && !skipped(shapes[i]))
      first = int(i);
  }
  if (first < 0) { // every tensor is skipped: the result is the first's
    out = shapes[0];
    d = 0;
    return "";
  }
  const Dims &ref = shapes[size_t(first)];
  const int rank = ref.rank();
  if (dim < -rank || dim >= rank)
    return detail::format("dim %lld is out of range for tensors of rank %d "
                          "(expected %d to %d)",
                          (long long)dim, rank, -rank, rank - 1);
  d = int(dim < 0 ? dim + rank : dim);
  out = ref;
  out[d] = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Dims &s = shapes[i];
    if (skipped(s))
      continue;
    if (s.rank() != rank)
      return detail::format("tensors must have the same number of dimensions: "
                            "got %d and %d (tensor number %zu in the list)",
                            rank, s.rank(), i);
    for (int k = 0; k < rank; ++k)
      if (k != d && s[k] != ref[k])
        return detail::format(
            "sizes of tensors must match except in dimension %d: expected "
            "size %lld but got size %lld for tensor number %zu in the list",
            d, (long long)ref[k], (long long)s[k], i);
    out[d] += s[d];
  }
  return "";
}

// Copies each defined tensor into its piece of r along d (the shapes:
// every tensor's, a piece written in place too).
void fill(const Tensor &r, const std::vector<Tensor> &tensors,
          std::span<const Dims> shapes, int d, const char *fn) {
  // Along d the result is rows of out[d] * inner elements; a contiguous
  // tensor of the result's dtype fills a run of n * inner in each. On CUDA
  // the copy kernel moves such runs in 16-byte vectors when the runs and
  // the rows start on 16-byte boundaries (its strided_vec path: a 268 MB
  // key/value cache appended in 126 us under ncu on an H200, 4.25 TB/s;
  // with one cudaMemcpy2DAsync per cache instead the LLaMA decode block
  // took 0.956 ms, with the kernel 0.599), every such piece in one launch
  // (cuda_copy_many). Other runs take one 2-D memcpy, which beats the
  // element-wise strided kernel (651 us for that cache, ncu).
  const Dims &out = r.sizes();
  const DType dt = r.dtype();
  int64_t inner = 1, outer = 1;
  for (int k = d + 1; k < out.rank(); ++k)
    inner *= out[k];
  for (int k = 0; k < d; ++k)
    outer *= out[k];
  const size_t es = element_size(dt);
  std::vector<detail::CopyLaunch> launches;
  int64_t at = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (skipped(shapes[i]))
      continue;
    const Tensor &t = tensors[i];
    const int64_t n = shapes[i][d];
    if (t.defined() && n != 0 && r.numel() != 0) {
      // Runs, rows, the run's start and the source all on 16 bytes.
      const int64_t b = int64_t(es);
      const bool vector_rows =
          (n * inner * b) % 16 == 0 && (out[d] * inner * b) % 16 == 0 &&
          (at * inner * b) % 16 == 0 &&
          reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
      if (r.device().is_cuda() && r.is_contiguous() && t.dtype() == dt &&
          t.is_contiguous() && !vector_rows)
        detail::cuda_copy_2d(static_cast<char *>(r.data_ptr()) + size_t(at * inner) * es,
                             size_t(out[d] * inner) * es, t.data_ptr(),
                             size_t(n * inner) * es, size_t(n * inner) * es,
                             size_t(outer), r.device().index, fn);
      else if (r.device().is_cuda()) {
        detail::CopyLaunch l;
        if (detail::copy_launch(r.slice(d, at, at + n), t, fn, l))
          launches.push_back(l);
      } else
        detail::copy_same_device(r.slice(d, at, at + n), t, fn);
    }
    at += n;
  }
  // The CUDA copies in one launch where they allow it (cuda_copy_many).
  if (!launches.empty()) {
    rt::NvtxRange range(fn);
    detail::cuda_copy_many(launches);
  }
}

} // namespace

static Tensor cat_eager(const std::vector<Tensor> &tensors, int64_t dim,
                        int *wrapped) {
  const char *fn = "kiln::cat";
  std::vector<Dims> shapes;
  shapes.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined())
      fail("%s: tensor number %zu in the list is undefined", fn, i);
    if (tensors[i].device() != tensors[0].device())
      fail("%s: expected all tensors to be on one device, but tensor number "
           "%zu is on %s and tensor number 0 on %s",
           fn, i, tensors[i].device().str().c_str(),
           tensors[0].device().str().c_str());
    shapes.push_back(tensors[i].sizes());
  }
  Dims out;
  int d = 0;
  if (std::string why = cat_rule(shapes, dim, out, d); !why.empty())
    fail("%s: %s", fn, why.c_str());
  DType dt = tensors[0].dtype();
  for (const Tensor &t : tensors)
    dt = promote_types(dt, t.dtype());
  Tensor r = detail::empty_for(fn, out, dt, tensors[0].device());
  fill(r, tensors, shapes, d, fn);
  *wrapped = d;
  return r;
}

Tensor cat(const std::vector<Tensor> &tensors, int64_t dim) {
  autograd::Recorder rec("cat", std::span<const Tensor>(tensors));
  int d = 0;
  Tensor r = cat_eager(tensors, dim, &d);
  if (rec) {
    // Each tensor's gradient is its slice of the result's (a tensor the
    // rule skipped, a legacy empty 1-D one, gets none).
    std::vector<Dims> shapes;
    for (const Tensor &t : tensors)
      shapes.push_back(t.sizes());
    const int rank = r.dim();
    rec.finish(r, {}, [shapes, d, rank](const Tensor &g, auto &,
                                        const std::vector<bool> &need) {
      std::vector<Tensor> out(shapes.size());
      int64_t at = 0;
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (shapes[i].rank() != rank)
          continue;
        const int64_t n = shapes[i][d];
        if (need[i])
          out[i] = g.slice(d, at, at + n);
        at += n;
      }
      return out;
    });
  }
  return r;
}

Tensor stack(const std::vector<Tensor> &tensors, int64_t dim) {
  const char *fn = "kiln::stack";
  if (tensors.empty())
    fail("%s: expected a non-empty list of tensors", fn);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined())
      fail("%s: tensor number %zu in the list is undefined", fn, i);
    if (!(tensors[i].sizes() == tensors[0].sizes()))
      fail("%s: stack expects each tensor to be equal size, but got %s at "
           "entry 0 and %s at entry %zu",
           fn, tensors[0].sizes().str().c_str(),
           tensors[i].sizes().str().c_str(), i);
  }
  const int rank = tensors[0].dim() + 1;
  if (rank > kMaxRank)
    fail("%s: the result would have rank %d, more than Kiln's %d", fn, rank,
         kMaxRank);
  if (dim < -rank || dim >= rank)
    fail("%s: dim %lld is out of range for the result of rank %d (expected "
         "%d to %d)",
         fn, (long long)dim, rank, -rank, rank - 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor &t : tensors)
    parts.push_back(t.unsqueeze(int(dim)));
  return cat(parts, dim);
}

// The pieces are kiln/ops.def's piece views (one rule for these methods
// and for the compiled code that indexes their result): every piece of t
// cut along d by `chunks` or `size` (the other 0).
static std::vector<Tensor> pieces_of(const Tensor &t, int d, int64_t chunks,
                                     int64_t size) {
  std::vector<Tensor> parts;
  const int64_t count = detail::piece_count(t.size(d), chunks, size);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t a[] = {d, i, chunks, size};
    parts.push_back(t.apply_view(ViewKind::Piece, a));
  }
  return parts;
}

std::vector<Tensor> Tensor::split(int64_t size, int dim) const {
  const char *fn = "kiln::Tensor::split";
  if (!defined())
    fail("%s: the tensor is undefined", fn);
  if (this->dim() == 0)
    fail("%s: a zero-dimensional tensor cannot be split", fn);
  const int d = detail::wrap_dim(dim, this->dim(), fn);
  const int64_t n = sizes_[d];
  if (size < 0 || (size == 0 && n != 0))
    fail("%s: split size %lld must be positive for a dim of size %lld", fn,
         (long long)size, (long long)n);
  return pieces_of(*this, d, 0, size);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int dim) const {
  const char *fn = "kiln::Tensor::chunk";
  if (!defined())
    fail("%s: the tensor is undefined", fn);
  if (chunks <= 0)
    fail("%s: the number of chunks must be positive, not %lld", fn,
         (long long)chunks);
  if (this->dim() == 0)
    fail("%s: a zero-dimensional tensor cannot be chunked", fn);
  const int d = detail::wrap_dim(dim, this->dim(), fn);
  return pieces_of(*this, d, chunks, 0); // an empty dim: `chunks` pieces, as torch
}

namespace gen {
Tensor cat_piece(const Tensor &r, std::span<const Dims> shapes, int64_t dim,
                 size_t j) {
  if (skipped(shapes[j])) // no part in the result: an empty tensor
    return empty(shapes[j], r.dtype(), r.device());
  Dims out;
  int d = 0;
  if (std::string why = cat_rule(shapes, dim, out, d); !why.empty())
    fail("kiln::gen::cat_piece: %s", why.c_str());
  int64_t at = 0;
  for (size_t i = 0; i < j; ++i)
    if (!skipped(shapes[i]))
      at += shapes[i][d];
  return r.slice(d, at, at + shapes[j][d]);
}

void cat_copy(const Tensor &r, const std::vector<Tensor> &tensors,
              std::span<const Dims> shapes, int64_t dim) {
  Dims out;
  int d = 0;
  if (std::string why = cat_rule(shapes, dim, out, d); !why.empty())
    fail("kiln::gen::cat_copy: %s", why.c_str());
  fill(r, tensors, shapes, d, "kiln::cat");
}

bool cat_shape(std::span<const Dims> shapes, int64_t dim, Dims &out) {
  int d = 0;
  return cat_rule(shapes, dim, out, d).empty();
}
} // namespace gen

} // namespace kiln
