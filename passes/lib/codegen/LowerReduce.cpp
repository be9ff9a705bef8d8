// What the host and every reduction flavour share: register slots, split
// launches, the scratch layout of the partials (one place: the host
// allocates what the kernels index).
#include "ReduceModel.h"

namespace kiln::codegen {

using namespace reduce;

int register_slots(const ir::Graph &g, const sched::Kernel &k) {
  // Up to 32 elements of each input per thread (4 slots of f32 or bf16).
  // The host code (kiln::gen::plan_cuda) gives 16-bit rows read 16 bytes at
  // a time all 4 slots: 32 bf16 (a 1024-wide row per warp) measured faster
  // on an H100 than 16 with 64 threads a row, and rows of 2048-8192 bf16
  // faster with 4 slots than 2 on an H200 (plan_cuda says by how much).
  // f32 rows of 513-1024 columns get a warp, 8 slots a thread
  // (rows_slots_vector).
  return std::clamp(32 / vector_width(g, k), 2, 4);
}

int rows_slots_vector(const ir::Graph &g, const sched::Kernel &k) {
  // f32 rows of 513-1024 columns, a warp per row of 8 slots a thread, as
  // Triton runs them. Rows of 1024 (the FULL twin) keep what register mode
  // keeps; shorter ones recompute it (RedModel::keep_values: softmax's
  // exp(x - max) held beside x took 99-102 registers and ran slower than
  // 4 slots), as Triton's online softmax does. On an H200, against 4
  // slots and 2 warps a row (bench/results/2026-11-30-h200-item2.md, call
  // 5): softmax over 43690x768 0.0706 -> 0.0682 ms recomputing (0.0753
  // keeping), log_softmax 0.0705 -> 0.0683; over 32768x1024 softmax
  // 0.0681 -> 0.0675 keeping (0.0682 recomputing), log_softmax 0.0691 ->
  // 0.0679, where torch.compile took 0.0674-0.0685, 0.0664-0.0739,
  // 0.0679-0.0683 and 0.0697-0.0719. Only the 16-byte rows kernel: the
  // element-by-element and column kernels keep 4.
  return vector_width(g, k) == 4 ? 8 : register_slots(g, k);
}

std::vector<int> rows_full_between(const ir::Graph &g, const sched::Kernel &k) {
  // f32 rows of 768 (BERT's and GPT-2's width) a warp each fill 6 of the
  // 8-slot instance's slots; with each slot behind a guard nvcc kept a
  // branch per slot, where Triton's kernel knows 768 at compile time
  // (layer norm over 43690x768: 28.1M instructions to Triton's 10.1M;
  // bench/results/2026-11-30-h200-item2b.md). A FULL twin of 6 slots folds
  // the guards away: 17.2M instructions, 76 -> 64 registers, 0.0704 ->
  // 0.0696 ms; softmax 0.0688 -> 0.0684, log_softmax 0.0688 -> 0.0682.
  if (rows_slots_vector(g, k) == 8)
    return {6};
  // 16-bit rows of 1536, 3072, 6144 and 12288 (hidden sizes of Qwen2-1.5B,
  // LLaMA 3.2 3B, Gemma 7B) fill 3 of the 4-slot instance's slots at 64 to
  // 512 threads a row. On an H200, 21845x3072 bf16 in the guarded 4-slot
  // kernel ran at 76-94 % of the copy floor where rows of 4096 (FULL) ran
  // at 91-95 % (bench/results/2026-12-01-h200-gemm-prologue.md, call 13).
  if (vector_width(g, k) == 8)
    return {3};
  return {};
}

int rows_exact_slots(const ir::Graph &g, const sched::Kernel &k) {
  // Rows of 5 * 2^k slots: 16-bit rows of 1280, 2560, 5120 (LLaMA-13B's
  // and Qwen-14B's hidden size) and 10240, f32 rows of 1280, 2560 and
  // 5120, are 5 slots of 32 to 256 threads, where the 4-slot instance held
  // 2.5 of 4 at twice the threads, behind a guard per slot. On an H200
  // (kernel time, ms, 2.5 -> 5 slots; bench/results/
  // 2026-12-01-h200-rows-5120.md), 13107x5120 bf16: softmax 0.0998 ->
  // 0.0713, layer norm 0.0922 -> 0.0703, layer norm -> tanh-GELU 0.1342 ->
  // 0.1066, RMS norm 0.0780 -> 0.0684 (torch.compile: 0.2032, 0.1274,
  // 0.2168, 0.0751); 6553x10240 softmax 0.1536 -> 0.0904. 13107x5120 f32:
  // layer norm 0.1755 -> 0.1336, RMS norm 0.1504 -> 0.1332 (torch.compile
  // 0.1502 and 0.1357, max-autotune 0.1369 and 0.1347).
  const int v = vector_width(g, k);
  return v == 8 || v == 4 ? 5 : 0;
}

std::vector<FixedRows> rowsany_fixed(const ir::Graph &g, const sched::Kernel &k) {
  // Rows that cannot be read 16 bytes at a time but are contiguous along R
  // (odd lengths: a ViT's 197 tokens, CLIP's 77, 577 at 384 pixels; a
  // vocabulary of 50257 is the loop kernel's), many of them: with tpr a
  // compile-time constant and unit strides each element's offset is an
  // immediate and the reductions take log2(tpr) shuffles. Kiln's rowsany
  // kernels as generated, then with unit strides, then also tpr fixed, on
  // an H200 (kernel time, ms; bench/results/2026-12-02-h200-odd-rows.md,
  // call 2):
  // 151296x197 softmax f32 0.0981 -> 0.0898 -> 0.0683, bf16 0.0751 ->
  // 0.0589 -> 0.0486; layer norm f32 0.1154 -> 0.0985 -> 0.0682; RMS norm
  // bf16 0.0928 -> 0.0603 -> 0.0486 (torch.compile: 0.0713, 0.0548, 0.0644,
  // 0.0780). The pairs are the launches plan_cuda makes for many rows of
  // 33-512 f32 and 65-1024 16-bit columns: groups of 8 threads (f32 rows
  // of 33-128, 16-bit rows of 65-128), 16 (16-bit rows of 129-256) and a
  // warp (f32 rows of 129-512, 16-bit rows of 257-1024). Each instance
  // costs nvcc time in every reduction kernel (these 4: softmax's f32 and
  // bf16 kernels 12.2-13.3 -> 14.2-14.6 s of nvcc's user time on the
  // 2-core development machine), so no others. Only slot counts the
  // kernel holds (register_slots).
  std::vector<FixedRows> pairs;
  switch (vector_width(g, k)) {
  case 4:
    pairs = {{2, 8}, {4, 8}, {2, 32}, {4, 32}};
    break;
  case 8:
    pairs = {{2, 8}, {2, 16}, {2, 32}, {4, 32}};
    break;
  }
  std::erase_if(pairs, [&](FixedRows fr) { return fr.slots > register_slots(g, k); });
  return pairs;
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
