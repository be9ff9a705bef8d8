// The `dims` attribute of reductions, composites and reduce_size, and its
// resolution against the operand's rank (type inference, cse, folding).
#pragma once

#include <kiln/passes/ir.h>

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <optional>
#include <string>

namespace kiln::ir {

// Ops whose nodes carry `dims` and `keepdim` (KIR: `{dims=[..], keepdim=..}`).
inline bool has_dims_attribute(Op op) {
  OpKind k = op_info(op).kind;
  return k == OpKind::Reduction || k == OpKind::Composite || k == OpKind::Shape;
}

// "[1, -1]", as KIR writes a dims list.
inline std::string dims_text(llvm::ArrayRef<int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

struct ResolvedDims {
  llvm::SmallVector<int64_t, 4> dims; // sorted, each in [0, rank)
  std::string error;                  // "" when the dims are valid
};

// The dims reduced of an operand of rank `rank`: `dims` with negative dims
// counted from the end, or all dims when `dims` is empty. A rank-0 operand
// accepts 0 and -1 as PyTorch does, and has nothing to reduce.
inline ResolvedDims resolve_dims(llvm::ArrayRef<int64_t> dims, size_t rank) {
  ResolvedDims r;
  if (dims.empty()) {
    for (size_t d = 0; d < rank; ++d)
      r.dims.push_back((int64_t)d);
    return r;
  }
  int64_t range = std::max<int64_t>((int64_t)rank, 1);
  for (int64_t d : dims) {
    if (d < -range || d >= range) {
      r.error = "dim " + std::to_string(d) + " is out of range for rank " +
                std::to_string(rank);
      return r;
    }
    int64_t resolved = d < 0 ? d + range : d;
    if (llvm::is_contained(r.dims, resolved)) {
      r.error = "dims " + dims_text(dims) + " name dim " +
                std::to_string(resolved) + " twice";
      return r;
    }
    r.dims.push_back(resolved);
  }
  if (rank == 0)
    r.dims.clear();
  llvm::sort(r.dims);
  return r;
}

// For an operand of unknown rank only a dim written twice is certain to be
// an error ([1, -1] may name two dims or one).
inline std::string repeated_dim_error(llvm::ArrayRef<int64_t> dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (dims[i] == dims[j])
        return "dims " + dims_text(dims) + " name dim " +
               std::to_string(dims[i]) + " twice";
  return "";
}

// How many elements node n (a reduction, reduce_size, or size) takes
// together from its operand, when its shape says it: the product of the
// reduced dims' static extents (exact: at most 2^53).
inline std::optional<double> reduced_count(const Graph &g, const Node &n) {
  const Shape &x = g.node(n.operands[0]).type.shape;
  if (!x.ranked)
    return std::nullopt;
  ResolvedDims r = resolve_dims(n.dims, x.dims.size());
  if (!r.error.empty())
    return std::nullopt;
  double count = 1;
  for (int64_t d : r.dims) {
    if (x.dims[d].is_symbolic())
      return std::nullopt;
    count *= double(x.dims[d].value);
    if (count > double(int64_t(1) << 53)) // constants are exact up to 2^53
      return std::nullopt;
  }
  return count;
}

} // namespace kiln::ir
