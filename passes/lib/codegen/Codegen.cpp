// compile_function: specialise per dtype, optimise, schedule, emit; and the
// per-TU assembly of every function's CUDA and host code.
#include "Lower.h"

#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallSet.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;

static constexpr size_t kMaxVariants = 64;

// The variants to compile: each dtype of Options::dtypes for the unpinned
// tensor arguments (one, the first pin's, when every argument is pinned),
// times each combination of the pinned arguments' dtypes. None, and why in
// `error`, past kMaxVariants.
static std::vector<Variant> variant_keys(const FunctionSpec &spec,
                                         const Options &opts,
                                         std::string &error) {
  const ir::Graph &g = spec.graph;
  auto conds = condition_args(g);
  std::vector<std::pair<int, std::vector<DType>>> pins;
  bool unpinned = false;
  for (NodeId id : g.args()) {
    const ir::Node &n = g.node(id);
    if (n.op != Op::Input)
      continue;
    if (is_pinned(spec, n.arg_index))
      pins.push_back({n.arg_index, spec.arg_dtypes[size_t(n.arg_index)]});
    else
      unpinned |= !conds.contains(id);
  }
  // Each variant is a set of kernels in the binary and a pipeline run at
  // build time: past a limit, ask for narrower lists instead.
  size_t count = unpinned || pins.empty() ? opts.dtypes.size() : 1;
  std::string product = std::to_string(count);
  for (const auto &p : pins) {
    count *= p.second.size();
    product += " x " + std::to_string(p.second.size());
  }
  if (count > kMaxVariants) {
    error = std::to_string(count) + " dtype variants (" + product +
            ") exceed Kiln's limit of " + std::to_string(kMaxVariants) +
            ": narrow \"dtypes=\" or a [[kiln::dtype]] list";
    return {};
  }
  std::vector<Variant> keys;
  const int dispatch = dispatch_index(spec);
  for (DType dt : unpinned || pins.empty() ? opts.dtypes
                                           : std::vector<DType>{DType::f32}) {
    std::vector<std::vector<std::pair<int, DType>>> combos = {{}};
    for (const auto &[arg, dts] : pins) {
      std::vector<std::vector<std::pair<int, DType>>> next;
      for (const auto &c : combos)
        for (DType p : dts) {
          next.push_back(c);
          next.back().push_back({arg, p});
        }
      combos = std::move(next);
    }
    for (auto &c : combos) {
      Variant v;
      v.pinned = std::move(c);
      v.dtype = dt;
      std::string name, label, pinned;
      if (unpinned || pins.empty())
        name = label = dtype_name(dt);
      for (auto [arg, p] : v.pinned) {
        name += (name.empty() ? "" : "_") + std::string(dtype_name(p));
        pinned += (pinned.empty() ? "" : ", ") + arg_name(g, arg) + ": " +
                  dtype_name(p);
        if (arg == dispatch)
          v.dtype = p;
      }
      v.name = name;
      v.label = label.empty() ? "(" + pinned + ")"
                : pinned.empty() ? label
                                 : label + " (" + pinned + ")";
      keys.push_back(std::move(v));
    }
  }
  return keys;
}

// Whether variant v takes a call whose tensor arguments have these dtypes
// (by arg_index).
static bool covers(const FunctionSpec &spec, const Variant &v,
                   const std::map<int, DType> &dts) {
  const ir::Graph &g = spec.graph;
  auto conds = condition_args(g);
  for (NodeId id : g.args()) {
    const ir::Node &n = g.node(id);
    if (n.op != Op::Input)
      continue;
    DType want = conds.contains(id) ? DType::b8 : v.dtype;
    for (auto [arg, p] : v.pinned)
      if (arg == n.arg_index)
        want = p;
    DType have = dts.at(n.arg_index);
    if (have != want && !(attention_mask_only(g, n.arg_index) &&
                          !is_pinned(spec, n.arg_index) && have == DType::b8))
      return false;
  }
  return true;
}

// The variants the dtype profile adds (FunctionSpec::observed_dtypes): one
// per combination seen that names every tensor argument and that no
// variant in `keys` covers, each argument pinned; `notes` says why one is
// not added. In the order seen, up to kMaxVariants in all.
static void observed_keys(const FunctionSpec &spec, std::vector<Variant> &keys,
                          std::vector<std::string> &notes) {
  const ir::Graph &g = spec.graph;
  auto conds = condition_args(g);
  const int dispatch = dispatch_index(spec);
  for (const auto &combo : spec.observed_dtypes) {
    std::map<int, DType> dts;
    std::string seen;
    for (const auto &[name, dt] : combo)
      seen += (seen.empty() ? "'" : ", '") + name + "': " + dtype_name(dt);
    bool ok = true;
    for (NodeId id : g.args()) {
      const ir::Node &n = g.node(id);
      if (n.op != Op::Input)
        continue;
      const std::string name = profile_name(g, n.arg_index);
      auto it = llvm::find_if(combo, [&](const auto &p) { return p.first == name; });
      if (it == combo.end()) {
        notes.push_back("(" + seen + ") from the dtype profile names no '" +
                        name + "': not compiled (a profile of other code)");
        ok = false;
        break;
      }
      if (conds.contains(id) && it->second != DType::b8) {
        notes.push_back("(" + seen + ") from the dtype profile: '" + name +
                        "' is a where condition, which must be b8: not "
                        "compiled (eager raises)");
        ok = false;
        break;
      }
      dts[n.arg_index] = it->second;
    }
    if (!ok || dts.size() != combo.size()) {
      if (ok)
        notes.push_back("(" + seen + ") from the dtype profile names an "
                        "argument this function does not have: not compiled "
                        "(a profile of other code)");
      continue;
    }
    if (llvm::any_of(keys, [&](const Variant &v) { return covers(spec, v, dts); }))
      continue;
    if (keys.size() >= kMaxVariants) {
      notes.push_back("(" + seen + ") from the dtype profile: not compiled, "
                      "the function has Kiln's limit of " +
                      std::to_string(kMaxVariants) + " variants");
      continue;
    }
    Variant v;
    v.name = "p";
    for (auto [arg, dt] : dts) {
      v.pinned.push_back({arg, dt});
      v.name += std::string("_") + dtype_name(dt);
      if (arg == dispatch)
        v.dtype = dt;
    }
    if (dispatch < 0 || !dts.count(dispatch))
      v.dtype = dts.begin()->second;
    v.label = "(" + seen + ") from the dtype profile";
    v.observed = true;
    keys.push_back(std::move(v));
  }
}

// The captured graph with every tensor argument given its dtype in
// variant v, then the whole pass pipeline.
static llvm::Expected<ir::Graph>
specialise(const FunctionSpec &spec, const Variant &v, const Options &opts,
           std::vector<std::pair<std::string, std::string>> &dumps) {
  const ir::Graph &captured = spec.graph;
  ir::Graph g = captured;
  auto conds = condition_args(g);
  for (auto [id, n] : llvm::enumerate(g.nodes))
    if (n.op == Op::Input) {
      DType dt = conds.contains(NodeId(id)) ? DType::b8 : v.dtype;
      for (auto [arg, p] : v.pinned)
        if (arg == n.arg_index)
          dt = p;
      n.type = ir::Type::tensor(dt, n.type.shape);
    }
  passes::PassOptions po;
  if (!spec.dtype_from.empty()) {
    llvm::Expected<ir::Graph> typed = passes::infer_types(g, po);
    if (!typed)
      return typed.takeError();
    for (auto [arg, value] : spec.dtype_from)
      for (ir::Node &n : g.nodes)
        if (n.op == Op::Input && n.arg_index == arg)
          n.type = ir::Type::tensor(typed->node(value).type.dtype, n.type.shape);
  }
  po.unsafe_math = opts.unsafe_math;
  int step = 0;
  return passes::run_pipeline(
      g, po, [&](llvm::StringRef pass, const ir::Graph &after) {
        char prefix[8];
        snprintf(prefix, sizeof prefix, "%02d-", ++step);
        dumps.emplace_back(v.name + "/" + prefix + pass.str(),
                           ir::print(after));
      });
}

// Why an argument updated in place (FunctionSpec::into) has a dtype other
// than its new value's in the specialised graph g; "" when none has.
static std::string in_place_dtypes(const FunctionSpec &spec, const ir::Graph &g) {
  for (size_t j = 0; j < spec.into.size() && j < g.outputs.size(); ++j) {
    if (spec.into[j] < 0)
      continue;
    for (const ir::Node &n : g.nodes)
      if (n.op == Op::Input && n.arg_index == spec.into[j]) {
        const DType to = n.type.dtype, from = g.node(g.outputs[j]).type.dtype;
        if (to != from)
          return "an in-place update of " + arg_name(g, n.arg_index) + " (" +
                 dtype_name(to) + ") by a result of dtype " + dtype_name(from) +
                 (can_cast(from, to) ? " needs a cast the graph does not "
                                       "make"
                                     : " raises in eager");
      }
  }
  return "";
}

static std::string check_outputs(const ir::Graph &g, ir::Loc &where) {
  if (g.outputs.empty())
    return "it returns no tensor";
  for (NodeId o : g.outputs) {
    const ir::Node &n = g.node(o);
    if (n.type.scalar || n.op == Op::Constant || n.op == Op::ScalarInput) {
      where = n.loc;
      return "it returns a value that is not a tensor of its arguments";
    }
  }
  for (const ir::Node &n : g.nodes)
    if (n.op == Op::Input)
      return "";
  return "it has no tensor argument";
}

// How a remark says a variant was not compiled, before the reason.
static std::string no_variant(const Variant &v) {
  return v.observed ? "not compiled for " + v.label + ": "
                    : "no " + v.label + " variant: ";
}

FunctionCode compile_function(const FunctionSpec &spec, const Options &opts) {
  FunctionCode fc;
  fc.symbol = spec.symbol;
  fc.user_name = spec.user_name;
  if (std::string err = verify(spec.graph); !err.empty()) {
    fc.error = "internal error: captured graph is malformed: " + err;
    fc.error_loc = spec.loc;
    return fc;
  }

  // The backward first: whether the entry records compiled calls.
  BackwardCode backward;
  if (opts.backward) {
    backward = compile_backward(spec, opts);
    fc.backward.status = backward.why.empty() ? "compiled" : backward.why;
    if (!backward.why.empty())
      fc.remarks.push_back(
          {backward.why_loc,
           "no compiled backward: " + backward.why +
               "; a call autograd records runs the original body"});
  }
  Options eopts = opts;
  eopts.backward = opts.backward && backward.why.empty();

  std::vector<Variant> variants;
  std::string first_error;
  ir::Loc first_error_loc = spec.loc;
  std::string too_many;
  std::vector<Variant> keys = variant_keys(spec, opts, too_many);
  if (!too_many.empty()) {
    fc.error = "cannot compile '" + spec.user_name + "': " + too_many;
    fc.error_loc = spec.loc;
    return fc;
  }
  std::vector<std::string> profile_notes;
  observed_keys(spec, keys, profile_notes);
  for (const std::string &note : profile_notes)
    fc.remarks.push_back({spec.loc, note});
  for (Variant &key : keys) {
    auto g = specialise(spec, key, opts, fc.pass_dumps);
    if (!g) {
      // A pass error knows the node it failed on; report it there.
      std::string msg;
      ir::Loc at = spec.loc;
      llvm::handleAllErrors(
          g.takeError(),
          [&](const passes::PassError &e) {
            msg = e.message;
            if (e.loc.valid())
              at = e.loc;
          },
          [&](const llvm::ErrorInfoBase &e) { msg = e.message(); });
      fc.remarks.push_back(
          {at, no_variant(key) + msg});
      if (first_error.empty()) {
        first_error = msg;
        first_error_loc = at;
      }
      continue;
    }
    // A variant of the dtype profile may give an argument updated in
    // place (`p += x`) another dtype than the result. Capture writes each
    // in-place result through to_into, which casts it as eager does (or
    // fails the variant where eager raises); a graph without one would
    // hand back the wrong dtype, so such a variant is not compiled.
    if (key.observed)
      if (std::string why = in_place_dtypes(spec, *g); !why.empty()) {
        fc.remarks.push_back({spec.loc, no_variant(key) + why});
        continue;
      }
    ir::Loc where = spec.loc;
    if (std::string err = check_outputs(*g, where); !err.empty()) {
      fc.error = "cannot compile '" + spec.user_name + "': " + err;
      fc.error_loc = where;
      return fc;
    }
    llvm::Expected<sched::KernelPlan> plan = sched::schedule(*g);
    if (!plan && key.observed) {
      fc.remarks.push_back(
          {spec.loc, no_variant(key) +
                         llvm::toString(plan.takeError())});
      continue;
    }
    if (!plan) {
      fc.error_loc = spec.loc;
      llvm::handleAllErrors(
          plan.takeError(),
          [&](const passes::PassError &e) {
            fc.error = "cannot compile '" + spec.user_name + "': " + e.message;
            if (e.loc.valid())
              fc.error_loc = e.loc;
          },
          [&](const llvm::ErrorInfoBase &e) {
            fc.error = "cannot compile '" + spec.user_name + "': " + e.message();
          });
      return fc;
    }
    sched::plan_in_place(*g, spec.into, *plan);
    key.graph = std::move(*g);
    key.plan = std::move(*plan);
    variants.push_back(std::move(key));
  }
  if (variants.empty()) {
    fc.error = "cannot compile '" + spec.user_name + "': " +
               (first_error.empty() ? "no dtype to specialise for" : first_error);
    fc.error_loc = first_error_loc;
    return fc;
  }

  // The plan, once per distinct kernel structure.
  std::string last;
  for (const Variant &v : variants) {
    std::string d = sched::describe(v.graph, v.plan);
    fc.plan += "[" + v.label + "] ";
    fc.plan += d == last ? "same plan as above\n" : d;
    last = d;
  }

  low::Program program = lower_function(spec, variants, eopts);
  for (const low::Variant &v : program.variants)
    for (const low::Kernel &k : v.kernels)
      for (const std::string &n : k.entry_points())
        fc.kernel_names.push_back(n);
  fc.has_cuda_kernels = !fc.kernel_names.empty();
  if (fc.has_cuda_kernels)
    fc.cuda = low::print_cuda(program);
  fc.host = low::print_host(program);
  fc.lowered = low::print_text(program);
  if (eopts.backward) {
    // The backward's code goes first: the entry calls <symbol>_autograd.
    fc.host = backward.host + fc.host;
    fc.cuda += backward.cuda;
    fc.has_cuda_kernels |= backward.code.has_cuda_kernels ||
                           backward.forward.has_cuda_kernels;
    for (std::string &n : backward.forward.kernel_names)
      fc.kernel_names.push_back(std::move(n));
    for (std::string &n : backward.code.kernel_names)
      fc.kernel_names.push_back(std::move(n));
    if (!backward.saved.empty())
      fc.plan += "forward saving for backward (compiled as '" +
                 spec.user_name + " (forward, saving for backward)'):\n" +
                 backward.forward.plan;
    fc.plan += "backward (" + std::to_string(backward.grads) +
               (backward.grads == 1 ? " gradient" : " gradients") +
               ", compiled as '" + spec.user_name + " (backward)'):\n" +
               backward.code.plan;
    fc.lowered += backward.code.lowered;
  }
  fc.kernels = kernel_infos(spec, variants);
  fc.guards = guard_infos(program);
  fc.graphs = variant_graphs(variants);

  // Remarks: what was fused, and what the compiled code assumes.
  const Variant &v0 = variants.front();
  size_t captured = 0, fused = 0;
  for (const ir::Node &n : spec.graph.nodes)
    captured += ir::op_info(n.op).arity != 0;
  for (auto [ki, k] : llvm::enumerate(v0.plan.kernels))
    if (!v0.plan.is_unfused(int(ki)))
      fused += k.nodes.size();
  // Scalar ops the host computes before the launches (sched::is_host_scalar).
  size_t host = 0;
  for (NodeId id = 0; id < NodeId(v0.graph.nodes.size()); ++id)
    host += sched::is_host_scalar(v0.graph, id);
  // Layout ops the host makes (views, read through their strides).
  size_t views = 0;
  for (const ir::Node &n : v0.graph.nodes)
    views += ir::is_view(n.op);
  auto ops = [](size_t n) {
    return std::to_string(n) + (n == 1 ? " op" : " ops");
  };
  std::string dts;
  for (const Variant &v : variants)
    dts += (dts.empty() ? "" : ", ") + v.label;
  size_t nk = v0.plan.launched();
  // Which kernels are library calls: GEMMs, attention, concatenations.
  struct Library {
    const char *one, *many;
    size_t n = 0;
  } libs[] = {{"library GEMM", "library GEMMs"},
              {"attention kernel", "attention kernels"},
              {"concatenation", "concatenations"},
              {"copy into an argument", "copies into arguments"}};
  for (const sched::Kernel &k : v0.plan.kernels)
    if (k.kind == sched::Kernel::Kind::Product && !v0.plan.copies_nothing(k)) {
      const ir::Op op = v0.graph.node(k.product).op;
      ++libs[ir::is_gemm(op)               ? 0
             : op == ir::Op::Attention ? 1
             : op == ir::Op::Cat       ? 2
                                       : 3]
            .n;
    }
  auto article = [](const char *one) {
    return std::string(one[0] == 'a' ? "an " : "a ") + one;
  };
  std::string kinds;
  for (const Library &l : libs) {
    if (!l.n)
      continue;
    if (l.n == nk) // every kernel is of this kind
      kinds = nk == 1 ? article(l.one) : std::string("all ") + l.many;
    else if (kinds.empty()) // the first kind says "is"/"are"
      kinds = l.n == 1 ? "one is " + article(l.one)
                       : std::to_string(l.n) + " are " + l.many;
    else
      kinds += ", " + (l.n == 1 ? "1 " + article(l.one)
                                : std::to_string(l.n) + " " + l.many);
  }
  if (!kinds.empty())
    kinds = " (" + kinds + ")";
  std::string apart =
      v0.plan.multi.empty()
          ? ""
          : " (" + std::to_string(v0.plan.launched_apart()) +
                " when the outputs' shapes differ)";
  fc.remarks.push_back(
      {spec.loc, "compiled '" + spec.user_name + "': " + ops(captured) +
                     " captured" +
                     (fused + host + views != captured
                          ? ", " + ops(fused + host + views) +
                                " after decomposition and simplification"
                          : "") +
                     ", fused into " + std::to_string(nk) +
                     (nk == 1 ? " kernel" : " kernels") + apart +
                     kinds +
                     " (" + dts + "; " +
                     (opts.cuda ? "CUDA and CPU" : "CPU only") + ")" +
                     (host ? ", " + std::to_string(host) + " scalar " +
                                 (host == 1 ? "op" : "ops") + " on the host"
                           : "") +
                     (views ? ", " + std::to_string(views) + " layout " +
                                  (views == 1 ? "op" : "ops") +
                                  " made on the host"
                            : "") +
                     (opts.cuda_graphs && opts.cuda && nk > 0
                          ? "; a call on the GPU replays its kernels as one "
                            "CUDA graph (mode=" +
                                std::string(opts.autotune ? "max-autotune"
                                                          : "reduce-overhead") +
                                ")"
                          : "") +
                     (opts.autotune && opts.cuda && libs[0].n > 0
                          ? "; its GEMMs on the GPU are autotuned at their "
                            "first call (mode=max-autotune)"
                          : "")});
  // Each layout op, at its line: the host makes it and kernels read it
  // through its strides (reshape and contiguous copy where eager does).
  for (const ir::Node &n : v0.graph.nodes) {
    if (!ir::is_view(n.op))
      continue;
    const ViewKind k = ir::view_kind(n.op);
    std::string m =
        std::string(ir::op_info(n.op).name) + " of " +
        operand_name(v0.graph, n.operands[0]) +
        (k == ViewKind::Contiguous
             ? " is made on the host: the tensor itself when it is contiguous, "
               "else a copy, as eager"
         : k == ViewKind::Reshape
             ? " is made on the host: a view where the strides allow (else a "
               "copy, as eager); kernels read it through its strides"
             : " is a view the host makes (no copy); kernels read it through "
               "its strides");
    fc.remarks.push_back({n.loc.valid() ? n.loc : spec.loc, m});
  }
  // Each matrix product, at its line: what its GEMM's epilogue does, or
  // that it has none.
  {
    const ir::Graph &g = v0.graph;
    for (const sched::Kernel &k : v0.plan.kernels) {
      if (k.kind != sched::Kernel::Kind::Product)
        continue;
      const ir::Node &pn = g.node(k.product);
      if (pn.op == ir::Op::Attention) {
        const ir::Node &mask = g.node(pn.operands[3]);
        fc.remarks.push_back(
            {pn.loc.valid() ? pn.loc : spec.loc,
             "attention (softmax(q @ k^T * scale + mask) @ v) is one fused "
             "kernel (a "
             "flash-attention kernel on CUDA; on the CPU, rows of online "
             "softmax): the scores are not written to memory; mask: " +
                 (mask.type.scalar ? std::string("none")
                  : g.node(pn.operands[3]).op == ir::Op::Input &&
                          attention_mask_only(spec.graph,
                                              g.node(pn.operands[3]).arg_index)
                      ? operand_name(g, pn.operands[3]) +
                            " (b8: false masks a key out; or of q's dtype: "
                            "added to the scores)"
                      : operand_name(g, pn.operands[3]) +
                            (mask.type.dtype == DType::b8
                                 ? " (bool)"
                                 : " (added to the scores)"))});
        continue;
      }
      if (pn.op == ir::Op::Store) {
        const ir::Node &dst = g.node(pn.operands[1]);
        const std::string into =
            ir::is_view(dst.op) ? std::string("a ") + ir::op_info(dst.op).name +
                                      " of " + operand_name(g, dst.operands[0])
                                : operand_name(g, pn.operands[1]);
        fc.remarks.push_back(
            {pn.loc.valid() ? pn.loc : spec.loc,
             "copy_ of " + operand_name(g, pn.operands[2]) + " into " + into +
                 " writes the argument in place (" +
                 (v0.plan.store_of(pn.operands[2]) >= 0
                      ? "the kernel computing it writes it there, through "
                        "the destination's strides, where the shapes agree; "
                        "else the runtime's copy"
                      : "the runtime's copy, as eager") +
                 "), after the kernels it reads and before those that "
                 "read the argument again"});
        continue;
      }
      if (pn.op == ir::Op::Cat && v0.plan.read_in_pieces(k.product)) {
        fc.remarks.push_back(
            {pn.loc.valid() ? pn.loc : spec.loc,
             "cat of " + input_names(g, k) +
                 ": attention reads the tensors where they are (one pass "
                 "over the keys and values on CUDA), so " +
                 (llvm::is_contained(g.outputs, k.product)
                      ? "the result, an output, is written by the attention "
                        "kernel as it reads them (no copy of its own)"
                      : "the result is never in memory (no copy)") +
                 (ir::cat_dim(g, pn) >= 0 && !pn.type.shape.ranked
                      ? "; where dim " + std::to_string(ir::cat_dim(g, pn)) +
                            " is not the key dim (-2) at run time, attention "
                            "joins them first"
                      : std::string())});
        continue;
      }
      if (pn.op == ir::Op::Cat) {
        const std::string copied = operand_names(g, v0.plan.cat_tensors(k, false)),
                          in_place = operand_names(g, v0.plan.cat_tensors(k, true));
        fc.remarks.push_back(
            {pn.loc.valid() ? pn.loc : spec.loc,
             "cat of " + input_names(g, k) +
                 (in_place.empty()
                      ? " is the runtime's (one copy per tensor into the "
                        "result): work before it writes its tensors, work "
                        "after it reads the result"
                      : copied.empty()
                            ? ": the kernels computing its tensors write "
                              "them into the result (no copy)"
                            : ": " + in_place +
                                  " written into the result by the kernels "
                                  "computing them, " + copied +
                                  " copied by the runtime")});
        continue;
      }
      std::string m = std::string(ir::op_info(pn.op).name) +
                      " is a library GEMM (cuBLASLt on CUDA, OpenBLAS on the "
                      "CPU)";
      std::vector<std::string> parts;
      if (k.bias >= 0)
        parts.push_back("adds " + operand_name(g, k.bias) +
                        " as its bias (one value per column) or C");
      if (k.addend >= 0)
        parts.push_back("adds " + operand_name(g, k.addend) + " as C");
      if (k.act >= 0)
        parts.push_back(std::string("applies ") +
                        ir::op_info(g.node(k.act).op).name +
                        (g.node(k.act).loc.valid()
                             ? " (line " + std::to_string(g.node(k.act).loc.line) + ")"
                             : ""));
      if (parts.empty())
        m += " with no epilogue";
      else {
        m += " whose epilogue";
        for (auto [i, p] : llvm::enumerate(parts))
          m += (i == 0 ? " " : i + 1 == parts.size() ? ", then " : ", ") + p;
      }
      fc.remarks.push_back({pn.loc.valid() ? pn.loc : spec.loc, m});
    }
  }
  // One remark per guard, from the list explain.json shows too.
  for (const GuardInfo &gi : fc.guards) {
    std::string m = "guard: " + gi.check;
    for (auto [i, dt] : llvm::enumerate(gi.variants))
      m += (i ? ", " : " (") + dt;
    if (!gi.variants.empty())
      m += gi.variants.size() == 1 ? " variant)" : " variants)";
    fc.remarks.push_back({spec.loc, std::move(m)});
  }
  if (eopts.backward) {
    // What the backward fused (its own guards are the forward's kinds,
    // checked again on its arguments: not repeated here).
    for (const Remark &r : backward.code.remarks)
      if (!llvm::StringRef(r.message).starts_with("guard: "))
        fc.remarks.push_back(r);
    fc.backward.saved = backward.saved;
    fc.backward.assumptions = backward.assumptions;
    fc.backward.gradients = backward.grads;
    std::string kept = "the tensor arguments";
    for (const std::string &v : backward.saved)
      kept += ", " + v;
    fc.remarks.push_back(
        {spec.loc,
         "backward: saves " + kept +
             (backward.saved.empty()
                  ? ""
                  : " (written by the forward beside its output when "
                    "autograd records)") +
             "; recomputes every other value its derivatives read, inside "
             "its own kernels; a gradient broadcast wider than its "
             "argument is summed by autograd"});
    for (const KernelInfo &k : backward.forward.kernels)
      fc.kernels.push_back(k);
    for (const std::string &a : backward.assumptions)
      fc.remarks.push_back(
          {spec.loc, "backward: assumes " + a +
                         " (checked when autograd records a call; where it "
                         "fails, the original body runs)"});
    for (KernelInfo &k : backward.code.kernels)
      fc.kernels.push_back(std::move(k));
  }
  return fc;
}

std::string cuda_translation_unit(const std::vector<FunctionCode> &fns) {
  std::string s = "// Generated by Kiln: fused CUDA kernels. Rebuild instead of editing.\n"
                  "#include <kiln/generated.cuh>\n\n";
  for (const FunctionCode &f : fns)
    if (f.error.empty())
      s += f.cuda;
  return s;
}

// Bytes as a string literal of 3-digit octal escapes (never ambiguous,
// unlike \x, and much faster for the compiler than a brace list).
static void write_bytes(llvm::raw_ostream &os, const std::vector<uint8_t> &b) {
  static const char digits[] = "01234567";
  for (size_t i = 0; i < b.size(); ++i) {
    if (i % 32 == 0)
      os << (i ? "\"\n    \"" : "    \"");
    os << '\\' << digits[b[i] >> 6] << digits[(b[i] >> 3) & 7]
       << digits[b[i] & 7];
  }
  os << "\"";
}

std::string host_translation_unit(const std::vector<FunctionCode> &fns,
                                  const std::vector<uint8_t> &fatbin,
                                  const std::string &module_id,
                                  const std::string &no_cuda_reason) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "// Generated by Kiln for " << module_id
     << ": guards, launches, fused CPU loops.\n"
        "// Rebuild instead of editing.\n"
        "#include <kiln/generated.h>\n"
        "#include <kiln/attention.h>\n"
        "#include <kiln/autograd.h>\n"
        "#include <kiln/join.h>\n"
        "#include <kiln/matmul.h>\n"
        "#include <kiln/rt.h>\n"
        "#include <kiln/scalar.h>\n\n"
        "#include <algorithm>\n#include <cstdint>\n#include <vector>\n\n"
        "namespace {\n";
  if (!fatbin.empty()) {
    os << "// nvcc's fatbin for the kernels below (" << fatbin.size()
       << " bytes).\nalignas(16) const char kiln_fatbin[] =\n";
    write_bytes(os, fatbin);
    os << ";\nkiln::rt::KernelModule kiln_module{kiln_fatbin, \""
       << llvm::sys::path::filename(module_id) << "\"};\n"
       << "constexpr bool kiln_have_cuda = true;\n";
  } else {
    // No fatbin: CUDA is off or nvcc missing (a reason says which), or no
    // function needs a kernel of its own (library calls only: CUDA runs).
    os << "kiln::rt::KernelModule kiln_module{nullptr, \""
       << llvm::sys::path::filename(module_id) << "\"};\n"
       << "constexpr bool kiln_have_cuda = "
       << (no_cuda_reason.empty() ? "true" : "false") << ";\n";
  }
  os << "[[maybe_unused]] constexpr const char *kiln_no_cuda_reason = \""
     << llvm::StringRef(no_cuda_reason.empty() ? "no CUDA kernels were built"
                                               : no_cuda_reason)
     << "\";\n";
  os << "} // namespace\n\n";
  for (const FunctionCode &f : fns)
    if (f.error.empty())
      os << f.host;
  return s;
}

} // namespace kiln::codegen
