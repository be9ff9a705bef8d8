// What the host and every reduction flavour share: register slots, split
// launches, the scratch layout of the partials (one place: the host
// allocates what the kernels index).
#include "ReduceModel.h"

namespace kiln::codegen {

using namespace reduce;

int register_slots(const ir::Graph &g, const sched::Kernel &k) {
  // Up to 32 elements of each input per thread (4 slots of f32 or bf16):
  // the host code (kiln::gen::plan_cuda) gives a thread more than 16 only
  // where that makes a warp hold a row. 32 f32 per thread (8 slots, a
  // 1024-wide row per warp) measured slower for softmax on an H200 (an
  // earlier session; see also bench/results/2026-11-21-h200.md); 32 bf16
  // (a 1024-wide row per warp) measured faster on an H100 than 16 with 64
  // threads a row (plan_cuda says by how much).
  return std::clamp(32 / vector_width(g, k), 2, 4);
}

bool may_reduce_columns(const ir::Graph &g, const sched::Kernel &k) {
  if (k.dims.empty() || k.reductions.empty())
    return false;
  const ir::Shape &full = g.node(g.node(k.reductions[0]).operands[0]).type.shape;
  for (int64_t d : k.dims)
    if (d == -1 || (full.ranked && d == int64_t(full.dims.size()) - 1))
      return false;
  return true;
}

int split_launches(const ir::Graph &g, const sched::Kernel &k) {
  std::string none;
  return RedModel{g, k, 0, none, none}.last_launch() + 1;
}

std::vector<ScratchEntry> scratch_layout(const ir::Graph &g,
                                         const sched::Kernel &k) {
  std::string none;
  RedModel red{g, k, 0, none, none};
  std::vector<ScratchEntry> layout;
  for (NodeId r : k.reductions)
    layout.push_back({r, red.acc_type(r)});
  return layout;
}

Expr scratch_bytes(const std::vector<ScratchEntry> &layout, const Expr &space) {
  Expr bytes;
  for (const ScratchEntry &s : layout) {
    Expr one = binary("&",
                      call("sizeof", {var(s.acc_type)}) * space.field("rows") *
                              space.field("splits") +
                          15,
                      unary("~", cast("size_t", lit(15))));
    bytes = bytes ? bytes + one : one;
  }
  return bytes ? bytes : cast("size_t", lit(0));
}

} // namespace kiln::codegen
