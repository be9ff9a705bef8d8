// The model of a fused reduction kernel that every flavour of it shares
// (private to codegen; see schedule.h for the model's terms): which values
// each pass computes, which a rows kernel keeps in registers, the
// statements of one element of a pass and of the epilogue after a pass's
// reductions, a row's base offsets, the partials' pointers. The flavours
// (LowerReduceCuda.cpp, LowerReduceCpu.cpp) say how they loop over rows,
// slots and tiles around these.
#pragma once

#include "Lower.h"

#include <llvm/ADT/STLExtras.h>

#include <cstdio>
#include <functional>
#include <set>

namespace kiln::codegen::reduce {

using ir::NodeId;
using ir::Op;
using sched::Role;
using namespace low;

// Where output o's element goes; `store` wraps its Store statement (in the
// guard of the thread that writes a row's reduced value).
using StoreFn = std::function<Stmt(size_t output, Stmt store)>;
using DestFn = std::function<Expr(size_t output)>;
using LoadFn = std::function<Expr(size_t input)>;

inline Expr v(const std::string &name) { return var(name); }
inline Expr numbered(const char *prefix, size_t i) {
  return var(prefix + std::to_string(i));
}
// 1 / cn, a batch's element count, in t: by MUFU.RCP in f32 (2^-22), as
// what it scales is an estimate (a batch's mean, about which the
// deviations are taken) or small (their sum over cn).
inline Expr count_reciprocal(const std::string &t, Expr cn) {
  return t == "float" ? call("__fdividef", {lit("1.0f"), cast(t, cn)})
                      : cast(t, lit(1)) / cast(t, cn);
}

// A batch's moments (kiln::scalar::MomentAcc, `type`) from its cn
// elements' deviations d from an estimate c of their mean (the corrected
// two-pass algorithm): shift c, mean sum(d) / cn, m2 sum(d^2) -
// sum(d)^2 / cn; cr = sum(d), cq = sum(d^2), inv = 1 / cn.
inline Expr moments_of_batch(const std::string &type, const std::string &t, Expr c,
                   Expr cr, Expr cq, Expr inv, Expr cn) {
  return typed_braces(type, {c, cr * inv, cq - cr * cr * inv, cast(t, cn)});
}

struct RedModel {
  const ir::Graph &g;
  const sched::Kernel &k;
  int ki;
  const std::string &symbol;
  const std::string &variant; // the variant's name
  size_t nout = k.outputs.size(), nin = k.inputs.size();
  // Register mode may keep costly full values for later passes (kept); the
  // f32 rows kernel of 8 slots a thread recomputes them instead.
  bool keep_values = true;

  // Names the kernels share.
  const Expr sp = v("sp"), st = v("st"), R = v("R"), V = v("V"),
             row = v("row"), e = v("e"), j = v("j"), lane = v("lane"),
             tpr = v("tpr"), smem = v("kiln_smem"), split = v("split");

  std::string name(const std::string &flavour) const {
    return kernel_name(symbol, ki, variant, flavour);
  }
  const char *op_name(NodeId r) const { return ir::op_info(g.node(r).op).name; }
  // A reduction whose accumulator pairs each value with its index.
  bool indexed(NodeId r) const { return ir::reduces_to_index(g.node(r).op); }
  // The type elements are combined in, and the accumulator's type.
  std::string elem_type(NodeId r) const {
    const ir::Node &n = g.node(r);
    return compute_type(indexed(r) ? g.node(n.operands[0]).type.dtype
                                   : n.type.dtype);
  }
  // A reduction whose accumulator is a MomentAcc (sum_sq_dev).
  bool moments(NodeId r) const { return ir::reduces_moments(g.node(r).op); }
  std::string acc_type(NodeId r) const {
    if (indexed(r))
      return "kiln::scalar::ArgAcc<" + elem_type(r) + ">";
    if (moments(r))
      return "kiln::scalar::MomentAcc<" + elem_type(r) + ">";
    return elem_type(r);
  }
  // The reduction's result in its complete accumulator.
  Expr result(NodeId r) const {
    return indexed(r) ? acc(r).field("index")
                      : moments(r) ? acc(r).field("m2") : acc(r);
  }
  Expr init(NodeId r) const {
    return call("kiln::scalar::init_" + std::string(op_name(r)) + "<" +
                    elem_type(r) + ">",
                {});
  }
  Expr acc(NodeId r, const std::string &prefix = "acc") const {
    return var(prefix + std::to_string(r));
  }
  Stmt combine(NodeId r, Expr into, Expr value, std::string text = "") const {
    return accumulate(op_name(r), into, into, std::move(value), std::move(text));
  }
  Expr part(NodeId r) const { return numbered("part", r); }

  std::vector<NodeId> reductions_in(int pass) const {
    std::vector<NodeId> rs;
    for (NodeId r : k.reductions)
      if (k.phase[r] - 1 == pass)
        rs.push_back(r);
    return rs;
  }
  bool full(NodeId id) const { return k.role[id] == Role::Full; }
  // Does pass `pass` write a full output?
  bool writes_full(int pass) const {
    for (size_t o = 0; o < nout; ++o)
      if (out_full(o) && out_phase(o) == pass)
        return true;
    return false;
  }
  // A full value the kernel computes, not one it reads (an argument, or a
  // value an earlier kernel wrote).
  bool computed(NodeId id) const {
    return full(id) && ir::is_pointwise(g.node(id).op) &&
           !llvm::is_contained(k.inputs, id);
  }
  // Register mode keeps a full value in registers for later passes when a
  // later-phase value uses it and recomputing it would cost more than a
  // few cheap ops (its cone has a transcendental or a division): softmax
  // keeps exp(x - m), layer norm recomputes x - m from x.
  bool costly(NodeId id) const {
    const ir::Node &n = g.node(id);
    if (!computed(id))
      return false;
    if (ir::is_expensive(n.op))
      return true;
    for (NodeId o : n.operands)
      if (costly(o))
        return true;
    return false;
  }
  // (Keeping also a value a reduction of its own pass reduces, masked
  // softmax's where(mask, s * scale, -1e9), cut its instructions by 12 % but
  // took 84 registers where it had 64: 29 % occupancy instead of 46 %, and
  // 0.243 ms instead of 0.212 on an H100. Recomputing it is cheaper. On
  // an H200 with the mask's bools held packed (kiln::gen::Held: 80
  // registers), ptxas gives keeping it 110, and keeping it instead of exp
  // 119; keeping neither it nor exp, 58 registers and 25 % more
  // instructions, ran 0.173 ms against 0.156;
  // bench/results/2026-11-30-h200-masked.md.)
  bool kept(NodeId id) const {
    if (!keep_values || !computed(id) || !costly(id))
      return false;
    for (NodeId c : k.nodes)
      if (full(c) && k.need[c] != 0 && k.phase[c] > k.phase[id] &&
          llvm::is_contained(g.node(c).operands, id))
        return true;
    return false;
  }
  // The full values register mode computes in `pass`: those of its phase
  // the pass needs, and what they need that is not kept from earlier.
  std::set<NodeId> pass_nodes(int pass) const {
    std::set<NodeId> nodes;
    std::function<void(NodeId)> visit = [&](NodeId id) {
      if (!computed(id) || nodes.count(id) ||
          (k.phase[id] < pass && kept(id)))
        return;
      nodes.insert(id);
      for (NodeId o : g.node(id).operands)
        visit(o);
    };
    for (NodeId r : reductions_in(pass))
      visit(g.node(r).operands[0]);
    for (size_t o = 0; o < nout; ++o)
      if (out_full(o) && out_phase(o) == pass)
        visit(k.outputs[o]);
    for (NodeId id : k.nodes)
      if (k.phase[id] == pass && kept(id))
        visit(id);
    return nodes;
  }
  // Register mode keeps in registers, for the whole row, the inputs its
  // first pass reads; an input only later passes read (a weight, a bias)
  // is read in its pass, from the cache when it is the same for every row:
  // holding it too cost layer norm a quarter of its occupancy on an H200.
  bool cached_input(size_t i) const { return needed(k.inputs[i], 0); }
  bool needed(NodeId id, int pass) const { return (k.need[id] >> pass) & 1; }
  int out_phase(size_t o) const { return k.phase[k.outputs[o]]; }
  bool out_full(size_t o) const { return full(k.outputs[o]); }
  std::string storage(NodeId id) const {
    return storage_type(g.node(id).type.dtype);
  }
  std::string vec_type(NodeId id) const {
    return "kiln::gen::Vec<" + storage(id) + ", V>";
  }
  // An input held for a row's passes (bool's bytes stay packed).
  std::string held_type(NodeId id) const {
    return "kiln::gen::Held<" + storage(id) + ", V>";
  }

  // The last launch of split mode (a reduced output may be ready only
  // after the last pass).
  int last_launch() const {
    int last = k.passes - 1;
    for (size_t o = 0; o < nout; ++o)
      if (!out_full(o))
        last = std::max(last, out_phase(o));
    return last;
  }

  ValueMap row_values() const {
    ValueMap values;
    for (auto [i, s] : llvm::enumerate(k.scalars))
      values[s] = numbered("s", i);
    for (NodeId id : k.nodes)
      if (!full(id))
        values[id] = value_var(id);
    return values;
  }

  // A full f32 (or f16/bf16) division by a per-row value (softmax's
  // exp(x - m) / sum): the epilogue that makes the divisor ready computes
  // its reciprocal once per row, rcp<id>, and each element multiplies by it
  // (at most one more rounding of f32, as Triton's approximate division;
  // a division costs a dozen instructions, which bound 16-bit softmax).
  // f64 keeps its divisions.
  bool divides_by_row(NodeId id) const {
    const ir::Node &n = g.node(id);
    if (!full(id) || n.op != Op::Div || k.role[n.operands[1]] != Role::Reduced ||
        llvm::StringRef(compute_type(n.type.dtype)) != "float")
      return false;
    for (NodeId o : n.operands)
      if (g.node(o).type.dtype != n.type.dtype)
        return false;
    return true;
  }
  Expr reciprocal(NodeId id) const { return numbered("rcp", id); }
  // compute_node, with a division by a per-row value as a product.
  Stmt compute(NodeId id, const ValueMap &values) const {
    if (!divides_by_row(id))
      return compute_node(g, id, values);
    const ir::Node &n = g.node(id);
    return low::compute(value_type(n), print(value_var(id)), "mul",
                        {operand(g, n.operands[0], "float", values),
                         reciprocal(id)},
                        id, describe_node(g, n));
  }

  // Operand j's base offset b<j> and its stride along R, rs<j>.
  Expr base(size_t op) const { return numbered("b", op); }
  Expr rstride(size_t op) const { return numbered("rs", op); }
  size_t in_op(size_t i) const { return nout + i; } // RowStrides operand

  // `const int64_t b<op> = ...` for each of `ops`: their offsets of `row`
  // from one kiln::row_bases_at, which walks the outer dims (when it has
  // to) once for them all.
  void bases_decl(Stmts &b, const std::vector<size_t> &ops) const {
    if (ops.empty())
      return;
    uint64_t want = 0;
    for (size_t op : ops)
      want |= uint64_t(1) << op;
    char mask[32];
    std::snprintf(mask, sizeof mask, "0x%llxull", (unsigned long long)want);
    b.push_back(decl_array("int64_t", "bases", std::to_string(nout + nin)));
    b.push_back(eval(call(std::string("kiln::row_bases_at<") + mask + ">",
                          {sp, st, v("row"), v("bases")})));
    for (size_t op : ops)
      b.push_back(decl("const", "int64_t", print(base(op)), v("bases")[int64_t(op)]));
  }

  // `const int64_t rs<op> = ...`: operand op's stride along R.
  Stmt rstride_decl(size_t op) const {
    return decl("const", "int64_t", print(rstride(op)), st.field("s")[int64_t(op)][1]);
  }
  // Each operand's base offset b<j> and R stride rs<j> for `row`.
  void row_setup(Stmts &b) const {
    std::vector<size_t> all;
    for (size_t op = 0; op < nout + nin; ++op)
      all.push_back(op);
    bases_decl(b, all);
    for (size_t op : all)
      b.push_back(rstride_decl(op));
  }

  // Values that do not depend on the row's elements: sizes and scalar math.
  void prologue(Stmts &b) const {
    ValueMap values = row_values();
    for (NodeId id : k.nodes) {
      if (k.role[id] != Role::None)
        continue;
      if (g.node(id).op == Op::ReduceSize)
        b.push_back(decl("const", "int64_t", print(value_var(id)), R,
                         describe_node(g, g.node(id))));
      else
        b.push_back(compute_node(g, id, values));
    }
  }

  void declare_accumulators(Stmts &b, int pass,
                            const std::string &prefix = "acc") const {
    for (NodeId r : reductions_in(pass))
      b.push_back(decl("", acc_type(r), print(acc(r, prefix)), init(r)));
  }

  // One element of pass `pass`: its inputs' values, the full values the
  // pass needs, accumulation, and the full outputs of this phase.
  //
  // With `carried` (register mode), each full value is computed once, in
  // the pass of its phase, and a value a later pass uses is kept per
  // element in registers (t<id>[k * V + j]) instead of being recomputed
  // from the inputs: softmax computes exp once, not twice.
  //
  // `stage` splits a pass's moments reductions (sum_sq_dev) into the two
  // halves of a batch's corrected two-pass moments (cuda_moments_batch):
  // Sums adds their operands into cs<r> (the pass's other reductions and
  // outputs as usual); Devs adds only their deviations from the batch's
  // estimate cc<r> of its mean, d, into cr<r>, and d * d into cq<r>.
  enum class MomentStage { Whole, Sums, Devs };
  void element(Stmts &b, int pass, const LoadFn &load, const DestFn &dest,
               Expr index, const std::string &prefix,
               bool carried = false,
               MomentStage stage = MomentStage::Whole) const {
    ValueMap values = row_values();
    std::set<NodeId> computed;
    if (carried)
      computed = pass_nodes(pass);
    // Values this pass uses: computed here, or (carried) from registers.
    auto uses = [&](NodeId id) {
      if (!carried)
        return needed(id, pass);
      for (NodeId c : computed)
        if (llvm::is_contained(g.node(c).operands, id))
          return true;
      for (NodeId r : reductions_in(pass))
        if (g.node(r).operands[0] == id)
          return true;
      for (size_t o = 0; o < nout; ++o)
        if (k.outputs[o] == id && out_full(o) && out_phase(o) == pass)
          return true;
      return false;
    };
    const Expr slot = v("k") * V + j;
    if (carried)
      for (NodeId id : k.nodes)
        if (kept(id) && k.phase[id] < pass && uses(id))
          values[id] = numbered("t", id)[slot];
    for (auto [i, in] : llvm::enumerate(k.inputs)) {
      if (!uses(in))
        continue;
      b.push_back(load_input(g, in, load(i)));
      values[in] = value_var(in);
    }
    for (NodeId id : k.nodes) {
      if (carried ? !computed.count(id) : !full(id) || !needed(id, pass))
        continue;
      b.push_back(compute(id, values));
      values[id] = value_var(id);
      if (carried && kept(id) && k.phase[id] == pass)
        b.push_back(assign(numbered("t", id)[slot], value_var(id)));
    }
    for (NodeId r : reductions_in(pass)) {
      if (stage == MomentStage::Devs && !moments(r))
        continue;
      // argmax's ties and order are those of the values eager stored.
      const NodeId x = g.node(r).operands[0];
      Expr val = operand(g, x, elem_type(r).c_str(),
                         indexed(r) && rounds_in_eager(g, x)
                             ? rounded(g, x, values)
                             : values);
      if (indexed(r))
        val = typed_braces(acc_type(r), {val, index});
      if (stage == MomentStage::Sums && moments(r)) {
        b.push_back(accumulate("sum", acc(r, "cs"), acc(r, "cs"), val,
                               describe_node(g, g.node(r)) + ": the batch's sum"));
      } else if (stage == MomentStage::Devs) {
        const Expr d = acc(r, "cd");
        b.push_back(decl("const", elem_type(r), print(d), val - acc(r, "cc")));
        b.push_back(assign(acc(r, "cq"), d * d, "+="));
        b.push_back(assign(acc(r, "cr"), d, "+="));
      } else {
        b.push_back(combine(r, acc(r, prefix), val, describe_node(g, g.node(r))));
      }
    }
    if (stage == MomentStage::Devs)
      return;
    for (size_t o = 0; o < nout; ++o)
      if (out_full(o) && out_phase(o) == pass)
        b.push_back(store_node(g, k.outputs[o], values, dest(o)));
  }

  // How the epilogue writes reduced output o's value: to out<o>[b<o>],
  // under `guard` (the one thread or work item of the row that writes).
  StoreFn reduced_store(Expr guard) const {
    return [guard](size_t, Stmt s) {
      return guard ? if_then(guard, {std::move(s)}) : s;
    };
  }

  // After the reductions of `pass` are complete: their results, the
  // per-row values they make ready, and the reduced outputs among them.
  void epilogue(Stmts &b, int pass, const StoreFn &store,
                bool write_outputs = true) const {
    ValueMap values = row_values();
    for (NodeId r : reductions_in(pass))
      b.push_back(decl("const", value_type(g.node(r)), print(value_var(r)),
                       result(r),
                       describe_node(g, g.node(r))));
    for (NodeId id : k.nodes)
      if (k.role[id] == Role::Reduced && !ir::is_reduction(g.node(id).op) &&
          k.phase[id] == pass + 1)
        b.push_back(compute_node(g, id, values));
    for (NodeId id : k.nodes)
      if (divides_by_row(id) && k.phase[g.node(id).operands[1]] == pass + 1) {
        const NodeId d = g.node(id).operands[1];
        b.push_back(low::compute("float", print(reciprocal(id)), "div",
                                 {lit("1.0f"), operand(g, d, "float", values)},
                                 id, "1 / " + print(value_var(d))));
      }
    for (size_t o = 0; o < nout && write_outputs; ++o)
      if (!out_full(o) && out_phase(o) == pass + 1)
        b.push_back(store(o, store_node(g, k.outputs[o], values,
                                        numbered("out", o)[base(o)])));
  }

  // Each reduction's partials in the scratch buffer, at the offsets the
  // host's scratch_bytes adds up.
  void partial_pointers(Stmts &b, const std::vector<ScratchEntry> &layout) const {
    Expr poff = v("poff");
    b.push_back(decl("", "size_t", "poff", lit(0)));
    for (const ScratchEntry &s : layout) {
      b.push_back(decl("", s.acc_type + " *", print(part(s.reduction)),
                       call("reinterpret_cast<" + s.acc_type + " *>",
                            {v("partials") + poff})));
      b.push_back(assign(poff, scratch_bytes({s}, sp), "+="));
    }
  }


};

} // namespace kiln::codegen::reduce
