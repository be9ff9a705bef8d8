// Fused reduction kernels on the CPU (the model they share: ReduceModel.h;
// the host picks one at run time, LowerHost.cpp):
//   rows   rows in parallel, each pass a blocked loop over the row;
//   split  few long rows: chunks in parallel, partials combined in order.
#include "ReduceModel.h"

#include <functional>
#include <set>

namespace kiln::codegen {

using namespace reduce;

namespace {

// A CPU reduction pass walks its row in blocks of kCpuLanes * kCpuStride
// elements; lane l of a block adds elements l, l + kCpuLanes, ... in order,
// and the lanes' sums are combined pairwise with every other block's.
// Element j of a row thus sits under at most kCpuStride in-order adds and
// a log2 tree: short rows round as the eager reductions' eight interleaved
// lanes do (a mean of 33 f32 values was 1.8x eager's error in blocks of 16
// added in order), long rows better.
constexpr int kCpuLanes = 8;
constexpr int kCpuStride = 8;
constexpr int kCpuBlock = kCpuLanes * kCpuStride;

struct RedCpu : RedModel {
  // ---- CPU ----

  void cpu_unpack(Stmts &b, const std::string &ctx) const {
    const Expr c = v("c");
    b.push_back(decl("const", "auto &", "c",
                     deref(call("static_cast<const " + ctx + " *>", {v("p")}))));
    b.push_back(decl("const", "kiln::RowSpace &", "sp", c.field("sp")));
    b.push_back(decl("const", "auto &", "st", c.field("st")));
    b.push_back(decl("const", "int64_t", "R", sp.field("R")));
    for (size_t i = 0; i < nin; ++i)
      b.push_back(decl("const", "auto *", "in" + std::to_string(i),
                       c.field("in" + std::to_string(i))));
    for (size_t o = 0; o < nout; ++o)
      b.push_back(decl("", "auto *", "out" + std::to_string(o),
                       c.field("out" + std::to_string(o))));
    for (auto [i, s] : llvm::enumerate(k.scalars))
      b.push_back(decl("const", storage(s), "s" + std::to_string(i),
                       c.field("s" + std::to_string(i))));
  }

  // Pass `pass` over elements [from, to) of the row. Each lane of a block
  // (kCpuBlock above) is summed in order; the lanes' sums are combined
  // pairwise, by a binary counter (stk[l] holds the sum of 2^l lanes), so
  // rounding error grows with log(R), as in the eager reductions, not with
  // R: a sum of 131073 ones in f32 is exact this way, 1.14 off in blocks of
  // 4096 added in order (test/fuzz/regressions/sum-accuracy.cpp). A pass
  // that only writes walks the row in order.
  void cpu_pass(Stmts &out, int pass, Expr from, Expr to) const {
    std::vector<NodeId> reds = reductions_in(pass);
    const Expr rb = v("rb"), re = v("re"), r = v("r"), l = v("l"),
               ln = v("ln"), nblk = v("nblk"), i = v("i"), unit = v("unit");
    auto stk = [&](NodeId red) { return numbered("stk", red); };
    auto blk = [&](NodeId red) { return acc(red, "blk"); };
    auto blkv = [&](NodeId red) { return numbered("blkv", red); };
    // One element at r; with `contiguous`, every operand's stride along R
    // is 1 (the run-time check `unit`), so the offsets are r itself and
    // clang's vectoriser sees neighbouring elements.
    // The operands read or written element by element are noted in
    // `touched` (a reduced output, stored once per row, has stride 0 along
    // R and is not one).
    std::set<size_t> touched;
    auto element_at = [&](Stmts &into, bool contiguous,
                          MomentStage stage = MomentStage::Whole) {
      element(
          into, pass,
          [&](size_t x) {
            const size_t J = in_op(x);
            touched.insert(J);
            return numbered("in", x)[base(J) + (contiguous ? r : r * rstride(J))];
          },
          [&](size_t o) {
            touched.insert(o);
            return numbered("out", o)[base(o) + (contiguous ? r : r * rstride(o))];
          },
          r, "blk", false, stage);
    };
    Stmts each;
    element_at(each, false);
    Stmts b;
    // Rows whose operands are contiguous along R (the common case) take
    // unit-stride loops: the writing pass is widened by the vectoriser,
    // with SLEEF's forms of exp and the other functions
    // (plugin/VectorMath.h), and a full block's lanes run side by side.
    // Each lane adds the same elements in the same order as on the strided
    // path, so the results are the same bit for bit except where a vector
    // math form rounds differently from the scalar call (within 1 ULP;
    // test/plugin/capture/exec-cpu-contiguous-rows.cpp). Strided only,
    // softmax over 32768x1024 f32 on 2 cores took 103 ms compiled against
    // eager's 82; now 89 (bench/results/2026-11-30-cpu-rows.md).
    Expr contiguous;
    for (size_t op : touched) {
      Expr one = rstride(op) == lit(1);
      contiguous = contiguous ? (contiguous && one) : one;
    }
    b.push_back(decl("const", "bool", "unit", contiguous ? contiguous : lit(true),
                     "the operands of this pass contiguous along R"));
    for (NodeId red : reds)
      b.push_back(decl_array(acc_type(red), print(stk(red)), "64"));
    if (!reds.empty())
      b.push_back(decl("", "uint64_t", "nblk", lit(0)));
    if (reds.empty()) {
      Stmts each_unit;
      element_at(each_unit, true);
      b.push_back(if_then(
          unit,
          {for_loop(decl("", "int64_t", "r", from), r < to, pre_inc(r),
                    std::move(each_unit))},
          {for_loop(decl("", "int64_t", "r", from), r < to, pre_inc(r),
                    std::move(each))}));
      out.push_back(block(std::move(b)));
      return;
    }
    // A lane's partial onto the binary counter (stk[l]: 2^l lanes).
    auto push_lane = [&](Stmts &into) {
      into.push_back(decl("", "int", "l", lit(0)));
      Stmts carry;
      for (NodeId red : reds)
        carry.push_back(accumulate(op_name(red), blk(red), stk(red)[l], blk(red)));
      into.push_back(for_loop(binary("&", binary(">>", nblk, l), lit(1)),
                              pre_inc(l), std::move(carry)));
      for (NodeId red : reds)
        into.push_back(assign(stk(red)[l], blk(red)));
      into.push_back(eval(pre_inc(nblk)));
    };
    // Any block, any strides: lane by lane.
    Stmts lane;
    declare_accumulators(lane, pass, "blk");
    lane.push_back(for_loop(decl("", "int64_t", "r", rb + ln), r < re,
                            binary("+=", r, lit(kCpuLanes)), std::move(each)));
    push_lane(lane);
    Stmts lanes;
    lanes.push_back(for_loop(decl("", "int", "ln", lit(0)),
                             ln < select(re - rb < kCpuLanes, re - rb, lit(kCpuLanes)),
                             pre_inc(ln), std::move(lane)));
    // A full block of contiguous operands: the lanes side by side, element
    // i of every lane before element i + 1 of any (each lane still adds its
    // elements in order), then pushed in lane order as above.
    Stmts wide;
    bool batch = !writes_full(pass);
    batch &= llvm::any_of(reds, [&](NodeId red) { return moments(red); });
    // Every reduction of the pass a sum_sq_dev: the block is one batch,
    // pushed once, not a partial per lane.
    const bool one_batch =
        batch && llvm::all_of(reds, [&](NodeId red) { return moments(red); });
    for (NodeId red : reds) {
      if (one_batch)
        break; // no partial per lane
      wide.push_back(decl_array(acc_type(red), print(blkv(red)),
                                std::to_string(kCpuLanes)));
      wide.push_back(for_loop(decl("", "int", "ln", lit(0)), ln < kCpuLanes,
                              pre_inc(ln), {assign(blkv(red)[ln], init(red))}));
    }
    // Every element of the block, lanes side by side, `stage` as element()
    // takes it; `bind` names each reduction's per-lane state in the body.
    auto lanes_loop = [&](MomentStage stage,
                          const std::function<void(Stmts &, NodeId)> &bind) {
      Stmts one;
      one.push_back(decl("const", "int64_t", "r", rb + i * kCpuLanes + ln));
      for (NodeId red : reds)
        bind(one, red);
      element_at(one, true, stage);
      wide.push_back(for_loop(
          decl("", "int", "i", lit(0)), i < kCpuStride, pre_inc(i),
          {for_loop(decl("", "int", "ln", lit(0)), ln < kCpuLanes, pre_inc(ln),
                    std::move(one))}));
    };
    auto per_lane = [&](const std::string &prefix, NodeId red) {
      return numbered((prefix + "v").c_str(), red);
    };
    auto lanes_init = [&](const std::string &prefix, NodeId red) {
      const std::string t = elem_type(red);
      wide.push_back(decl_array(t, print(per_lane(prefix, red)),
                                std::to_string(kCpuLanes)));
      if (prefix == "cc") // assigned before it is read
        return;
      wide.push_back(for_loop(decl("", "int", "ln", lit(0)), ln < kCpuLanes,
                              pre_inc(ln),
                              {assign(per_lane(prefix, red)[ln], cast(t, lit(0)))}));
    };
    if (!batch) {
      lanes_loop(MomentStage::Whole, [&](Stmts &one, NodeId red) {
        one.push_back(decl("", "auto &", print(blk(red)), blkv(red)[ln]));
      });
    } else {
      // A sum_sq_dev reduction (var over everything: welford) takes its
      // elements a batch at a time, as the GPU's split pass does: their
      // sum, their deviations from its mean, one merge. Welford's update
      // an element (a division, and a chain from one element to the next)
      // made var of 2^24 f32 2.8x eager's time; a batch a lane (8
      // elements), each merged onto the block counter, left var of 2^22
      // f32, which the caches hold, 5x eager's. The batch is the block
      // where every reduction of the pass is one (var alone), else each
      // lane's kCpuStride elements.
      static_assert((kCpuStride & (kCpuStride - 1)) == 0 &&
                        (kCpuBlock & (kCpuBlock - 1)) == 0,
                    "1 / count is exact, as a literal, for a power of two");
      const int64_t count = one_batch ? kCpuBlock : kCpuStride;
      char per_text[32];
      std::snprintf(per_text, sizeof per_text, "%.17g", 1.0 / double(count));
      const std::string per = per_text;
      for (NodeId red : reds)
        if (moments(red))
          for (const char *prefix : {"cs", "cq", "cr", "cc"})
            if (!one_batch || std::string(prefix) != "cc")
              lanes_init(prefix, red);
      lanes_loop(MomentStage::Sums, [&](Stmts &one, NodeId red) {
        one.push_back(decl("", "auto &",
                           print(moments(red) ? acc(red, "cs") : blk(red)),
                           moments(red) ? per_lane("cs", red)[ln] : blkv(red)[ln]));
      });
      for (NodeId red : reds) {
        if (!moments(red))
          continue;
        const std::string t = elem_type(red);
        if (!one_batch) {
          wide.push_back(for_loop(
              decl("", "int", "ln", lit(0)), ln < kCpuLanes, pre_inc(ln),
              {assign(per_lane("cc", red)[ln],
                      per_lane("cs", red)[ln] * cast(t, lit(per)))}));
          continue;
        }
        // The block's mean estimate: its lanes' sums, in lane order.
        const Expr cc = acc(red, "cc");
        wide.push_back(decl("", t, print(cc), cast(t, lit(0))));
        wide.push_back(for_loop(decl("", "int", "ln", lit(0)), ln < kCpuLanes,
                                pre_inc(ln),
                                {assign(cc, per_lane("cs", red)[ln], "+=")}));
        wide.push_back(assign(cc, cast(t, lit(per)), "*="));
      }
      lanes_loop(MomentStage::Devs, [&](Stmts &one, NodeId red) {
        if (!moments(red))
          return;
        if (!one_batch)
          one.push_back(decl("const", elem_type(red), print(acc(red, "cc")),
                             per_lane("cc", red)[ln]));
        one.push_back(decl("", "auto &", print(acc(red, "cq")), per_lane("cq", red)[ln]));
        one.push_back(decl("", "auto &", print(acc(red, "cr")), per_lane("cr", red)[ln]));
      });
      Stmts push;
      for (NodeId red : reds) {
        if (!moments(red))
          continue;
        const std::string t = elem_type(red);
        const Expr inv = cast(t, lit(per));
        if (!one_batch) {
          const Expr cr = per_lane("cr", red)[ln];
          wide.push_back(for_loop(
              decl("", "int", "ln", lit(0)), ln < kCpuLanes, pre_inc(ln),
              {accumulate("sum_sq_dev", blkv(red)[ln], blkv(red)[ln],
                          moments_of_batch(acc_type(red), t,
                                           per_lane("cc", red)[ln], cr,
                                           per_lane("cq", red)[ln], inv,
                                           lit(count)))}));
          continue;
        }
        // The lanes' squares and deviations summed in lane order, the
        // block's moments pushed as one partial.
        const Expr bq = acc(red, "bq"), br = acc(red, "br");
        wide.push_back(decl("", t, print(bq), cast(t, lit(0))));
        wide.push_back(decl("", t, print(br), cast(t, lit(0))));
        wide.push_back(for_loop(decl("", "int", "ln", lit(0)), ln < kCpuLanes,
                                pre_inc(ln),
                                {assign(bq, per_lane("cq", red)[ln], "+="),
                                 assign(br, per_lane("cr", red)[ln], "+=")}));
        push.push_back(decl("", acc_type(red), print(blk(red)),
                            moments_of_batch(acc_type(red), t, acc(red, "cc"),
                                             br, bq, inv, lit(count))));
      }
      if (one_batch) {
        push_lane(push);
        wide.push_back(block(std::move(push)));
      }
    }
    if (!one_batch) {
      Stmts pushed;
      for (NodeId red : reds)
        pushed.push_back(decl("", acc_type(red), print(blk(red)), blkv(red)[ln]));
      push_lane(pushed);
      wide.push_back(for_loop(decl("", "int", "ln", lit(0)), ln < kCpuLanes,
                              pre_inc(ln), std::move(pushed)));
    }
    Stmts blocks;
    blocks.push_back(decl("const", "int64_t", "re",
                          select(rb + kCpuBlock < to, rb + kCpuBlock, to)));
    blocks.push_back(if_then(unit && re - rb == lit(kCpuBlock), std::move(wide),
                             std::move(lanes)));
    b.push_back(for_loop(decl("", "int64_t", "rb", from), rb < to,
                         binary("+=", rb, lit(kCpuBlock)), std::move(blocks)));
    // Latest blocks first: each earlier partial goes on the left, the
    // order argmax's first-index rule needs.
    Stmts fold;
    for (NodeId red : reds)
      fold.push_back(accumulate(op_name(red), acc(red), stk(red)[l], acc(red)));
    b.push_back(for_loop(
        decl("", "int", "l", lit(0)), l < 64, pre_inc(l),
        {if_then(binary("&", binary(">>", nblk, l), lit(1)), std::move(fold))}));
    out.push_back(block(std::move(b)));
  }

  Function cpu_rows(const std::string &ctx) const {
    Function f;
    f.flavour = "cpu_rows";
    f.name = name("cpu_rows");
    Stmts &b = f.body;
    cpu_unpack(b, ctx);
    Stmts rowb;
    row_setup(rowb);
    prologue(rowb);
    for (int p = 0; p < k.passes; ++p) {
      rowb.push_back(comment("pass " + std::to_string(p)));
      declare_accumulators(rowb, p);
      cpu_pass(rowb, p, lit(0), R);
      epilogue(rowb, p, reduced_store({}));
    }
    b.push_back(for_loop(decl("", "int64_t", "row", v("begin")),
                         row < v("end"), pre_inc(row), std::move(rowb)));
    return f;
  }

  Function cpu_split(const std::string &ctx,
                     const std::vector<ScratchEntry> &layout) const {
    Function f;
    f.flavour = "cpu_split";
    f.name = name("cpu_split");
    Stmts &b = f.body;
    cpu_unpack(b, ctx);
    b.push_back(decl("", "char *", "partials", v("c").field("partials")));
    const Expr w = v("w"), splits = sp.field("splits"), s = v("s"),
               lo = v("lo"), hi = v("hi"), chunk = sp.field("chunk");
    Stmts work;
    work.push_back(decl("const", "int64_t", "row", w / splits));
    work.push_back(decl("const", "int64_t", "split", w % splits));
    row_setup(work);
    prologue(work);
    partial_pointers(work, layout);
    for (int launch = 0; launch <= last_launch(); ++launch) {
      Stmts pass;
      for (int q = 0; q < launch && q < k.passes; ++q) {
        declare_accumulators(pass, q);
        for (NodeId r : reductions_in(q))
          pass.push_back(for_loop(decl("", "int64_t", "s", lit(0)), s < splits,
                                  pre_inc(s),
                                  {combine(r, acc(r), part(r)[row * splits + s])}));
        epilogue(pass, q, reduced_store(split == lit(0)), q + 1 == launch);
      }
      if (launch < k.passes) {
        declare_accumulators(pass, launch);
        pass.push_back(decl("const", "int64_t", "lo", split * chunk));
        pass.push_back(decl("const", "int64_t", "hi",
                            select(lo + chunk < R, lo + chunk, R)));
        cpu_pass(pass, launch, lo, hi);
        for (NodeId r : reductions_in(launch))
          pass.push_back(assign(part(r)[row * splits + split], acc(r)));
      }
      work.push_back(if_then(sp.field("pass") == lit(launch), std::move(pass)));
    }
    b.push_back(for_loop(decl("", "int64_t", "w", v("begin")), w < v("end"),
                         pre_inc(w), std::move(work)));
    return f;
  }
};

} // namespace

Kernel lower_reduction_cpu(const ir::Graph &g, const sched::Kernel &k, int ki,
                           const std::string &symbol, const std::string &dt) {
  RedCpu red{{g, k, ki, symbol, dt}};
  Kernel kl;
  kl.index = ki;
  kl.target = Target::Cpu;
  kl.reduction = true;
  kl.prefix = kernel_name(symbol, ki, dt);
  kl.header = "@" + g.name + ", kernel " + std::to_string(ki) +
              " (reduction), " + dt + " variant, CPU";
  kl.scratch = scratch_layout(g, k);
  kl.ctx = kernel_params(g, k, "");
  kl.ctx.push_back({"kiln::RowSpace", "sp"});
  kl.ctx.push_back(
      {"kiln::RowStrides<" + std::to_string(red.nout + red.nin) + ">", "st"});
  kl.ctx.push_back({"char *", "partials"});
  const std::string ctx = kl.prefix + "_ctx";
  kl.functions.push_back(red.cpu_rows(ctx));
  kl.functions.push_back(red.cpu_split(ctx, kl.scratch));
  return kl;
}

} // namespace kiln::codegen
