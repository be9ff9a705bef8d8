// What the host and every reduction flavour share: register slots, split
// launches, the scratch layout of the partials (one place: the host
// allocates what the kernels index).
#include "ReduceModel.h"

namespace kiln::codegen {

using namespace reduce;

int register_slots(const ir::Graph &g, const sched::Kernel &k) {
  // Up to 16 elements of each input per thread (4 slots of f32, 2 of
  // bf16): 32 (8 slots of f32, a 1024-wide row per warp) measured slower
  // for softmax on an H200 (an earlier session; see also the row-kernel
  // experiments in bench/results/2026-11-21-h200.md).
  return std::clamp(16 / vector_width(g, k), 2, 4);
}

int split_launches(const ir::Graph &g, const sched::Kernel &k) {
  std::string none;
  return RedModel{g, k, 0, none, DType::f32}.last_launch() + 1;
}

std::vector<ScratchEntry> scratch_layout(const ir::Graph &g,
                                         const sched::Kernel &k) {
  std::string none;
  RedModel red{g, k, 0, none, DType::f32};
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
