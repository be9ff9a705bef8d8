// kiln/join.h - joining tensors and splitting them: cat, stack (new
// tensors) and Tensor::chunk / Tensor::split (views), with torch's
// semantics.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <span>
#include <vector>

KILN_API_BEGIN
namespace kiln {

// torch.cat: the tensors joined along `dim` (negative counts from the end)
// into a new contiguous tensor. They have one rank and the same sizes
// except along `dim`, and one device; the result has their promoted dtype
// (torch.result_type over the list). As in torch, a 1-D tensor with no
// elements takes no part in the shape rule (it is skipped). An empty list,
// mismatched sizes or devices, or a dim out of range raise kiln::Error.
// One copy kernel per non-empty tensor.
Tensor cat(const std::vector<Tensor> &tensors, int64_t dim = 0);

// torch.stack: the tensors, of one shape, joined along a new dim `dim`
// (in [-rank - 1, rank]): cat of each unsqueezed at `dim`.
Tensor stack(const std::vector<Tensor> &tensors, int64_t dim = 0);

} // namespace kiln

// For the code the plugin generates: a compiled function's concatenation
// is the eager op's (kiln::cat), after the host checked its shapes.
namespace kiln::gen {

// The shape of cat(tensors of these shapes, dim): false exactly where the
// eager op raises on the shapes (the host code checks before any launch).
bool cat_shape(std::span<const Dims> shapes, int64_t dim, Dims &out);
inline bool cat_shape(std::initializer_list<Dims> shapes, int64_t dim,
                      Dims &out) {
  return cat_shape(std::span<const Dims>(shapes.begin(), shapes.size()), dim,
                   out);
}

// Kernels writing a cat's pieces in place: piece j of the result r of a
// cat of tensors of these shapes (its slice along dim; a tensor cat skips,
// a 1-D empty one, gets an empty tensor of its own), and the copies of the
// other tensors into theirs (tensors[j] undefined: piece j is written
// already). The shapes passed the cat_shape check.
Tensor cat_piece(const Tensor &r, std::span<const Dims> shapes, int64_t dim,
                 size_t j);
inline Tensor cat_piece(const Tensor &r, std::initializer_list<Dims> shapes,
                        int64_t dim, size_t j) {
  return cat_piece(r, std::span<const Dims>(shapes.begin(), shapes.size()),
                   dim, j);
}
void cat_copy(const Tensor &r, const std::vector<Tensor> &tensors,
              std::span<const Dims> shapes, int64_t dim);
inline void cat_copy(const Tensor &r, const std::vector<Tensor> &tensors,
                     std::initializer_list<Dims> shapes, int64_t dim) {
  cat_copy(r, tensors, std::span<const Dims>(shapes.begin(), shapes.size()),
           dim);
}

} // namespace kiln::gen
KILN_API_END
