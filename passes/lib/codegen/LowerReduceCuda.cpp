// Fused reduction kernels on the GPU, lowered as (the model they share:
// ReduceModel.h; the host picks one at run time, LowerHost.cpp):
//   rows    a row (or a warp's row) per thread group, the inputs read in
//           more than one pass kept in registers: one read of memory;
//   loop    rows too long for registers: each pass re-reads the row;
//   split   few long rows: each pass is a launch over row chunks, the
//           reductions combined through per-chunk partials by a combine
//           kernel (in fixed order: results are deterministic);
//   cols    rows that are neighbours in memory (a reduction over a dim
//           that is not the innermost): neighbouring rows per block, a
//           warp's loads across them, held in registers (colsreg),
//           re-read per pass (cols) or split over blocks (colsplit).
#include "ReduceModel.h"

#include "../CentredSquares.h"
#include "../ReduceDims.h"

#include <optional>

namespace kiln::codegen {

using namespace reduce;

namespace {

// Tiles a split kernel's thread loads before it uses any in a pass that
// only reduces (where(sum) over 2^26 f32 on an H200, hand-written kernels
// in bench/experiments/row_variants.cu at commit 3ae925a44d, results in
// bench/results/2026-11-21-h200.md: one 0.2163 ms, four 0.2078, eight 0.2070).
constexpr int kTiles = 4;
// Partials a combine thread loads before it combines any.
constexpr int kCombine = 16;
// How a slot's elements are read and written: a 16-byte vector of V
// neighbours (rows that are contiguous, aligned and a multiple of V long:
// sp.vec), element by element (any other layout), or element by element
// in column mode (a thread's elements tpr apart along R, the block's
// neighbouring rows neighbours in memory: RedMode::cols).
enum class Access { Vector, Scalar, Column };

// How the loop and split kernels run a pass over a row's tiles.
struct PassStyle {
  // The paths: a 16-byte one and an element-by-element one, chosen by
  // sp.vec at run time, or only one of them (a kernel of its own).
  bool vector = true, scalar = true;
  // Tiles of a writing pass's loads in flight per thread (16-byte path).
  int write_tiles = 1;
  // Element by element: the elements of an input a thread loads before it
  // uses any in a pass that only reduces (tiles of V; at least one tile);
  // a writing pass loads one tile.
  int scalar_elems = 0;
  // The element-by-element path's access: Access::Scalar, or Column.
  Access scalar_access = Access::Scalar;
  // Cache hints (the loop kernels): kiln::gen::vec_load_keep, vec_load_last
  // and vec_store_stream, or load_keep, load_last and store_stream element
  // by element (generated.cuh says which is which).
  bool hints = false;
  // The type of an element's offset within a row.
  const char *index = "int64_t";
};

struct RedCuda : RedModel {
  // ---- CUDA ----

  std::string header(const std::string &what) const {
    return "@" + g.name + ", kernel " + std::to_string(ki) + " (reduction, " +
           std::to_string(k.nodes.size()) + " ops, " +
           std::to_string(k.passes) + " pass" + (k.passes == 1 ? "" : "es") +
           "), " + variant + " variant: " + what;
  }

  std::vector<Param> params(bool partials) const {
    std::vector<Param> ps = {
        {"const kiln::RowSpace", "sp"},
        {"const kiln::RowStrides<" + std::to_string(nout + nin) + ">", "st"}};
    for (Param &p : kernel_params(g, k, "__restrict__"))
      ps.push_back(std::move(p));
    if (partials)
      ps.push_back({"char *__restrict__", "partials", true});
    return ps;
  }

  // `constexpr int V`, the block reductions' shared memory: a value per
  // warp (up to 16 x 32 B), or in column mode a value per warp and row (up
  // to 256 x 32 B: kiln::gen::plan_cuda keeps blockDim.x / 32 * sp.cols
  // within 256).
  void kernel_prelude(Stmts &b, bool columns = false) const {
    b.push_back(decl("constexpr", "int", "V", lit(vector_width(g, k))));
    Stmt s = decl_array("double", "kiln_smem", columns ? "1024" : "96",
                        columns ? "column reductions: a value per warp and row, up to 256 x 32 B"
                                : "block reductions: a value per warp, up to 16 x 32 B");
    s.qual = "__shared__";
    b.push_back(std::move(s));
  }

  // Where a thread's slot of a tile starts (slot_start, from the tile's
  // first element) and where its element j is (elem, from the slot's start
  // e). A vector slot is V neighbours, e .. e+V-1: e = lane * V. Element by
  // element, a warp's 32 x V elements of a tile are V runs of 32
  // neighbours, lane l's slot being its column: e = the warp's first
  // element + l % 32, element j at e + 32 j (tpr is a multiple of 32).
  // So each load or store of a warp reads 32 neighbours; with V neighbours
  // per thread (as a vector), one warp access touched 32 elements 16 bytes
  // apart, up to 16 sectors for 64 or 128 bytes. A run of tpr (lane-major
  // over the tile) measured as good for 16-bit types but computed the
  // index with a run-time multiply: f32 slower than before. See
  // bench/results/2026-11-28-h100-loop.md (rows of 50257 columns: no
  // 16-byte alignment, so this loop).
  // In column mode a thread's slot is V elements tpr apart, from its lane
  // (its place among the row's threads).
  Expr slot_start(Access a, const char *index = "int64_t") const {
    const bool wide = std::string(index) == "int64_t";
    if (a == Access::Vector)
      return wide ? cast("int64_t", lane) * V : lane * V;
    if (a == Access::Column)
      return wide ? cast("int64_t", lane) : lane;
    Expr warp = lane / lit(32);
    return (wide ? cast("int64_t", warp) : warp) * (lit(32) * V) + lane % lit(32);
  }
  Expr elem(Access a, Expr jj) const {
    return a == Access::Vector ? e + jj
           : a == Access::Column ? e + jj * tpr
                                 : e + jj * lit(32);
  }

  // A slot's access as `a` says: the 16-byte `vector` statement, or
  // `scalar` for each element j below `limit`.
  void access(Stmts &b, Access a, Stmt vector, Stmt scalar, Expr limit) const {
    if (a == Access::Vector) {
      b.push_back(std::move(vector));
      return;
    }
    b.push_back(for_loop(decl("", "int", "j", lit(0)), j < V, pre_inc(j),
                         {if_then(elem(a, j) < limit, {std::move(scalar)})},
                         LoopHint::Unroll));
  }

  // The load of input i in pass `pass` from `at`, 16 bytes (vec) or one
  // element: with cache hints, one that a later pass reads again asks L2
  // to keep it, and the last pass reading what an earlier one read lets it
  // go first; an input read in one pass only (a weight, a bias: shared by
  // every row) loads plainly.
  // `at` is the address; `plain`, the load without hints.
  Expr hinted_load(size_t i, int pass, bool hints, Expr at, Expr plain,
                   bool vec) const {
    bool earlier = false, later = false;
    for (int q = 0; hints && q < k.passes; ++q) {
      earlier |= q < pass && needed(k.inputs[i], q);
      later |= q > pass && needed(k.inputs[i], q);
    }
    if (later)
      return call(vec ? "kiln::gen::vec_load_keep<V>" : "kiln::gen::load_keep",
                  {at, v("keep")});
    if (earlier)
      return call(vec ? "kiln::gen::vec_load_last<V>" : "kiln::gen::load_last", {at});
    return plain;
  }

  // Loads of input i for the slot starting at element e into `dst`.
  void load_slot(Stmts &b, Expr dst, size_t i, int pass, Expr limit, Access a,
                 bool hints) const {
    const size_t J = in_op(i);
    Expr p = numbered("in", i);
    const Expr vat = p + base(J) + e, off = base(J) + elem(a, j) * rstride(J);
    access(b, a,
           assign(dst, hinted_load(i, pass, hints, vat,
                                   call("kiln::gen::vec_load<V>", {vat}), true)),
           assign(dst.field("v")[j], hinted_load(i, pass, hints, p + off, p[off], false)),
           limit);
  }

  // Loads slot e of each input pass `pass` reads into x<i><sub>.
  void load_inputs(Stmts &b, int pass, Expr limit,
                   const std::function<Expr(Expr)> &sub, Access a,
                   bool hints) const {
    for (auto [i, in] : llvm::enumerate(k.inputs))
      if (needed(in, pass))
        load_slot(b, sub(numbered("x", i)), i, pass, limit, a, hints);
  }

  // The body of one slot of pass `pass`, its elements below `limit`:
  // loads the inputs into x<i> first, or, with `sub`, reads them from
  // x<i><sub> where load_inputs put them.
  // With Access::Vector the whole slot is below `limit` (sp.vec: R is a
  // multiple of V), so the elements go unchecked.
  // `prefix` names the accumulators; `also` is appended to each element's
  // statements.
  void cuda_slot(Stmts &b, int pass, Expr limit,
                 const std::function<Expr(Expr)> &sub, bool loaded,
                 Access a, bool hints, const std::string &prefix = "acc",
                 Stmts also = {},
                 MomentStage stage = MomentStage::Whole) const {
    if (!loaded) {
      for (auto [i, in] : llvm::enumerate(k.inputs))
        if (needed(in, pass))
          b.push_back(decl("", vec_type(in), "x" + std::to_string(i)));
      load_inputs(b, pass, limit, sub, a, hints);
    }
    for (size_t o = 0; o < nout; ++o)
      if (stage != MomentStage::Devs && out_full(o) && out_phase(o) == pass)
        b.push_back(decl("", vec_type(k.outputs[o]), "y" + std::to_string(o)));
    // Predicated, not `break`: the loop must unroll fully so that the
    // slot arrays stay in registers.
    Stmts each;
    Expr r = v("r");
    each.push_back(decl("const", "int64_t", "r", elem(a, j)));
    Stmts body;
    element(body, pass,
            [&](size_t i) { return sub(numbered("x", i)).field("v")[j]; },
            [&](size_t o) { return numbered("y", o).field("v")[j]; }, r, prefix,
            false, stage);
    for (Stmt &s : also)
      body.push_back(std::move(s));
    if (a == Access::Vector)
      for (Stmt &s : body)
        each.push_back(std::move(s));
    else
      each.push_back(if_then(r < limit, std::move(body)));
    b.push_back(for_loop(decl("", "int", "j", lit(0)), j < V, pre_inc(j),
                         std::move(each), LoopHint::Unroll));
    for (size_t o = 0; o < nout; ++o) {
      if (stage == MomentStage::Devs || !out_full(o) || out_phase(o) != pass)
        continue;
      Expr p = numbered("out", o), y = numbered("y", o);
      const Expr at = base(o) + elem(a, j) * rstride(o);
      access(b, a,
             eval(call(hints ? "kiln::gen::vec_store_stream" : "kiln::gen::vec_store",
                       {p + base(o) + e, y})),
             hints ? eval(call("kiln::gen::store_stream", {p + at, y.field("v")[j]}))
                   : assign(p[at], y.field("v")[j]),
             limit);
    }
  }

  // Column mode's thread mapping: `cols` rows per block (sp.cols), `tpr`
  // threads each, thread t of row t % cols at `lane` t / cols among them.
  void column_mapping(Stmts &b) const {
    const Expr cols = v("cols");
    b.push_back(decl("const", "int", "cols", sp.field("cols"),
                     "rows per block, a power of two up to 32"));
    b.push_back(decl("const", "int", "tpr", cast("int", v("blockDim.x")) / cols));
    b.push_back(decl("const", "int", "lane", cast("int", v("threadIdx.x")) / cols));
  }

  // The reductions of `pass` over a row's threads; with `cols`, column
  // mode's rows of cols neighbours (kiln::gen::col_reduce).
  void row_reduce(Stmts &b, int pass, Expr cols = Expr()) const {
    for (NodeId r : reductions_in(pass))
      b.push_back(low::row_reduce(op_name(r), acc_type(r), acc(r), tpr, smem, cols));
  }

  // Register mode: every input of a row is read once, 16 bytes at a time,
  // into registers; each full value is computed once, in the pass of its
  // phase, and kept in registers for the later passes that use it. 16
  // bytes at a time needs rows that are contiguous, aligned and a multiple
  // of V long (sp.vec); any other row that fits runs its `rowsany` twin
  // (below), and rows too long for registers run in loop mode. One template over SLOTS
  // (16-byte slots per thread and input) and one kernel per SLOTS: the host
  // code picks the smallest that holds the row. Each has a FULL twin for
  // rows that fill all SLOTS slots of every thread (R = SLOTS * tpr * V,
  // the common case: power-of-two rows), where the per-slot guards fold
  // away and the kernel is straight-line code: with the guards nvcc kept
  // each slot's loads and math behind a branch, and masked softmax (bf16,
  // [T, T] mask, 8x16x1024x1024) ran at 85 % of the copy floor on an H100;
  // without them at 98 %, as torch.compile's kernel (its Triton kernel
  // knows R at compile time). Plain softmax: 91 -> 99 %.
  //
  // `rowsany` is the same kernel reading and writing element by element,
  // for rows that are not 16-byte aligned, not a multiple of V long (197
  // columns: a ViT's attention scores; 1001; 4095) or not contiguous (a
  // reduction over dim 0): slot k of a thread is V elements tpr apart,
  // from k * tpr * V + lane, so that each load of a group reads
  // neighbours. Such rows went to the loop kernel, a block of 512 threads
  // per row reading it once per pass: softmax over 151296x197 f32 0.91 ->
  // 0.10 ms, over 16384x1001 0.124 -> 0.049 on an H200
  // (bench/results/2026-11-28-h200-rowsany.md). No FULL twin: its rows
  // rarely fill every slot.
  //
  // `colsreg` (Access::Column) holds column mode's rows (RedMode::colsreg:
  // neighbouring rows in a block, sp.cols of them, thread t of row t %
  // cols) in registers in the same slots, when they fit: short rows far
  // apart in memory (a softmax over the channels of [B, C, HW]) are read
  // once instead of once per pass.
  //
  // `instances`: the slot counts (none: 1 up to register_slots, each with
  // both twins); with keep_values false, a template of its own (<name>_nk)
  // whose instances are named as the others.
  Function cuda_rows_registers(Access a,
                               std::vector<Function::Instance> instances = {}) const {
    const bool vec = a == Access::Vector, columns = a == Access::Column;
    Function f;
    f.flavour = vec ? "rows" : columns ? "colsreg" : "rowsany";
    f.name = name(f.flavour);
    if (!keep_values) {
      f.global_name = f.name;
      f.name += "_nk";
    }
    f.header = header(vec ? "a row per thread group, held in registers"
                      : columns ? "neighbouring rows per block, held in "
                                  "registers, a warp's loads across rows"
                                : "a row per thread group, held in registers, "
                                  "read element by element");
    f.params = params(false);
    f.tparam = "SLOTS";
    if (vec)
      f.tflag = "FULL";
    // Row groups of up to 512 threads (up to 128 registers a thread), with
    // 1, 2 or 4 slots each: a 2048-slot row (8192 f32) is 512 threads of 4
    // slots, as Triton's 16 warps of 16 elements, instead of the loop
    // kernel re-reading it (the 4-slot instance was bounded to 256 threads,
    // with the same 128-register cap).
    f.instances = std::move(instances);
    if (f.instances.empty())
      for (int slots = 1; slots <= register_slots(g, k); slots *= 2)
        f.instances.push_back({slots, "512"});
    // rowsany's instances of a compile-time thread count (TPR > 0), for
    // rows contiguous along R (rowsany_fixed): the host launches one only
    // where sp.tpr is TPR and every operand read or written per element
    // has stride 1 along R.
    const bool fixed = a == Access::Scalar;
    if (fixed) {
      f.tparam2 = "TPR";
      for (FixedRows fr : rowsany_fixed(g, k))
        f.instances.push_back({fr.slots, "512", true, true, fr.tpr});
    }
    Stmts &b = f.body;
    kernel_prelude(b, columns);
    const Expr cols = v("cols");
    b.push_back(decl("const", "int", "R", cast("int", sp.field("R")),
                     vec ? "a multiple of V" : "at most 2048 V"));
    if (columns) {
      column_mapping(b);
    } else {
      // tpr is a power of two (kiln::gen::plan_cuda): a mask and shifts,
      // where `% tpr` and `/ tpr` were three integer divisions before the
      // first load (a few rows are latency-bound: a decode's RMS norm).
      b.push_back(decl("const", "int", "tpr",
                       fixed ? select(v("TPR") > lit(0), v("TPR"), sp.field("tpr"))
                             : sp.field("tpr")));
      b.push_back(decl("const", "int", "tsh", call("__ffs", {tpr}) - lit(1),
                       "log2(tpr)"));
      b.push_back(decl("const", "int", "lane",
                       binary("&", v("threadIdx.x"), tpr - lit(1))));
      b.push_back(decl("const", "int64_t", "groups",
                       binary(">>", v("blockDim.x"), v("tsh"))));
    }
    if (!vec)
      for (size_t op = 0; op < nout + nin; ++op) {
        // Unit strides where TPR is fixed, for the operands read or
        // written per element (a reduced output's is not used).
        if (fixed && (op >= nout || out_full(op)))
          b.push_back(decl("const", "int64_t", print(rstride(op)),
                           select(v("TPR") > lit(0), lit(1),
                                  st.field("s")[int64_t(op)][1])));
        else
          b.push_back(rstride_decl(op));
      }
    const Expr groups = v("groups"), kk = v("k"), slots = v("SLOTS"),
               q = v("q"), live = v("live"), rpg = sp.field("rpg"),
               stride = v("stride");
    // Many short rows: a group holds sp.rpg rows at once (up to RPG; the
    // one-slot instance only, whose registers allow it), their loads all
    // issued before any row's arithmetic, so that a thread has several
    // rows' loads in flight instead of one (load, reduce, store, next row).
    b.push_back(decl("constexpr", "int", "RPG",
                     columns ? lit(1)
                             : select(slots == lit(1), v("kiln::kRowsPerGroup"), lit(1)),
                     "rows a group holds at once (sp.rpg of them)"));
    auto slot_loop = [&](Stmts body, Expr guard = Expr()) {
      Stmts inner;
      inner.push_back(decl("const", "int", "e",
                           vec ? (lane + kk * tpr) * V : kk * tpr * V + lane));
      Expr in_row = kk < sp.field("vpt") && e < R;
      if (vec)
        in_row = v("FULL") || in_row;
      inner.push_back(
          if_then(guard ? guard && in_row : in_row, std::move(body)));
      return for_loop(decl("", "int", "k", lit(0)), kk < slots, pre_inc(kk),
                      std::move(inner), LoopHint::Unroll);
    };
    // Element j of a slot (element by element): its place in the row, and
    // a statement for each element of the slot in the row.
    const Expr r = v("r");
    auto each_in_row = [&](Stmts body) {
      Stmts each;
      each.push_back(decl("const", "int", "r", e + j * tpr));
      each.push_back(if_then(r < R, std::move(body)));
      return for_loop(decl("", "int", "j", lit(0)), j < V, pre_inc(j),
                      std::move(each), LoopHint::Unroll);
    };
    auto at = [&](size_t op, Expr pos) {
      return base(op) + cast("int64_t", pos) * rstride(op);
    };
    // The slot of input x at e into `dst`.
    auto load = [&](Expr dst, size_t x) {
      Expr p = numbered("in", x);
      if (vec)
        return assign(dst, call("kiln::gen::vec_load<V>", {p + base(in_op(x)) + e}));
      return each_in_row({assign(dst.field("v")[j], p[at(in_op(x), r)])});
    };
    // Each row reads its inputs afresh, also one that is the same for every
    // row (then from the cache). Keeping such an input for the next row, as
    // before, kept every input's registers live across rows for a run-time
    // check that is false for x; without it the kernels measure the same
    // or a little faster (H200, kiln_bench, median of 3 alternating runs,
    // before -> after: softmax 0.0749 -> 0.0748 ms, RMS norm 0.0727 ->
    // 0.0724, layer norm 0.1384 -> 0.1384).
    for (auto [i, in] : llvm::enumerate(k.inputs))
      if (cached_input(i))
        b.push_back(decl_array(vec ? held_type(in) : vec_type(in),
                               "c" + std::to_string(i),
                               "RPG][SLOTS",
                               g.node(in).name.empty() ? "input"
                                                       : g.node(in).name));
    // The load phase asks for the bases of the inputs kept in registers;
    // the passes, for the outputs' and the other inputs' (read per pass).
    auto row_of = [&](Stmts &rb, bool passes) {
      rb.push_back(decl("const", "int64_t", "row",
                        columns ? v("row0") + cast("int", v("threadIdx.x")) % cols
                                : v("row0") + q * stride));
      std::vector<size_t> ops;
      for (size_t op = 0; op < nout + nin; ++op)
        if (passes != (op >= nout && cached_input(op - nout)))
          ops.push_back(op);
      bases_decl(rb, ops);
    };
    // The loads of the rows' inputs kept in registers.
    Stmts loadb;
    row_of(loadb, false);
    for (size_t x = 0; x < nin; ++x) {
      if (!cached_input(x))
        continue;
      loadb.push_back(slot_loop({load(numbered("c", x)[q][kk], x)}));
    }
    // Then each row's passes. A group whose row is past the end (`live`
    // false) still takes part in its warp's shuffles: the loop and the
    // reductions stay uniform over a warp when groups are smaller.
    Stmts rowb;
    row_of(rowb, true);
    rowb.push_back(decl("const", "bool", "live", row < sp.field("rows")));
    prologue(rowb);
    for (NodeId id : k.nodes)
      if (kept(id))
        rowb.push_back(decl_array(value_type(g.node(id)),
                                  "t" + std::to_string(id), "SLOTS * V",
                                  describe_node(g, g.node(id)) +
                                      ", kept for a later pass"));
    for (int p = 0; p < k.passes; ++p) {
      rowb.push_back(comment("pass " + std::to_string(p)));
      declare_accumulators(rowb, p);
      Stmts slot;
      for (size_t out = 0; out < nout; ++out)
        if (out_full(out) && out_phase(out) == p)
          slot.push_back(
              decl("", vec_type(k.outputs[out]), "y" + std::to_string(out)));
      // Inputs of this pass that are not kept for the row: read now.
      std::set<NodeId> computed = pass_nodes(p);
      for (auto [x, in] : llvm::enumerate(k.inputs)) {
        if (cached_input(x))
          continue;
        bool used = false;
        for (NodeId c : computed)
          used |= llvm::is_contained(g.node(c).operands, in);
        for (NodeId r : reductions_in(p))
          used |= g.node(r).operands[0] == in;
        if (!used)
          continue;
        if (vec) {
          slot.push_back(decl("const", vec_type(in), "x" + std::to_string(x),
                              call("kiln::gen::vec_load<V>",
                                   {numbered("in", x) + base(in_op(x)) + e})));
          continue;
        }
        slot.push_back(decl("", vec_type(in), "x" + std::to_string(x)));
        slot.push_back(load(numbered("x", x), x));
      }
      Stmts each;
      element(
          each, p,
          [&](size_t x) {
            return cached_input(x) ? numbered("c", x)[q][kk].field("v")[j]
                                   : numbered("x", x).field("v")[j];
          },
          [&](size_t out) { return numbered("y", out).field("v")[j]; },
          vec ? e + j : r, "acc", true);
      if (vec)
        slot.push_back(for_loop(decl("", "int", "j", lit(0)), j < V, pre_inc(j),
                                std::move(each), LoopHint::Unroll));
      else
        slot.push_back(each_in_row(std::move(each)));
      for (size_t out = 0; out < nout; ++out) {
        if (!out_full(out) || out_phase(out) != p)
          continue;
        if (vec)
          slot.push_back(eval(call("kiln::gen::vec_store",
                                   {numbered("out", out) + base(out) + e,
                                    numbered("y", out)})));
        else
          slot.push_back(each_in_row({assign(numbered("out", out)[at(out, r)],
                                             numbered("y", out).field("v")[j])}));
      }
      rowb.push_back(slot_loop(std::move(slot), live));
      row_reduce(rowb, p, columns ? cols : Expr());
      epilogue(rowb, p, reduced_store(lane == lit(0) && live));
    }
    if (columns) {
      // A row past the end (`live` false) loads nothing and joins the
      // block's reductions; every thread steps through the same blocks.
      Stmts one;
      one.push_back(decl("const", "int", "q", lit(0)));
      for (Stmt &st : loadb)
        one.push_back(std::move(st));
      Stmts guarded;
      guarded.push_back(if_then(v("row0") + cast("int", v("threadIdx.x")) % cols <
                                    sp.field("rows"),
                                std::move(one)));
      guarded.push_back(decl("const", "int", "q", lit(0)));
      for (Stmt &st : rowb)
        guarded.push_back(std::move(st));
      b.push_back(for_loop(
          decl("", "int64_t", "row0", cast("int64_t", v("blockIdx.x")) * cols),
          v("row0") < sp.field("rows"),
          binary("+=", v("row0"), cast("int64_t", v("gridDim.x")) * cols),
          std::move(guarded)));
      return f;
    }
    // One row a group (sp.rpg 1: every launch but many short rows'): the
    // row's code once, without the RPG unroll's guards and its second
    // index computation, which a few rows wait on (a decode's RMS norm,
    // 16 rows of 4096 bf16 on an H200: 3.49 -> 2.85 us).
    Stmts one;
    one.push_back(decl("const", "int", "q", lit(0)));
    one.push_back(if_then(v("row0") < sp.field("rows"), loadb));
    one.push_back(block(rowb));
    Stmts many;
    many.push_back(for_loop(decl("", "int", "q", lit(0)), q < v("RPG"),
                            pre_inc(q),
                            {if_then(q < rpg && v("row0") + q * stride <
                                                    sp.field("rows"),
                                     std::move(loadb))},
                            LoopHint::Unroll));
    many.push_back(for_loop(decl("", "int", "q", lit(0)), q < v("RPG"),
                            pre_inc(q), {if_then(q < rpg, std::move(rowb))},
                            LoopHint::Unroll));
    Stmts iter;
    iter.push_back(if_then(v("RPG") == lit(1) || rpg == lit(1), std::move(one),
                           std::move(many)));
    // row0 - (the group's place in its warp) is the warp's first row: the
    // same in every lane of a warp.
    b.push_back(decl("const", "int64_t", "stride",
                     cast("int64_t", v("gridDim.x")) * groups));
    const Expr tsh = v("tsh");
    b.push_back(decl("const", "int64_t", "sub",
                     cast("int64_t", binary(">>", binary("&", v("threadIdx.x"), lit(31)), tsh))));
    b.push_back(for_loop(
        decl("", "int64_t", "row0",
             cast("int64_t", v("blockIdx.x")) * groups + binary(">>", v("threadIdx.x"), tsh)),
        v("row0") - v("sub") < sp.field("rows"),
        binary("+=", v("row0"), stride * rpg), std::move(iter)));
    return f;
  }

  // A row's variance as layer norm and var decompose it: pass p sums x
  // (`sum`), pass p + 1 sums (x - mean)^2 (`squares`), mean = sum /
  // reduce_size, each in f32 or f64 and nothing else in either pass.
  struct Moments {
    NodeId sum, squares, mean, dev; // dev: x - mean
  };
  std::optional<Moments> moments_at(int p) const {
    if (p + 1 >= k.passes || writes_full(p) || writes_full(p + 1))
      return std::nullopt;
    const std::vector<NodeId> r1 = reductions_in(p), r2 = reductions_in(p + 1);
    if (r1.size() != 1 || r2.size() != 1)
      return std::nullopt;
    const ir::Node &s = g.node(r2[0]);
    const std::optional<ir::CentredSquares> c =
        ir::centred_squares(g, s, s.operands[0]);
    if (!c || c->sum != r1[0] ||
        (s.type.dtype != DType::f32 && s.type.dtype != DType::f64) ||
        !full(s.operands[0]) || !full(c->dev) || k.role[c->mean] != Role::Reduced)
      return std::nullopt;
    // The mean divides by reduce_size, or by the constant it folded to.
    if (g.node(c->count).op != Op::ReduceSize && !ir::folded_count(g, *c))
      return std::nullopt;
    for (NodeId in : k.inputs)
      if (needed(in, p + 1) && !needed(in, p))
        return std::nullopt;
    return Moments{r1[0], r2[0], c->mean, c->dev};
  }
  // Whether tiled_pass takes `pass`'s sum_sq_dev reductions a batch of
  // slots at a time: the pass has one and writes nothing full.
  bool batch_moments(int pass) const {
    if (writes_full(pass))
      return false;
    for (NodeId r : reductions_in(pass))
      if (moments(r))
        return true;
    return false;
  }
  // The accumulator of a Moments pair's fused pass.
  Expr moments_acc(const Moments &mo) const { return numbered("mom", mo.squares); }
  std::string moments_type(const Moments &mo) const {
    return "kiln::scalar::MomentAcc<" + elem_type(mo.squares) + ">";
  }

  // Layer norm's shape for the rows kernel that re-reads the row: passes
  // 0 and 1 a Moments pair, pass 2 the last, writing full outputs, no
  // value kept from one pass for another; f32 rows (16-byte slots of 4).
  std::optional<Moments> reread_moments() const {
    if (k.passes != 3 || !writes_full(2) || vector_width(g, k) != 4)
      return std::nullopt;
    for (NodeId id : k.nodes)
      if (kept(id))
        return std::nullopt;
    return moments_at(0);
  }

  // f32 rows of layer norm's shape and kRereadThreads * 8 columns (4096),
  // a block a row, read as Triton's kernel reads them: x into registers
  // (two 16-byte slots a thread; L2 asked to keep it), each thread's
  // moments about its own mean in registers, one merge of the threads'
  // (mean, m2) (kiln::gen::row_moments_equal: every thread holds as many
  // elements, so no division), then the writing pass reads x again from
  // L2 (evicted first) and streams its stores. The registers kernel holds
  // x (4 slots of 256 threads) through two block reductions and the
  // writing pass. On an H200, 16384x4096 f32 (kernel time;
  // bench/results/2026-12-01-h200-ln-rows.md, calls 11-12): the registers
  // kernel 0.1311-0.1312 ms, this form 0.1293 (Triton's form written by
  // hand 0.1283, torch.compile 0.1302); 8192x4096 level (0.0670). The
  // thread count is a compile-time constant: with it a run-time value the
  // same kernel took 0.1336-0.1348, and with 256 threads of 4 slots 0.1311.
  Function cuda_rows_reread(const Moments &mo) const {
    Function f;
    f.flavour = "rowsre";
    f.name = name(f.flavour);
    f.header = header("a row of TPR * 8 per block, moments merged once, the "
                      "row read again by the writing pass");
    f.params = params(false);
    f.tparam = "TPR";
    f.instances = {{kRereadThreads, std::to_string(kRereadThreads)}};
    Stmts &b = f.body;
    kernel_prelude(b);
    b.push_back(decl("constexpr", "int", "SLOTS", lit(kRereadSlots)));
    b.push_back(decl("constexpr", "int", "tpr", v("TPR"),
                     "the row's threads: the block"));
    b.push_back(decl("constexpr", "int", "R", v("SLOTS") * V * v("tpr")));
    b.push_back(decl("const", "int", "lane", cast("int", v("threadIdx.x"))));
    b.push_back(decl("const", "int64_t", "row", cast("int64_t", v("blockIdx.x"))));
    b.push_back(decl("const", "uint64_t", "keep",
                     call("kiln::gen::l2_evict_last", {}),
                     "the row stays in L2 for the writing pass"));
    const Expr kk = v("k"), slots = v("SLOTS");
    auto slot_loop = [&](Stmts body) {
      Stmts inner;
      inner.push_back(decl("const", "int", "e", (lane + kk * tpr) * V));
      for (Stmt &st : body)
        inner.push_back(std::move(st));
      return for_loop(decl("", "int", "k", lit(0)), kk < slots, pre_inc(kk),
                      std::move(inner), LoopHint::Unroll);
    };
    auto element_loop = [&](Stmts each) {
      return for_loop(decl("", "int", "j", lit(0)), j < V, pre_inc(j),
                      std::move(each), LoopHint::Unroll);
    };
    // The inputs the moments read, into registers.
    std::vector<size_t> held_ops;
    for (size_t x = 0; x < nin; ++x)
      if (cached_input(x))
        held_ops.push_back(in_op(x));
    Stmts loads;
    bases_decl(loads, held_ops);
    for (auto [x, in] : llvm::enumerate(k.inputs)) {
      if (!cached_input(x))
        continue;
      b.push_back(decl_array(held_type(in), "c" + std::to_string(x), "SLOTS",
                             g.node(in).name.empty() ? "input" : g.node(in).name));
      loads.push_back(slot_loop({assign(numbered("c", x)[kk],
                                        call("kiln::gen::vec_load_keep<V>",
                                             {numbered("in", x) + base(in_op(x)) + e,
                                              v("keep")}))}));
    }
    b.push_back(block(std::move(loads)));
    prologue(b);
    const auto held = [&](size_t x) { return numbered("c", x)[kk].field("v")[j]; };
    const auto nowhere = [&](size_t) -> Expr { return Expr(); };
    const std::string t = value_type(g.node(mo.mean));
    const Expr mean = v("mean"), m2 = v("m2");
    b.push_back(comment("passes 0 and 1: the threads' moments, merged once"));
    b.push_back(decl("", t, "mean"));
    b.push_back(decl("", t, "m2"));
    {
      // The thread's elements' sum, an estimate c of their mean, their
      // deviations d from it: mean = c + sum(d) / n, m2 = sum(d^2) -
      // sum(d)^2 / n (the corrected two-pass algorithm, in registers).
      Stmts thread;
      declare_accumulators(thread, 0, "cs");
      Stmts each;
      element(each, 0, held, nowhere, e + j, "cs", true);
      thread.push_back(slot_loop({element_loop(std::move(each))}));
      thread.push_back(decl("const", t, "inv",
                            cast(t, lit(1)) / cast(t, slots * V),
                            "1 / the thread's elements"));
      thread.push_back(decl("const", t, print(value_var(mo.mean)),
                            acc(mo.sum, "cs") * v("inv"),
                            "about the mean of the thread's elements"));
      declare_accumulators(thread, 1, "cq");
      thread.push_back(decl("", t, "cr", cast(t, lit(0)), "the deviations' sum"));
      Stmts devs;
      element(devs, 1, held, nowhere, e + j, "cq", true);
      devs.push_back(assign(v("cr"), value_var(mo.dev), "+="));
      thread.push_back(slot_loop({element_loop(std::move(devs))}));
      const Expr tm = v("tm");
      thread.push_back(decl("const", moments_type(mo), print(tm),
                            moments_of_batch(moments_type(mo), t, value_var(mo.mean),
                                             v("cr"), acc(mo.squares, "cq"), v("inv"),
                                             slots * V)));
      thread.push_back(assign(mean, tm.field("shift") + tm.field("mean")));
      thread.push_back(assign(m2, tm.field("m2")));
      b.push_back(block(std::move(thread)));
    }
    b.push_back(eval(call("kiln::gen::row_moments_equal",
                          {mean, m2, cast(t, slots * V), tpr,
                           call("reinterpret_cast<" + t + " *>", {smem})})));
    declare_accumulators(b, 0);
    declare_accumulators(b, 1);
    b.push_back(assign(acc(mo.sum), mean * cast(t, R)));
    b.push_back(assign(acc(mo.squares), m2));
    // Every operand's base (the reduced outputs', the writing pass's).
    std::vector<size_t> all;
    for (size_t op = 0; op < nout + nin; ++op)
      all.push_back(op);
    bases_decl(b, all);
    epilogue(b, 0, reduced_store(lane == lit(0)));
    epilogue(b, 1, reduced_store(lane == lit(0)));
    b.push_back(comment("pass 2, reading the row again"));
    Stmts writing;
    Stmts slot;
    for (size_t out = 0; out < nout; ++out)
      if (out_full(out) && out_phase(out) == 2)
        slot.push_back(decl("", vec_type(k.outputs[out]), "y" + std::to_string(out)));
    for (auto [x, in] : llvm::enumerate(k.inputs))
      if (needed(in, 2))
        slot.push_back(decl("const", vec_type(in), "x" + std::to_string(x),
                            call(cached_input(x) ? "kiln::gen::vec_load_last<V>"
                                                 : "kiln::gen::vec_load<V>",
                                 {numbered("in", x) + base(in_op(x)) + e})));
    Stmts each;
    element(
        each, 2, [&](size_t x) { return numbered("x", x).field("v")[j]; },
        [&](size_t out) { return numbered("y", out).field("v")[j]; }, e + j,
        "acc", true);
    slot.push_back(element_loop(std::move(each)));
    for (size_t out = 0; out < nout; ++out)
      if (out_full(out) && out_phase(out) == 2)
        slot.push_back(eval(call("kiln::gen::vec_store_stream",
                                 {numbered("out", out) + base(out) + e,
                                  numbered("y", out)})));
    writing.push_back(slot_loop(std::move(slot)));
    b.push_back(block(std::move(writing)));
    return f;
  }

  // Pass `pass` over tiles t0 .. t1-1 of the row (a tile: tpr slots, a
  // slot per thread; the caller declares tile, tiles, t0 and t1). Passes
  // alternate direction, so that a pass starts on the end of the row the
  // previous pass read last, which the caches still hold (where(sum),
  // hand-written: 0.2124 ms forward, 0.2078 mirrored). The loop twice,
  // 16-byte slots and element by element, so that neither carries the
  // other's registers, each where `style` asks for it. On the 16-byte path
  // a pass that only reduces loads kTiles tiles before it uses any; one
  // that writes style.write_tiles (in the split kernel one: its stores
  // keep memory busy; four tiles there measured slower: 0.2089 vs 0.2062).
  // Element by element, style.scalar_elems says.
  void tiled_pass(Stmts &b, int pass, const PassStyle &style, int read,
                  const std::optional<Moments> &mo = std::nullopt) const {
    const Expr tile = v("tile"), tiles = v("tiles"), t0 = v("t0"),
               t1 = v("t1"), t = v("t"), u = v("u");
    const Expr tile_at = read % 2 ? tiles - 1 - (t + u) : t + u;
    Stmts paths[2];
    for (Access a : {Access::Vector, style.scalar_access}) {
      const bool vec = a == Access::Vector;
      if (vec ? !style.vector : !style.scalar)
        continue;
      const int n = vec ? (writes_full(pass) ? style.write_tiles : kTiles)
                    : writes_full(pass) ? 1
                                        : std::max(1, style.scalar_elems /
                                                          vector_width(g, k));
      const bool hints = style.hints;
      Stmts tl;
      for (auto [i, in] : llvm::enumerate(k.inputs))
        if (needed(in, pass))
          tl.push_back(decl_array(vec_type(in), "x" + std::to_string(i),
                                  std::to_string(n)));
      auto at_u = [&](Expr x) { return x[u]; };
      // The n slots' statements, each under its guard.
      auto units = [&](Stmts &into, Stmts slot) {
        Stmts unit;
        unit.push_back(decl("const", style.index, "e",
                            tile_at * tile + slot_start(a, style.index)));
        unit.push_back(if_then(t + u < t1 && e < R, std::move(slot)));
        into.push_back(for_loop(decl("", "int", "u", lit(0)), u < n,
                                pre_inc(u), std::move(unit), LoopHint::Unroll));
      };
      Stmts loads;
      load_inputs(loads, pass, R, at_u, a, hints);
      units(tl, std::move(loads));
      const Expr cn = v("cn");
      const Stmt count = decl("", "int", "cn", lit(0), "elements loaded");
      // The n slots' elements summed into `prefix`'s accumulators (`stage`:
      // element()'s), cn (declared by the caller) counting them: the
      // vector path's slots are V elements, all in the row; element by
      // element, cn counts those in the row.
      auto sum_batch = [&](Stmts &into, const std::string &prefix,
                           MomentStage stage) {
        Stmts sums;
        if (vec) {
          cuda_slot(sums, pass, R, at_u, true, a, hints, prefix, {}, stage);
          sums.push_back(assign(cn, V, "+="));
        } else {
          cuda_slot(sums, pass, R, at_u, true, a, hints, prefix,
                    {assign(cn, lit(1), "+=")}, stage);
        }
        units(into, std::move(sums));
      };
      if (!mo && batch_moments(pass)) {
        // The pass's sum_sq_dev reductions (var over everything: welford)
        // a batch at a time, as the fused pair below: the n slots' sum and
        // an estimate c of their mean, their deviations from c, merged
        // into the thread's moments with c as the shift. Welford's update
        // an element costs a division (MUFU.RCP) and a dozen instructions.
        tl.push_back(count);
        for (NodeId r : reductions_in(pass))
          if (moments(r))
            tl.push_back(decl("", elem_type(r), print(acc(r, "cs")),
                              cast(elem_type(r), lit(0))));
        sum_batch(tl, "acc", MomentStage::Sums);
        Stmts chunk, devs;
        for (NodeId r : reductions_in(pass)) {
          if (!moments(r))
            continue;
          const std::string t = elem_type(r);
          chunk.push_back(decl("const", t, print(acc(r, "inv")), count_reciprocal(t, cn)));
          chunk.push_back(decl("const", t, print(acc(r, "cc")),
                               acc(r, "cs") * acc(r, "inv"),
                               "about the mean of the loaded slots"));
          chunk.push_back(decl("", t, print(acc(r, "cq")), cast(t, lit(0))));
          chunk.push_back(decl("", t, print(acc(r, "cr")), cast(t, lit(0)),
                               "the deviations' sum"));
        }
        cuda_slot(devs, pass, R, at_u, true, a, hints, "acc", {},
                  MomentStage::Devs);
        units(chunk, std::move(devs));
        for (NodeId r : reductions_in(pass))
          if (moments(r))
            chunk.push_back(accumulate(
                "sum_sq_dev", acc(r), acc(r),
                moments_of_batch(acc_type(r), elem_type(r), acc(r, "cc"),
                              acc(r, "cr"), acc(r, "cq"), acc(r, "inv"), cn)));
        tl.push_back(if_then(cn > lit(0), std::move(chunk)));
      } else if (!mo) {
        Stmts slot;
        cuda_slot(slot, pass, R, at_u, true, a, hints);
        units(tl, std::move(slot));
      } else {
        // The loaded slots' sum and an estimate c of their mean, then their
        // deviations from c, d, as the corrected two-pass algorithm takes
        // them: mean = c + sum(d) / n, m2 = sum(d^2) - sum(d)^2 / n
        // (exact for any c: the mean's rounding costs nothing), merged
        // into the thread's moments with c as the shift: what the merge
        // subtracts is small, whatever the data's offset (f32 rows of
        // mean 1000 lost 3e-6 of their variance with the mean as a plain
        // f32 value).
        const Expr cr = v("cr");
        declare_accumulators(tl, pass, "cs");
        tl.push_back(count);
        sum_batch(tl, "cs", MomentStage::Whole);
        const std::string t = value_type(g.node(mo->mean));
        const Expr inv = v("inv");
        Stmts chunk, squares;
        chunk.push_back(decl("const", t, "inv", count_reciprocal(t, cn)));
        chunk.push_back(decl("const", t, print(value_var(mo->mean)),
                             acc(mo->sum, "cs") * inv,
                             "about the mean of the loaded slots"));
        declare_accumulators(chunk, pass + 1, "cq");
        chunk.push_back(decl("", t, "cr", cast(t, lit(0)),
                             "the deviations' sum"));
        cuda_slot(squares, pass + 1, R, at_u, true, a, hints, "cq",
                  {assign(cr, value_var(mo->dev), "+=")});
        units(chunk, std::move(squares));
        chunk.push_back(accumulate(
            "sum_sq_dev", moments_acc(*mo), moments_acc(*mo),
            moments_of_batch(moments_type(*mo), t, value_var(mo->mean), cr,
                          acc(mo->squares, "cq"), inv, cn)));
        tl.push_back(if_then(cn > lit(0), std::move(chunk)));
      }
      paths[vec ? 0 : 1].push_back(
          for_loop(decl("", style.index, "t", t0), t < t1,
                   binary("+=", t, lit(n)), std::move(tl)));
    }
    if (style.vector && style.scalar)
      b.push_back(if_then(sp.field("vec"), std::move(paths[0]),
                          std::move(paths[1])));
    else
      for (Stmt &s : paths[style.vector ? 0 : 1])
        b.push_back(std::move(s));
  }

  // Loop and column modes: each pass over the row's tiles (tiled_pass),
  // its reductions over the row's threads (with `cols`, column mode's), the
  // epilogue's reduced outputs written by the thread `writer` says.
  void looped_passes(Stmts &rowb, const PassStyle &style, Expr writer,
                     Expr cols = Expr()) const {
    for (int p = 0, read = 0; p < k.passes; ++p, ++read) {
      const std::optional<Moments> mo = moments_at(p);
      if (!mo) {
        rowb.push_back(comment("pass " + std::to_string(p)));
        declare_accumulators(rowb, p);
        tiled_pass(rowb, p, style, read);
        row_reduce(rowb, p, cols);
        epilogue(rowb, p, reduced_store(writer));
        continue;
      }
      // A row's sum and its squared deviations from the mean in one read
      // (layer norm: two reads of the row where the decomposition makes
      // three): each thread's moments merge those of its loaded slots,
      // each slot's taken about its own mean in registers (Chan, Golub
      // and LeVeque), then the block's merge; the sum is n times the mean.
      // Welford's update per element (kiln::scalar::combine_sum_sq_dev)
      // costs a division an element; this costs one per kTiles slots.
      rowb.push_back(comment("passes " + std::to_string(p) + " and " +
                             std::to_string(p + 1) + " in one read"));
      declare_accumulators(rowb, p);
      declare_accumulators(rowb, p + 1);
      rowb.push_back(decl("", moments_type(*mo), print(moments_acc(*mo)),
                          call("kiln::scalar::init_sum_sq_dev<" +
                                   elem_type(mo->squares) + ">",
                               {})));
      tiled_pass(rowb, p, style, read, mo);
      rowb.push_back(low::row_reduce("sum_sq_dev", moments_type(*mo),
                                     moments_acc(*mo), tpr, smem, cols));
      const std::string t = elem_type(mo->sum);
      rowb.push_back(assign(acc(mo->sum), (moments_acc(*mo).field("shift") +
                                           moments_acc(*mo).field("mean")) *
                                              cast(t, R)));
      rowb.push_back(assign(acc(mo->squares), moments_acc(*mo).field("m2")));
      epilogue(rowb, p, reduced_store(writer));
      epilogue(rowb, p + 1, reduced_store(writer));
      ++p;
    }
  }

  // Loop mode: a block of kiln::kLoopThreads per row; each pass re-reads
  // the row from memory (it is too long for registers, or not
  // contiguous). Two kernels: `loop` for rows read 16 bytes at a time
  // (sp.vec), offsets within a row in 32 bits (plan_cuda sends longer rows
  // to `loopany`), and `loopany` for any layout, element by element. One
  // kernel switching on sp.vec held both paths' registers: layer norm 122
  // where its 16-byte path alone needs 82.
  //
  // The 16-byte kernel keeps the row in L2 between passes (loads of a row
  // a later pass reads again: evict_last), lets the last read go first
  // and streams its stores (the output is not read again here), and has
  // two tiles of loads in flight in the writing pass. On an H200 against
  // the kernel before (one kernel for both, no hints, one tile): softmax
  // 1048x32000 f32 0.1094 -> 0.0989 ms, layer norm 0.1355 -> 0.0972, RMS
  // norm bf16 0.0582 -> 0.0401 (bench/results/2026-11-28-h200-loop-lean.md).
  Function cuda_rows_loop(Access a) const {
    const bool vec = a == Access::Vector;
    Function f;
    f.flavour = vec ? "loop" : "loopany";
    f.name = name(f.flavour);
    f.header = header(vec ? "a row per block, each pass re-reads the row 16 "
                            "bytes at a time"
                          : "a row per block, each pass re-reads the row "
                            "element by element");
    f.launch_bounds = "kiln::kLoopThreads";
    f.params = params(false);
    PassStyle style;
    style.vector = vec;
    style.scalar = !vec;
    // Element by element, 8 elements in flight in the reducing passes (2
    // tiles of f32, 1 of bf16) and one tile in the writing pass: 16 and 2
    // took softmax f32 to 82 registers, a block per multiprocessor, and
    // measured slower (bench/results/2026-11-28-h200-rowsany.md).
    style.write_tiles = 2;
    style.scalar_elems = 8;
    style.hints = true;
    if (vec)
      style.index = "int";
    const char *ix = style.index;
    Stmts &b = f.body;
    kernel_prelude(b);
    if (vec)
      b.push_back(decl("const", "int", "R", cast("int", sp.field("R")),
                       "below 2^31 (kiln::gen::plan_cuda)"));
    else
      b.push_back(decl("const", "int64_t", "R", sp.field("R")));
    b.push_back(decl("constexpr", "int", "tpr", v("kiln::kLoopThreads")));
    b.push_back(decl("const", "int", "lane", v("threadIdx.x")));
    b.push_back(decl("const", "uint64_t", "keep",
                     call("kiln::gen::l2_evict_last", {})));
    // The row in tiles of a slot per thread, each pass as a split kernel's
    // over all of them: kTiles tiles' loads in flight per thread, and the
    // passes alternating direction (softmax over 1048x32000 f32, H100: 53 %
    // of the copy floor with one slot's loads in flight per thread).
    b.push_back(decl("constexpr", ix, "tile",
                     vec ? tpr * V : cast("int64_t", tpr) * V));
    b.push_back(decl("const", ix, "tiles", (R + v("tile") - 1) / v("tile")));
    b.push_back(decl("const", ix, "t0", lit(0)));
    b.push_back(decl("const", ix, "t1", v("tiles")));
    Stmts rowb;
    row_setup(rowb);
    prologue(rowb);
    looped_passes(rowb, style, lane == lit(0));
    b.push_back(for_loop(decl("", "int64_t", "row", v("blockIdx.x")),
                         row < sp.field("rows"),
                         binary("+=", row, v("gridDim.x")), std::move(rowb)));
    return f;
  }

  // Column mode: rows that are neighbours in memory, their elements far
  // apart (a reduction over a dim that is not the innermost: log_softmax
  // over dim 0, a mean over the tokens of [B, T, C]). A block holds
  // sp.cols neighbouring rows of tpr threads each (blockDim.x / sp.cols,
  // thread t of row t % cols), each pass re-reading them as loop mode
  // does: a warp's load at one place along R reads cols neighbours in
  // memory, one or more whole sectors, where a thread group per row
  // (rowsany, loopany) read a sector per element. log_softmax over dim 0
  // of 4096x1024 f32 on an H200 ran at 9 % of the memory floor that way.
  Function cuda_cols() const {
    Function f;
    f.flavour = "cols";
    f.name = name(f.flavour);
    f.header = header("neighbouring rows per block, each pass re-reads "
                      "them, a warp's loads across rows");
    f.launch_bounds = "512";
    f.params = params(false);
    PassStyle style;
    style.vector = false;
    style.scalar_access = Access::Column;
    style.scalar_elems = 8;
    style.hints = true;
    const Expr cols = v("cols"), live = v("live"), row0 = v("row0"),
               tile = v("tile");
    Stmts &b = f.body;
    kernel_prelude(b, true);
    b.push_back(decl("const", "int64_t", "R", sp.field("R")));
    column_mapping(b);
    b.push_back(decl("const", "uint64_t", "keep",
                     call("kiln::gen::l2_evict_last", {})));
    b.push_back(decl("const", "int64_t", "tile", cast("int64_t", tpr) * V));
    b.push_back(decl("const", "int64_t", "tiles", (R + tile - 1) / tile));
    b.push_back(decl("const", "int64_t", "t0", lit(0)));
    Stmts rowb;
    rowb.push_back(decl("const", "int64_t", "row",
                        row0 + cast("int", v("threadIdx.x")) % cols));
    rowb.push_back(decl("const", "bool", "live", row < sp.field("rows")));
    rowb.push_back(decl("const", "int64_t", "t1", select(live, v("tiles"), lit(0)),
                        "a row past the end reads nothing, and joins the "
                        "block's reductions"));
    row_setup(rowb);
    prologue(rowb);
    looped_passes(rowb, style, lane == lit(0) && live, cols);
    b.push_back(for_loop(
        decl("", "int64_t", "row0", cast("int64_t", v("blockIdx.x")) * cols),
        row0 < sp.field("rows"),
        binary("+=", row0, cast("int64_t", v("gridDim.x")) * cols),
        std::move(rowb)));
    return f;
  }

  // The combined reductions of pass q, read back from the first partial
  // (split kernels of later passes, the combine kernel).
  void combined(Stmts &b, int q, const StoreFn &store, bool write) const {
    for (NodeId r : reductions_in(q))
      b.push_back(decl("const", acc_type(r), print(acc(r)),
                       part(r)[row * sp.field("splits")]));
    epilogue(b, q, store, write);
  }

  // Split mode: few long rows, each split over many blocks. Pass p is a
  // launch of the split kernel over all blocks, each accumulating its
  // tiles into one partial per reduction; then a launch of the combine
  // kernel, a block per row, folds the partials (in a fixed order: the
  // result does not depend on timing) into the first slot, where every
  // block of the next pass reads one value.
  void cuda_split(std::vector<Function> &fs,
                  const std::vector<ScratchEntry> &layout) const {
    split_passes(fs, layout, false);
    combine_kernel(fs, layout);
  }

  // The split kernels of each pass. A kernel per pass (split0, split1,
  // ...), each with only its own pass's registers: one kernel switching on
  // sp.pass took the largest pass's (where(sum): 46 registers instead of
  // 32, 5 blocks per multiprocessor instead of 8). Each block owns a run of
  // neighbouring tiles of tpr slots. Passes alternate direction, so that a
  // pass starts on the end of the row the previous pass read last, which
  // L2 still holds (where(sum), hand-written: 0.2124 ms forward, 0.2078
  // mirrored).
  //
  // With `columns` (colsplit0, ...: RedMode::colsplit), column mode's
  // blocks of sp.cols neighbouring rows, each block a run of tiles of
  // every one of its rows, where the blocks of columns would fill at most
  // half the GPU (kiln::gen::plan_cuda: 65536x64 f32 summed over dim 0 is 8
  // blocks of 8 columns). A block's rows
  // past the end take the last row's place, read nothing and write no
  // partial.
  void split_passes(std::vector<Function> &fs,
                    const std::vector<ScratchEntry> &layout, bool columns) const {
    StoreFn no_store = [](size_t, Stmt s) { return s; }; // never called
    const Expr splits = sp.field("splits"), tile = v("tile"),
               tiles = v("tiles"), per = v("per"), t0 = v("t0"), t1 = v("t1"),
               cols = v("cols"), live = v("live"), first = v("first");
    for (int launch = 0; launch < k.passes; ++launch) {
      if (!columns && reductions_in(launch).empty()) {
        fs.push_back(split_write_pass(launch, layout));
        continue;
      }
      Function f;
      f.flavour = (columns ? "colsplit" : "split") + std::to_string(launch);
      f.name = name(f.flavour);
      f.header = header(columns ? "few blocks of columns: pass " +
                                      std::to_string(launch) +
                                      " over their rows' tiles"
                                : "few long rows: pass " +
                                      std::to_string(launch) +
                                      " over the row's tiles");
      f.launch_bounds = "512";
      f.params = params(true);
      Stmts &b = f.body;
      kernel_prelude(b, columns);
      b.push_back(decl("const", "int64_t", "R", sp.field("R")));
      if (columns) {
        column_mapping(b);
        b.push_back(decl("const", "int64_t", "first",
                         cast("int64_t", v("blockIdx.x") / splits) * cols +
                             cast("int", v("threadIdx.x")) % cols));
        b.push_back(decl("const", "bool", "live", first < sp.field("rows")));
        b.push_back(decl("const", "int64_t", "row",
                         select(live, first, sp.field("rows") - lit(1))));
      } else {
        b.push_back(decl("const", "int", "tpr", v("blockDim.x")));
        b.push_back(decl("const", "int", "lane", v("threadIdx.x")));
        b.push_back(decl("const", "int64_t", "row", v("blockIdx.x") / splits));
      }
      b.push_back(decl("const", "int64_t", "split", v("blockIdx.x") % splits));
      b.push_back(decl("const", "int64_t", "tile", cast("int64_t", tpr) * V));
      b.push_back(decl("const", "int64_t", "tiles", (R + tile - 1) / tile));
      b.push_back(decl("const", "int64_t", "per", (tiles + splits - 1) / splits));
      b.push_back(decl("const", "int64_t", "t0", split * per));
      Expr end = select(t0 + per < tiles, t0 + per, tiles);
      b.push_back(decl("const", "int64_t", "t1", columns ? select(live, end, t0) : end));
      row_setup(b);
      prologue(b);
      partial_pointers(b, layout);
      for (int q = 0; q < launch; ++q) {
        b.push_back(comment("the reductions of pass " + std::to_string(q) +
                            ", combined"));
        combined(b, q, no_store, false);
      }
      b.push_back(comment("pass " + std::to_string(launch) +
                          " over this block's tiles"));
      declare_accumulators(b, launch);
      PassStyle style;
      if (columns) {
        style.vector = false;
        style.scalar_access = Access::Column;
        style.scalar_elems = 8;
      }
      tiled_pass(b, launch, style, launch);
      row_reduce(b, launch, columns ? cols : Expr());
      for (NodeId r : reductions_in(launch))
        b.push_back(if_then(columns ? lane == lit(0) && live : lane == lit(0),
                            {assign(part(r)[row * splits + split], acc(r))}));
      fs.push_back(std::move(f));
    }
  }

  // The start of a split-mode kernel whose threads are one block's (the
  // combine kernel, a pass that only writes): name, header, bounds, the
  // partials parameter, shared memory, R, tpr and lane.
  Function block_kernel(const std::string &flavour, const std::string &what) const {
    Function f;
    f.flavour = flavour;
    f.name = name(flavour);
    f.header = header(what);
    f.launch_bounds = "512";
    f.params = params(true);
    kernel_prelude(f.body);
    f.body.push_back(decl("const", "int64_t", "R", sp.field("R")));
    f.body.push_back(decl("const", "int", "tpr", v("blockDim.x")));
    f.body.push_back(decl("const", "int", "lane", v("threadIdx.x")));
    return f;
  }

  // A split-mode pass that only writes (where(sum(x) > t, 2x, x)'s second):
  // a block per tile, no loop, as the pointwise kernels run (their grid of
  // a 16-byte slot per thread reaches the copy floor), the host launching
  // a block per tile of each row (kiln::gen::split_write_grid); odd passes
  // take the tiles from the row's end, which the pass before read last and
  // L2 may still hold. The blocks' loop only runs past a grid of 2^31 - 1.
  // Its split-kernel form, each block a run of ~16 tiles one after
  // another, took 133-136 us of where(sum)'s 2^26 f32 on an H200 against
  // 124.9 for Triton's pointwise kernel (bench/results/2026-11-30-h200-item2.md);
  // a block per tile 128.0, and the whole call 0.2048 -> 0.1981 ms
  // (bench/results/2026-11-30-h200-item2b.md).
  Function split_write_pass(int launch, const std::vector<ScratchEntry> &layout) const {
    StoreFn no_store = [](size_t, Stmt s) { return s; }; // never called
    const Expr tile = v("tile"), tiles = v("tiles"), bi = v("bi");
    Function f = block_kernel("split" + std::to_string(launch),
                              "few long rows: pass " + std::to_string(launch) +
                                  ", which only writes, a block per tile of the row");
    Stmts &b = f.body;
    b.push_back(decl("const", "int64_t", "tile", cast("int64_t", tpr) * V));
    // tile is a power of two (tpr is: kiln::gen::plan_cuda); one row (a
    // sum over everything) needs no 64-bit division per thread.
    b.push_back(decl("const", "int64_t", "tiles",
                     binary(">>", R + tile - 1, call("__ffs", {tpr * V}) - lit(1))));
    prologue(b);
    partial_pointers(b, layout);
    Stmts body;
    const Expr one = sp.field("rows") == lit(1);
    body.push_back(decl("const", "int64_t", "row", select(one, lit(0), bi / tiles)));
    body.push_back(decl("const", "int64_t", "t0", select(one, bi, bi % tiles)));
    body.push_back(decl("const", "int64_t", "t1", v("t0") + lit(1)));
    row_setup(body);
    for (int q = 0; q < launch; ++q) {
      body.push_back(comment("the reductions of pass " + std::to_string(q) +
                             ", combined"));
      combined(body, q, no_store, false);
    }
    body.push_back(comment("pass " + std::to_string(launch) + " over tile t0"));
    tiled_pass(body, launch, PassStyle{}, launch);
    b.push_back(for_loop(decl("", "int64_t", "bi", cast("int64_t", v("blockIdx.x"))),
                         bi < sp.field("rows") * tiles,
                         binary("+=", bi, v("gridDim.x")), std::move(body)));
    return f;
  }

  // Split mode's combine kernel: a block per row folds a pass's partials.
  void combine_kernel(std::vector<Function> &fs,
                      const std::vector<ScratchEntry> &layout) const {
    StoreFn no_store = [](size_t, Stmt s) { return s; }; // never called
    const Expr splits = sp.field("splits"), u = v("u");
    Function f = block_kernel(
        "combine", "few long rows: combines a pass's partials, a block per row");
    Stmts &b = f.body;
    b.push_back(decl("const", "int64_t", "row", v("blockIdx.x")));
    row_setup(b);
    prologue(b);
    partial_pointers(b, layout);
    const Expr s = v("s"), pu = v("p")[u];
    for (int q = 0; q < k.passes; ++q) {
      if (reductions_in(q).empty())
        continue;
      Stmts pass;
      for (int earlier = 0; earlier < q; ++earlier)
        combined(pass, earlier, no_store, false);
      declare_accumulators(pass, q);
      // kCombine partials per thread loaded before any is combined, those
      // past the last as the identity: one at a time, each waited for its
      // load (where(sum): the combine added 8.0 us after pass 0, 4.4 us
      // this way; an empty kernel adds 2.2), and with a remainder loop
      // after batches of 8, the 4224 partials of 512 threads waited twice.
      // Then folded as a tree, four dependent merges, not 15 (a merge of
      // moments is a division and a dozen instructions).
      const Expr w = v("w");
      for (NodeId r : reductions_in(q)) {
        const Expr stride = cast("int64_t", tpr), at = s + u * stride;
        Stmts fold;
        fold.push_back(decl_array(acc_type(r), "p", std::to_string(kCombine)));
        fold.push_back(for_loop(
            decl("", "int", "u", lit(0)), u < kCombine, pre_inc(u),
            {assign(pu, select(at < splits, part(r)[row * splits + at], init(r)))},
            LoopHint::Unroll));
        fold.push_back(for_loop(
            decl("", "int", "w", lit(1)), w < kCombine, binary("*=", w, lit(2)),
            {for_loop(decl("", "int", "u", lit(0)), u < kCombine,
                      binary("+=", u, lit(2) * w),
                      {combine(r, pu, v("p")[u + w])}, LoopHint::Unroll)},
            LoopHint::Unroll));
        fold.push_back(combine(r, acc(r), v("p")[lit(0)]));
        pass.push_back(for_loop(decl("", "int64_t", "s", lane), s < splits,
                                binary("+=", s, lit(kCombine) * stride),
                                std::move(fold)));
      }
      row_reduce(pass, q);
      for (NodeId r : reductions_in(q))
        pass.push_back(
            if_then(lane == lit(0), {assign(part(r)[row * splits], acc(r))}));
      epilogue(pass, q, reduced_store(lane == lit(0)), true);
      b.push_back(if_then(sp.field("pass") == lit(q + 1), std::move(pass)));
    }
    fs.push_back(std::move(f));
  }

};

} // namespace

Kernel lower_reduction_cuda(const ir::Graph &g, const sched::Kernel &k, int ki,
                            const std::string &symbol, const std::string &dt) {
  RedCuda red{{g, k, ki, symbol, dt}};
  Kernel kl;
  kl.index = ki;
  kl.target = Target::Cuda;
  kl.reduction = true;
  kl.prefix = kernel_name(symbol, ki, dt);
  kl.scratch = scratch_layout(g, k);
  // The 16-byte rows kernel's instances past register_slots (f32's 8
  // slots, rows_slots_vector): the FULL twin keeps what register mode
  // keeps, the other recomputes it (a template of its own).
  const int slots = register_slots(g, k), wide = rows_slots_vector(g, k);
  std::vector<Function::Instance> keeping;
  for (int s = 1; s <= slots; s *= 2)
    keeping.push_back({s, "512"});
  if (wide > slots)
    keeping.push_back({wide, "512", /*plain=*/false, /*full=*/true});
  else // rows filling fewer slots than a power of two (16-bit rows' 3)
    for (int n : rows_full_between(g, k))
      keeping.push_back({n, "512", /*plain=*/false, /*full=*/true});
  // The exact instance (rows_exact_slots) recomputes where it holds more
  // than 32 elements of each input a thread (16-bit rows' 40): bf16
  // softmax kept exp(x - max) beside x in 92 registers, 2 blocks of 256
  // threads a multiprocessor, and ran at 70 % of the copy floor over rows
  // of 10240; recomputing, 54 registers and 93 % (0.0908 -> 0.0682 ms on
  // an H200; 5120: 0.0718 -> 0.0681, 1280: 0.0785 -> 0.0677; layer norm
  // and RMS norm compile to the same registers either way;
  // bench/results/2026-12-01-h200-rows-5120.md, call 4). f32's 20 keep.
  const int exact = rows_exact_slots(g, k);
  const bool exact_recomputes = exact * vector_width(g, k) > 32;
  if (exact && !exact_recomputes)
    keeping.push_back({exact, "512", /*plain=*/false, /*full=*/true});
  kl.functions.push_back(red.cuda_rows_registers(Access::Vector, keeping));
  if (wide > slots || exact_recomputes) {
    RedCuda recompute = red;
    recompute.keep_values = false;
    std::vector<Function::Instance> recomputing;
    if (wide > slots) {
      for (int n : rows_full_between(g, k))
        recomputing.push_back({n, "512", /*plain=*/false, /*full=*/true});
      recomputing.push_back({wide, "512", /*plain=*/true, /*full=*/false});
    } else {
      recomputing.push_back({exact, "512", /*plain=*/false, /*full=*/true});
    }
    kl.functions.push_back(recompute.cuda_rows_registers(Access::Vector, recomputing));
  }
  if (const std::optional<RedCuda::Moments> mo = red.reread_moments())
    kl.functions.push_back(red.cuda_rows_reread(*mo));
  kl.functions.push_back(red.cuda_rows_registers(Access::Scalar));
  if (may_reduce_columns(g, k))
    kl.functions.push_back(red.cuda_rows_registers(Access::Column));
  kl.functions.push_back(red.cuda_rows_loop(Access::Vector));
  kl.functions.push_back(red.cuda_rows_loop(Access::Scalar));
  if (may_reduce_columns(g, k))
    kl.functions.push_back(red.cuda_cols());
  red.cuda_split(kl.functions, kl.scratch);
  if (may_reduce_columns(g, k))
    red.split_passes(kl.functions, kl.scratch, true);
  return kl;
}

bool rows_reread(const ir::Graph &g, const sched::Kernel &k) {
  const std::string none;
  return RedCuda{{g, k, 0, none, none}}.reread_moments().has_value();
}

} // namespace kiln::codegen
