// The fast-path functions: guards, then one launch per fused kernel.
//
// Everything the generated kernels assume is checked here, at run time, in
// a few comparisons: tensors defined, on one device, of the dtypes the
// variant was specialised for; shapes broadcast. A failed check returns
// false through rt::guard_failed (counted, logged with the reason) and the
// caller runs the original body. Each check is one GuardCheck statement
// that carries its own description, so explain.json and the remarks list
// exactly what the host code checks. Layout is not a guard but a choice:
// dense and aligned operands take the vectorised kernel, anything else the
// strided one.
#include "Lower.h"

#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>

#include <set>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;
using namespace low;

namespace {

Expr nm(const std::string &n) { return var(n); }
Expr arg(int index) { return nm("a" + std::to_string(index)); }
Expr arg_of(const ir::Graph &g, NodeId id) { return arg(g.node(id).arg_index); }
// The argument a store (or a chain of stores) writes into: its layout,
// sizes and name are the store's.
NodeId stored_arg(const ir::Graph &g, NodeId x) {
  while (g.node(x).op == Op::Store)
    x = g.node(x).operands[0];
  return x;
}
// The tensor holding node id's value: an argument, or t<id>.
Expr tensor_of(const ir::Graph &g, NodeId id) {
  return g.node(id).op == Op::Input ? arg_of(g, id) : nm("t" + std::to_string(id));
}
Expr dtype_expr(DType dt) { return nm(std::string("kiln::DType::") + dtype_name(dt)); }
Stmt fail_if(Expr cond, std::string check, std::string message) {
  return guard_check(std::move(cond), {std::move(check), std::move(message)});
}

// What a failing dtype guard records for the dtype profile: every tensor
// argument's name and dtype (kiln::rt::note_dtypes).
static Expr dtype_note(const FunctionSpec &spec, const ir::Graph &g) {
  std::vector<Expr> names, ptrs;
  for (NodeId id : g.args())
    if (g.node(id).op == Op::Input) {
      names.push_back(str_lit(profile_name(g, g.node(id).arg_index)));
      ptrs.push_back(addr(arg_of(g, id)));
    }
  return call("kiln::rt::note_dtypes",
              {str_lit(spec.symbol), nm("kFn"), braces(std::move(names)),
               braces(std::move(ptrs))});
}

// fail_if for a check of dtypes: a failure also records them.
static Stmt dtype_fail_if(const FunctionSpec &spec, const ir::Graph &g,
                          Expr cond, std::string check, std::string message) {
  Stmt s = fail_if(std::move(cond), std::move(check), std::move(message));
  s.on_failure = dtype_note(spec, g);
  return s;
}

// The tensor arguments and reduced values a full value of reduction kernel
// k is computed from (through full pointwise nodes).
void full_leaves(const sched::Kernel &k, const ir::Graph &g, NodeId id,
                 std::set<NodeId> &inputs, bool &reduced) {
  const ir::Node &n = g.node(id);
  if (llvm::is_contained(k.inputs, id)) {
    inputs.insert(id);
    return;
  }
  if (k.role[id] == sched::Role::Reduced) {
    reduced = true;
    return;
  }
  if (k.role[id] == sched::Role::Full)
    for (NodeId o : n.operands)
      full_leaves(k, g, o, inputs, reduced);
}

struct Host {
  const FunctionSpec &spec;
  const Variant &v;
  const Options &opts;
  const ir::Graph &g = v.graph;
  std::vector<std::string> names = ir::value_names(v.graph);
  const Expr dev = var("dev");
  Stmts body;

  std::string kname(int ki, const std::string &flavour) const {
    return kernel_name(spec.symbol, ki, v.name, flavour);
  }
  std::string ctx_name(int ki) const { return kname(ki, "") + "_ctx"; }
  std::string prefix(int ki) const {
    return kernel_name(spec.symbol, ki, v.name);
  }

  NodeId stored_arg(NodeId x) const { return codegen::stored_arg(g, x); }
  // The shape of a kernel's input: an argument's, or the Dims the host
  // computed for the earlier kernel that writes it (before any launch).
  Expr sizes_of(NodeId in) const {
    in = stored_arg(in);
    if (g.node(in).op == Op::Input)
      return method(arg_of(g, in), "sizes");
    if (ir::is_view(g.node(in).op))
      return layout_of(in).field("sizes");
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
      if (v.plan.is_fused(int(ki)) || !llvm::is_contained(k.outputs, in))
        continue;
      std::string n = std::to_string(ki);
      if (k.kind != sched::Kernel::Kind::Reduction)
        return nm("shape" + n);
      return nm((k.role[in] == sched::Role::Full ? "full"
                 : k.drop[in]                    ? "drop"
                                                 : "keep") +
                n);
    }
    return method(tensor_of(g, in), "sizes"); // not reached: some kernel writes it
  }
  // ---- layout ops ----

  // The kernel that writes value id (not the multi-output alternative), or
  // -1 for an argument.
  int writer_of(NodeId id) const {
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels))
      if (!v.plan.is_fused(int(ki)) && llvm::is_contained(k.outputs, id))
        return int(ki);
    return -1;
  }
  // A view's base: the argument or written value its chain starts from.
  NodeId base_of(NodeId id) const {
    while (ir::is_view(g.node(id).op))
      id = g.node(id).operands[0];
    return id;
  }
  Expr layout_of(NodeId id) const { return nm("L" + std::to_string(id)); }
  // The integer arguments of view node id, as the host has them.
  Expr view_args(NodeId id) const {
    if (ir::view_kind(g.node(id).op) == ViewKind::Broadcast) {
      // The shape its tensors broadcast to (kiln::gen::broadcast_of).
      std::vector<Expr> shapes;
      for (NodeId a : g.node(id).operands)
        shapes.push_back(addr(sizes_of(a)));
      return call("kiln::gen::broadcast_of", {braces(std::move(shapes))});
    }
    std::vector<Expr> es;
    for (NodeId a : llvm::ArrayRef<NodeId>(g.node(id).operands).drop_front()) {
      const ir::Node &an = g.node(a);
      es.push_back(an.op == Op::Constant      ? lit(int64_t(an.constant))
                   : an.op == Op::ScalarInput ? arg_of(g, a)
                                              : value_var(a));
    }
    return braces(std::move(es));
  }
  Expr view_kind(NodeId id) const {
    return nm(std::string("kiln::ViewKind::") + ir::op_info(g.node(id).op).enum_name);
  }
  std::vector<bool> laid_out = std::vector<bool>(g.nodes.size(), false),
                    made = std::vector<bool>(g.nodes.size(), false);
  // f(id, node) for each view not `done` yet whose base is an argument or a
  // value of a kernel before `upto`, in order.
  template <class F> void views_ready(int upto, std::vector<bool> &done, F f) {
    for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id) {
      const NodeId x = g.node(id).operands.empty() ? -1 : g.node(id).operands[0];
      if (!ir::is_view(g.node(id).op) || done[id] ||
          writer_of(base_of(id)) >= upto || !scalars_ready(id, upto) ||
          (ir::is_view(g.node(x).op) && !done[x])) // a view of a view: after it
        continue;
      done[id] = true;
      f(id, g.node(id));
    }
  }

  // ---- host scalars ----

  // The host scalars some kernel or layout op takes, and what they are
  // computed from; their values once computed (value_var).
  std::vector<bool> needed = std::vector<bool>(g.nodes.size(), false);
  std::vector<bool> computed = std::vector<bool>(g.nodes.size(), false);
  ValueMap values = ValueMap();
  // Whether host scalar id reads a shape (a `size`, directly or through
  // what it is computed from): it waits for that shape.
  bool reads_shape(NodeId id) const {
    const ir::Node &n = g.node(id);
    if (n.op == Op::Size)
      return true;
    return llvm::any_of(n.operands, [&](NodeId o) { return reads_shape(o); });
  }
  // Whether the shapes the operands of node id (a view or host scalar)
  // read are known once kernels before `upto` have their spaces: an
  // argument's, a laid-out view's, an earlier kernel's output's.
  bool scalars_ready(NodeId id, int upto) const {
    const bool like = ir::is_view(g.node(id).op) &&
                      ir::view_kind(g.node(id).op) == ViewKind::Broadcast;
    for (NodeId o : llvm::ArrayRef<NodeId>(g.node(id).operands)
                        .drop_front(ir::is_view(g.node(id).op) ? 1 : 0)) {
      const ir::Node &on = g.node(o);
      if (like) { // a tensor whose shape it reads
        if (ir::is_view(on.op) ? !laid_out[o]
                               : on.op != Op::Input && writer_of(o) >= upto)
          return false;
        continue;
      }
      if (on.op == Op::Size) {
        NodeId x = on.operands[0];
        if (ir::is_view(g.node(x).op) ? !laid_out[x]
                                      : g.node(x).op != Op::Input &&
                                            writer_of(x) >= upto)
          return false;
      } else if (!scalars_ready(o, upto)) {
        return false;
      }
    }
    return true;
  }
  // Computes host scalar id (and what it needs) unless done.
  void compute_scalar(NodeId id) {
    const ir::Node &n = g.node(id);
    if (computed[id] || n.op == Op::Constant || n.op == Op::ScalarInput)
      return;
    computed[id] = true;
    for (NodeId o : n.operands)
      if (n.op != Op::Size)
        compute_scalar(o);
    if (n.op == Op::Size)
      body.push_back(decl(
          "const", "int64_t", print(value_var(id)),
          n.dims.empty()
              ? call("kiln::gen::numel_of", {sizes_of(n.operands[0])})
              : call("kiln::gen::dim_size",
                     {sizes_of(n.operands[0]), lit(n.dims[0])})));
    else
      body.push_back(compute_node(g, id, values));
    values[id] = value_var(id);
  }
  // Their layouts, before the first launch: a view eager would raise on
  // runs the original body instead.
  void view_layouts(int upto) {
    views_ready(upto, laid_out, [&](NodeId id, const ir::Node &n) {
      if (ir::view_kind(n.op) != ViewKind::Broadcast) // else tensors
        for (NodeId a : llvm::ArrayRef<NodeId>(n.operands).drop_front())
          compute_scalar(a);
      NodeId x = stored_arg(n.operands[0]);
      Expr in = g.node(x).op == Op::Input ? method(arg_of(g, x), "layout")
                : ir::is_view(g.node(x).op)
                    ? layout_of(x)
                    : call("kiln::gen::dense_layout", {sizes_of(x)});
      body.push_back(decl("", "kiln::Layout", print(layout_of(id))));
      std::string what = std::string(ir::op_info(n.op).name) + " of " +
                         operand_name(g, x) +
                         (!n.name.empty() ? " ('" + n.name + "')"
                          : n.loc.valid()
                              ? " at line " + std::to_string(n.loc.line)
                              : "");
      body.push_back(fail_if(
          lnot(call("kiln::gen::view_layout",
                    {view_kind(id), in, view_args(id), layout_of(id)})),
          what + " is valid for these shapes",
          what + " raises in eager for these shapes"));
    });
  }
  // The views whose base is in memory once kernels before `upto` ran.
  void make_views(int upto) {
    views_ready(upto, made, [&](NodeId id, const ir::Node &n) {
      body.push_back(decl("const", "kiln::Tensor", print(tensor_of(g, id)),
                          call("kiln::gen::view",
                               {view_kind(id), tensor_of(g, n.operands[0]),
                                view_args(id)})));
    });
  }

  // `{&a0.sizes(), &keep0}` for a kernel's inputs.
  Expr size_list(const sched::Kernel &k) const {
    std::vector<Expr> es;
    for (NodeId in : k.inputs)
      es.push_back(addr(sizes_of(in)));
    return braces(std::move(es));
  }
  // `{&t4, &a0, &a1}`: outputs then inputs, the operand order of OffsetCalc.
  Expr operand_list(const sched::Kernel &k) const {
    std::vector<Expr> es;
    for (NodeId o : k.outputs)
      es.push_back(addr(tensor_of(g, o)));
    for (NodeId i : k.inputs)
      es.push_back(addr(tensor_of(g, i)));
    return braces(std::move(es));
  }
  // `{out0_, in0, in1}` and their element sizes `{2, 2, 4}`: the pointers
  // in OffsetCalc's operand order.
  Expr op_pointers(const sched::Kernel &k) const {
    std::vector<Expr> es;
    for (size_t j = 0; j < k.outputs.size(); ++j)
      es.push_back(nm("out" + std::to_string(j) + "_"));
    for (size_t i = 0; i < k.inputs.size(); ++i)
      es.push_back(nm("in" + std::to_string(i)));
    return braces(std::move(es));
  }
  Expr op_bytes(const sched::Kernel &k) const {
    std::vector<Expr> es;
    for (NodeId o : k.outputs)
      es.push_back(lit(element_size(g.node(o).type.dtype)));
    for (NodeId i : k.inputs)
      es.push_back(lit(element_size(g.node(i).type.dtype)));
    return braces(std::move(es));
  }
  std::string kernel_label(size_t ki) const {
    return "kernel " + std::to_string(ki) + ": ";
  }

  // Pointers and scalars as lvalues of the kernels' parameter types:
  // in<i>, out<j>_, s<i>; and the kernel's argument array.
  void pointers(Stmts &b, const sched::Kernel &k) const {
    for (auto [i, in] : llvm::enumerate(k.inputs)) {
      std::string t = storage_type(g.node(in).type.dtype);
      b.push_back(decl("const", t + " *", "in" + std::to_string(i),
                       method(tensor_of(g, in), "data<const " + t + ">")));
    }
    for (auto [j, o] : llvm::enumerate(k.outputs)) {
      std::string t = storage_type(g.node(o).type.dtype);
      b.push_back(decl("", t + " *", "out" + std::to_string(j) + "_",
                       method(tensor_of(g, o), "data<" + t + ">")));
    }
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      b.push_back(decl("", storage_type(g.node(sc).type.dtype),
                       "s" + std::to_string(i),
                       g.node(sc).op == Op::ScalarInput ? arg_of(g, sc)
                                                        : value_var(sc)));
  }
  std::vector<Expr> pointer_args(const sched::Kernel &k) const {
    std::vector<Expr> es;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      es.push_back(addr(nm("in" + std::to_string(i))));
    for (size_t j = 0; j < k.outputs.size(); ++j)
      es.push_back(addr(nm("out" + std::to_string(j) + "_")));
    for (size_t i = 0; i < k.scalars.size(); ++i)
      es.push_back(addr(nm("s" + std::to_string(i))));
    return es;
  }
  // The CPU context's initialiser: the pointers and scalars, then `rest`.
  Expr ctx_init(const sched::Kernel &k, std::vector<Expr> rest) const {
    std::vector<Expr> es;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      es.push_back(nm("in" + std::to_string(i)));
    for (size_t j = 0; j < k.outputs.size(); ++j)
      es.push_back(nm("out" + std::to_string(j) + "_"));
    for (size_t i = 0; i < k.scalars.size(); ++i)
      es.push_back(nm("s" + std::to_string(i)));
    for (Expr &e : rest)
      es.push_back(std::move(e));
    return braces(std::move(es));
  }
  Stmt args_array(std::vector<Expr> es) const {
    Stmt s = decl_array("void *", "args", "");
    s.value = braces(std::move(es));
    return s;
  }
  Stmt cpu_launch(const std::string &fn, Expr n, Expr grain) const {
    return eval(call("kiln::rt::cpu_launch",
                     {str_lit(fn), std::move(n), std::move(grain), addr(nm(fn)),
                      addr(nm("c"))}));
  }
  Stmt gpu_launch(Expr kernel, Expr grid, Expr block) const {
    return launch({std::move(kernel), dev, std::move(grid), std::move(block),
                   nm("args")});
  }
  // A pointwise kernel's launch over `items` threads: blocks sized to
  // spread a small call over every multiprocessor
  // (kiln::gen::pointwise_block; `sms_` declared before).
  Stmt spread_launch(Expr kernel, Expr items) const {
    Expr per = call("kiln::gen::pointwise_block", {nm("items_"), nm("sms_")});
    Stmts b;
    b.push_back(decl("const", "int64_t", "items_", std::move(items)));
    b.push_back(decl("const", "unsigned", "block_", std::move(per)));
    b.push_back(gpu_launch(std::move(kernel),
                           call("kiln::gen::blocks", {nm("items_"), nm("block_")}),
                           nm("block_")));
    return block(std::move(b));
  }

  // ---- guards ----

  void dtype_guards(NodeId dispatch) {
    for (NodeId id : g.args()) {
      const ir::Node &n = g.node(id);
      // Pinned arguments: the entry checked them to pick this variant.
      if (n.op != Op::Input || id == dispatch ||
          llvm::any_of(v.pinned,
                       [&](auto p) { return p.first == n.arg_index; }))
        continue;
      std::string like = n.type.dtype == v.dtype
                             ? " like " + arg_name(g, g.node(dispatch).arg_index)
                             : "";
      std::string an = arg_name(g, n.arg_index), dt = dtype_name(n.type.dtype);
      // Only attention's mask: b8 or the variant's dtype, the runtime's
      // kernel takes either (the variant's code does not depend on it).
      if (attention_mask_only(spec.graph, n.arg_index)) {
        const Expr d = method(arg_of(g, id), "dtype");
        body.push_back(dtype_fail_if(
            spec, g, d != dtype_expr(DType::b8) && d != dtype_expr(n.type.dtype),
            an + " is b8 or " + dt + like + " (an attention mask)",
            an + " is neither b8 nor " + dt + like));
        continue;
      }
      body.push_back(dtype_fail_if(spec, g,
                                   method(arg_of(g, id), "dtype") !=
                                       dtype_expr(n.type.dtype),
                                   an + " is " + dt + like,
                                   an + " is not " + dt + like));
    }
  }

  // Shapes eager raises on that the kernels do not check: values the
  // function computes and drops (dce), arguments of decomposed ops (the
  // norms' weights). Computed here; inputs eager would raise on run the
  // original body, which raises.
  void shape_checks() {
    auto ref = [](int o) { return nm("k" + std::to_string(o)); };
    for (auto [i, c] : llvm::enumerate(g.checks)) {
      std::string k = "k" + std::to_string(i);
      if (c.op == Op::Input) {
        body.push_back(decl("const", "kiln::Dims &", k,
                            method(arg(c.arg_index), "sizes")));
        continue;
      }
      if (ir::is_pointwise(c.op) && c.operands.size() == 1) {
        body.push_back(decl("const", "kiln::Dims &", k, ref(c.operands[0])));
        continue;
      }
      if (ir::op_info(c.op).form == ir::CompositeForm::NORM) {
        // A check of its arguments; its result has its input's shape (for
        // checks of values computed from it).
        if (c.raises) {
          std::vector<Expr> rest;
          for (size_t j = 1; j < c.operands.size(); ++j)
            rest.push_back(addr(ref(c.operands[j])));
          body.push_back(guard_check(
              lnot(call("kiln::rt::norm_shapes",
                    {ref(c.operands[0]), braces(std::move(rest))})),
              shape_check_guard(c)));
        }
        body.push_back(decl("[[maybe_unused]] const", "kiln::Dims &", k,
                            ref(c.operands[0])));
        continue;
      }
      body.push_back(decl("", "kiln::Dims", k));
      Expr check;
      if (ir::is_pointwise(c.op)) {
        std::vector<Expr> ops;
        for (int o : c.operands)
          ops.push_back(addr(ref(o)));
        check = call("kiln::rt::broadcast_shapes", {braces(std::move(ops)), nm(k)});
      } else {
        std::vector<Expr> dims;
        for (int64_t d : c.dims)
          dims.push_back(lit(d));
        check = call("kiln::rt::reduced_shape",
                     {ref(c.operands[0]), braces(std::move(dims)),
                      lit(c.keepdim ? "true" : "false"),
                      lit(ir::empty_reduction_raises(c.op) ? "true" : "false"),
                      nm(k)});
      }
      if (c.raises)
        body.push_back(guard_check(lnot(check), shape_check_guard(c)));
      else // known valid at compile time: only its shape is wanted
        body.push_back(eval(cast("void", check)));
    }
  }

  void pointwise_space(size_t ki, const sched::Kernel &k) {
    std::string shape = "shape" + std::to_string(ki);
    body.push_back(decl("", "kiln::Dims", shape));
    std::string in = input_names(g, k);
    body.push_back(fail_if(
        lnot(call("kiln::rt::broadcast_shapes", {size_list(k), nm(shape)})),
        kernel_label(ki) + "the shapes of " + in + " broadcast together",
        "the shapes of " + in + " do not broadcast"));
  }

  // A product kernel's result shape: the operands fit (eager raises
  // otherwise) and the epilogue's addends broadcast to the product's shape
  // (else eager's result is larger: its original body runs).
  // kiln::gen::Product of a product node.
  static Expr product_kind(const ir::Node &pn) {
    return nm(pn.op == Op::Linear ? "kiln::gen::Product::Linear"
              : pn.op == Op::Bmm  ? "kiln::gen::Product::Bmm"
                                  : "kiln::gen::Product::Matmul");
  }

  // A host scalar operand's value: a literal, an argument, or the variable
  // the host computed it in.
  Expr host_scalar(NodeId id) const {
    const ir::Node &n = g.node(id);
    if (n.op == Op::Constant)
      return lit(literal(n.constant, n.type.dtype));
    return n.op == Op::ScalarInput ? arg_of(g, id) : value_var(id);
  }

  // Attention's result shape: the operands fit and the mask broadcasts to
  // the scores (eager raises otherwise: its original body runs).
  void attention_space(size_t ki, const sched::Kernel &k) {
    const std::string shape = "shape" + std::to_string(ki);
    const ir::Node &pn = g.node(k.product);
    const bool masked = !g.node(pn.operands[3]).type.scalar;
    body.push_back(decl("", "kiln::Dims", shape));
    std::string ops = operand_name(g, pn.operands[0]) + ", " +
                      operand_name(g, pn.operands[1]) + " and " +
                      operand_name(g, pn.operands[2]);
    body.push_back(fail_if(
        lnot(call("kiln::gen::attention_shape",
                  {sizes_of(pn.operands[0]), sizes_of(pn.operands[1]),
                   sizes_of(pn.operands[2]),
                   masked ? addr(sizes_of(pn.operands[3])) : nm("nullptr"),
                   call("bool", {host_scalar(pn.operands[4])}), nm(shape)})),
        kernel_label(ki) + "the shapes of " + ops +
            " fit attention" +
            (masked ? ", and the mask " + operand_name(g, pn.operands[3]) +
                          " broadcasts to the scores"
                    : std::string()),
        "the shapes of " + ops + " do not fit attention" +
            (masked ? ", or the mask does not broadcast to the scores" : "")));
    const ir::AttentionProducts products = ir::attention_products(g, pn);
    if (products == ir::AttentionProducts::None)
      return;
    // Written as q @ k^T and p @ v: matmul's batch rules as well (key and
    // value heads the query's or 1), or bmm's (3-D, one batch).
    const bool bmm = products == ir::AttentionProducts::Bmm;
    body.push_back(fail_if(
        lnot(call("kiln::gen::attention_products_shape",
                  {nm(bmm ? "kiln::gen::Product::Bmm"
                          : "kiln::gen::Product::Matmul"),
                   sizes_of(pn.operands[0]), sizes_of(pn.operands[1]),
                   sizes_of(pn.operands[2])})),
        kernel_label(ki) + "the shapes of " + ops + " fit the two " +
            (bmm ? "bmms" : "matmuls") + " the attention was written as",
        "the shapes of " + ops + " do not fit the " +
            (bmm ? "bmms" : "matmuls") + " the attention was written as"));
  }

  // cat's result shape: the tensors fit (eager raises otherwise: its
  // original body runs).
  void cat_space(size_t ki, const sched::Kernel &k) {
    const std::string shape = "shape" + std::to_string(ki);
    const ir::Node &pn = g.node(k.product);
    body.push_back(decl("", "kiln::Dims", shape));
    std::vector<Expr> shapes;
    for (NodeId t : k.inputs)
      shapes.push_back(sizes_of(t));
    const std::string dim = std::to_string(ir::cat_dim(g, pn));
    body.push_back(fail_if(
        lnot(call("kiln::gen::cat_shape",
                  {braces(std::move(shapes)), lit(dim), nm(shape)})),
        kernel_label(ki) + "the shapes of " + input_names(g, k) +
            " fit cat along dim " + dim,
        "the shapes of " + input_names(g, k) + " do not fit cat along dim " +
            dim));
  }

  // A store's: the argument's shape; src broadcasts to dst, which has no
  // two elements at one address (else Tensor::copy_ raises: the original
  // body runs).
  void store_space(size_t ki, const sched::Kernel &k) {
    const ir::Node &pn = g.node(k.product);
    body.push_back(decl("const", "kiln::Dims", "shape" + std::to_string(ki),
                        sizes_of(pn.operands[0])));
    const NodeId dst = pn.operands[1];
    Expr layout = ir::is_view(g.node(dst).op)
                      ? layout_of(dst)
                      : method(arg_of(g, stored_arg(dst)), "layout");
    const std::string what = operand_name(g, pn.operands[2]) + " into " +
                             operand_name(g, dst);
    body.push_back(fail_if(
        lnot(call("kiln::gen::store_fits", {layout, sizes_of(pn.operands[2])})),
        kernel_label(ki) + "copy_ of " + what + " fits (the source broadcasts "
                           "to the destination, whose elements are distinct)",
        "copy_ of " + what + " raises in eager for these shapes"));
  }

  void product_space(size_t ki, const sched::Kernel &k) {
    const std::string shape = "shape" + std::to_string(ki);
    const ir::Node &pn = g.node(k.product);
    if (pn.op == Op::Attention)
      return attention_space(ki, k);
    if (pn.op == Op::Store)
      return store_space(ki, k);
    if (pn.op == Op::Cat)
      return cat_space(ki, k);
    const std::string name = ir::op_info(pn.op).name;
    body.push_back(decl("", "kiln::Dims", shape));
    std::vector<Expr> addends;
    std::string what;
    for (NodeId extra : {k.bias, k.addend})
      if (extra >= 0) {
        addends.push_back(addr(sizes_of(extra)));
        what += (what.empty() ? "" : ", ") + operand_name(g, extra);
      }
    std::string ops = operand_name(g, pn.operands[0]) + " and " +
                      operand_name(g, pn.operands[1]);
    std::string fits = kernel_label(ki) + "the shapes of " + ops + " fit " + name;
    if (!what.empty())
      fits += ", and " + what + " broadcast to the product's shape";
    body.push_back(fail_if(
        lnot(call("kiln::gen::product_shape",
                  {product_kind(pn), sizes_of(pn.operands[0]), sizes_of(pn.operands[1]),
                   braces(std::move(addends)), nm(shape)})),
        fits,
        "the shapes of " + ops + " do not fit " + name +
            (what.empty() ? "" : ", or an addend does not broadcast to the product")));
  }

  // The multi-output kernel's space (sched::KernelPlan::fused): the
  // broadcast of all the inputs, when it is and every output's shape is
  // that (computed by the per-input-set kernels' spaces, the guards).
  // Not a guard: the per-input-set kernels run otherwise.
  void fused_space(const sched::KernelPlan::MultiOutput &m) {
    const std::string n = std::to_string(m.fused);
    const sched::Kernel &k = v.plan.kernels[m.fused];
    body.push_back(decl("", "kiln::Dims", "shape" + n));
    Expr same = call("kiln::rt::broadcast_shapes", {size_list(k), nm("shape" + n)});
    for (int u : m.unfused)
      same = same && nm("shape" + std::to_string(u)) == nm("shape" + n);
    body.push_back(decl("const", "bool", "fuse" + n, same));
  }

  // A reduction kernel's space: the broadcast of its inputs as [outer, R,
  // inner]; guards that every reduction reads, and every full output is,
  // a value of that whole shape (eager would broadcast otherwise).
  void reduction_space(size_t ki, const sched::Kernel &k) {
    const std::string n = std::to_string(ki);
    const Expr full = nm("full" + n), keep = nm("keep" + n), drop = nm("drop" + n),
               sp = nm("sp" + n), geo = nm("geo" + n);
    const std::string in = input_names(g, k), kl = kernel_label(ki);
    for (const Expr &d : {full, keep, drop})
      body.push_back(decl("", "kiln::Dims", print(d)));
    body.push_back(fail_if(
        lnot(call("kiln::rt::broadcast_shapes", {size_list(k), full})),
        kl + "the shapes of " + in + " broadcast together",
        "the shapes of " + in + " do not broadcast"));
    body.push_back(decl("", "kiln::RowSpace", print(sp)));
    body.push_back(decl("", "kiln::gen::ReduceGeom", print(geo)));
    std::vector<Expr> dims;
    for (int64_t d : k.dims)
      dims.push_back(lit(d));
    std::string dtext = "[";
    for (auto [i, d] : llvm::enumerate(k.dims))
      dtext += (i ? ", " : "") + std::to_string(d);
    dtext += "]";
    body.push_back(fail_if(
        lnot(call("kiln::gen::row_space",
              {full, braces(std::move(dims)), sp, keep, drop, geo})),
        kl + (k.dims.empty()
                  ? "the reduction over all dims has a shape to reduce"
                  : "the reduced dims " + dtext + " are in range and adjacent"),
        "the reduced dims are out of range or not adjacent for this shape"));
    bool extreme = false;
    for (NodeId r : k.reductions)
      extreme |= ir::empty_reduction_raises(g.node(r).op);
    if (extreme)
      body.push_back(fail_if(
          sp.field("R") == lit(0) && sp.field("rows") > lit(0),
          kl + "the reduced extent is not 0 when there are rows (amax, amin, "
               "argmax)",
          "amax, amin and argmax of an empty dimension are errors"));
    std::set<NodeId> all(k.inputs.begin(), k.inputs.end());
    auto whole = [&](NodeId id, const std::string &what,
                     const std::string &message) {
      std::set<NodeId> ins;
      bool reduced = false;
      full_leaves(k, g, id, ins, reduced);
      if (ins == all)
        return; // the broadcast of every input is `full` by definition
      std::vector<Expr> shapes;
      for (NodeId i : ins)
        shapes.push_back(addr(sizes_of(i)));
      if (reduced)
        shapes.push_back(addr(keep));
      Expr t = nm("t");
      body.push_back(block(
          {decl("", "kiln::Dims", "t"),
           fail_if(lnot(call("kiln::rt::broadcast_shapes",
                         {braces(std::move(shapes)), t})) ||
                       lnot(t == full),
                   kl + what + " has the shape of the whole reduction",
                   message)}));
    };
    for (NodeId r : k.reductions) {
      NodeId x = g.node(r).operands[0];
      whole(x, names[x] + " (reduced by " + names[r] + ")",
            "a reduced value does not have the shape of the whole reduction");
    }
    for (NodeId o : k.outputs)
      if (k.role[o] == sched::Role::Full)
        whole(o, "the output " + names[o],
              "an output does not have the shape of the whole reduction");
  }

  // probe: one of the variant's CUDA kernels ("" when it has none).
  void cuda_guard(const std::string &probe) {
    Stmt s = guard_check(
        opts.cuda ? method(dev, "is_cuda") && lnot(nm("kiln_have_cuda"))
                  : method(dev, "is_cuda"),
        {opts.cuda ? "on a CUDA device, this file's CUDA kernels were built "
                     "(nvcc ran)"
                   : "the tensors are on the CPU (no CUDA kernels were "
                     "generated)",
         "why this file has no CUDA kernels (e.g. \"nvcc was not found when "
         "this file was compiled\")"});
    s.message_expr = nm("kiln_no_cuda_reason");
    body.push_back(std::move(s));
    if (!opts.cuda || probe.empty())
      return;
    // A program built for other GPUs (the arch list, or `native` on another
    // machine) runs the original body there rather than failing to launch.
    Stmt r = guard_check(
        method(dev, "is_cuda") &&
            lnot(call("kiln::rt::module_runs_on",
                      {nm("kiln_module"), dev, str_lit(probe)})),
        {"the device can run this file's CUDA kernels (SASS for its "
         "architecture, or PTX it can compile)",
         "why the device cannot run them (e.g. \"its CUDA kernels cannot run "
         "on cuda:0 (..., sm_90): no kernel image is available\")"});
    r.message_expr = call("kiln::rt::module_load_error", {nm("kiln_module")});
    body.push_back(std::move(r));
  }

  // ---- launches ----

  // The tensor kernel ki writes its output y into, of the kernel's
  // shape: a new one, or the one the caller copies it into when the kernel
  // can write through (sched::Kernel::write_into; kiln::gen::output_into
  // checks the rest at run time).
  const sched::Kernel::WriteInto *write_into(const sched::Kernel &k, int y) const {
    for (const sched::Kernel::WriteInto &w : k.write_into)
      if (w.output == y)
        return &w;
    return nullptr;
  }
  // Piece `id` of the cat it is written into (sched::KernelPlan::into_cat).
  Expr cat_piece(NodeId id) const {
    const NodeId c = v.plan.cat_of(id);
    const ir::Node &cn = g.node(c);
    std::vector<Expr> shapes;
    for (NodeId t : llvm::ArrayRef<NodeId>(cn.operands).drop_back())
      shapes.push_back(sizes_of(t));
    return call("kiln::gen::cat_piece",
                {tensor_of(g, c), braces(std::move(shapes)),
                 lit(std::to_string(ir::cat_dim(g, cn))),
                 lit(int64_t(llvm::find(cn.operands, id) - cn.operands.begin()))});
  }
  // A cat's result: in the memory order of the arguments and views its
  // pieces' kernels read (kiln::gen::empty_ordered), unless it is an
  // output (eager's is contiguous).
  Expr new_cat(NodeId c) const {
    const Expr shape = sizes_of(c), dt = dtype_expr(g.node(c).type.dtype);
    std::vector<Expr> like;
    if (!llvm::is_contained(g.outputs, c))
      for (NodeId t : llvm::ArrayRef<NodeId>(g.node(c).operands).drop_back()) {
        const int w = writer_of(t);
        if (v.plan.cat_of(t) != c || w < 0)
          continue;
        for (NodeId in : v.plan.kernels[w].inputs)
          if (g.node(in).op == Op::Input)
            like.push_back(method(arg_of(g, in), "layout"));
          else if (ir::is_view(g.node(in).op))
            like.push_back(layout_of(in));
      }
    if (like.empty())
      return call("kiln::empty", {shape, dt, dev});
    return call("kiln::gen::empty_ordered", {shape, dt, dev, braces(std::move(like))});
  }
  // The results of the cats kernels write pieces of, before the first
  // launch: the outer one first (an inner cat is a piece of it).
  void allocate_cats() {
    for (NodeId c = NodeId(g.nodes.size()) - 1; c >= 0; --c) {
      if (g.node(c).op != Op::Cat || !v.plan.cat_allocated_first(c))
        continue;
      const NodeId st = v.plan.store_of(c); // a copy_'s destination
      body.push_back(decl(
          "", "kiln::Tensor", print(tensor_of(g, c)),
          v.plan.cat_of(c) >= 0 ? cat_piece(c)
          : st >= 0
              ? call("kiln::gen::store_target",
                     {tensor_of(g, g.node(st).operands[1]), sizes_of(c),
                      dtype_expr(g.node(c).type.dtype), dev})
              : new_cat(c)));
    }
  }
  Expr output_tensor(int ki, NodeId o,
                     const sched::Kernel::WriteInto *w) const {
    if (v.plan.cat_of(o) >= 0)
      return cat_piece(o);
    const Expr shape = nm("shape" + std::to_string(ki)),
               dt = dtype_expr(g.node(o).type.dtype);
    if (NodeId st = v.plan.store_of(o); st >= 0) // a copy_'s destination
      return call("kiln::gen::store_target",
                  {tensor_of(g, g.node(st).operands[1]), shape, dt, dev});
    if (w)
      return call("kiln::gen::output_into",
                  {deref(nm("out" + std::to_string(w->result))), shape, dt, dev});
    return call("kiln::empty", {shape, dt, dev});
  }
  // Kernel ki's output tensors, of its iteration space's shape.
  void allocate_outputs(int ki, const sched::Kernel &k) {
    for (auto [y, o] : llvm::enumerate(k.outputs))
      body.push_back(decl("", "kiln::Tensor", print(tensor_of(g, o)),
                          output_tensor(ki, o, write_into(k, int(y)))));
  }

  // The multi-output kernel, or the per-input-set kernels in its place
  // (each output allocated once, by the kernel of its input set: when the
  // multi-output kernel runs, that is its shape too).
  void launch_fused(const sched::KernelPlan::MultiOutput &m) {
    const sched::KernelPlan &plan = v.plan;
    // Written in place by one path and not the other: chosen by fuse<i>.
    const sched::Kernel &f = plan.kernels[m.fused];
    const Expr fuse = nm("fuse" + std::to_string(m.fused));
    for (int u : m.unfused) {
      const sched::Kernel &k = plan.kernels[u];
      for (auto [y, o] : llvm::enumerate(k.outputs)) {
        const auto *wf = write_into(f, int(llvm::find(f.outputs, o) - f.outputs.begin()));
        const auto *wu = write_into(k, int(y));
        // The shapes agree when the multi-output kernel runs: its output
        // has the shape of kernel u's.
        Expr e = output_tensor(u, o, wu);
        if (!wf != !wu)
          e = select(fuse, output_tensor(u, o, wf), std::move(e));
        body.push_back(decl("", "kiln::Tensor", print(tensor_of(g, o)), e));
      }
    }
    Stmts outer = std::move(body);
    body.clear();
    launch_pointwise(m.fused, plan.kernels[m.fused], false);
    Stmts fused = std::move(body);
    body.clear();
    for (int u : m.unfused)
      launch_pointwise(u, plan.kernels[u], false);
    Stmts apart = std::move(body);
    body = std::move(outer);
    body.push_back(if_then(fuse, std::move(fused), std::move(apart)));
  }

  // A product and its epilogue: one library GEMM where the layouts allow
  // (kiln::gen::product).
  void launch_product(int ki, const sched::Kernel &k) {
    const ir::Node &pn = g.node(k.product);
    if (pn.op == Op::Store) {
      body.push_back(comment("kernel " + std::to_string(ki) +
                             ": copy_ into an argument (the runtime's copy)"));
      body.push_back(decl("const", "kiln::Tensor", print(tensor_of(g, k.product)),
                          call("kiln::gen::store",
                               {tensor_of(g, stored_arg(k.product)),
                                tensor_of(g, pn.operands[1]),
                                tensor_of(g, pn.operands[2])})));
      return;
    }
    if (pn.op == Op::Cat && v.plan.read_in_pieces(k.product)) {
      // Attention reads the pieces; it writes the result when it is an
      // output.
      const bool output = llvm::is_contained(g.outputs, k.product);
      body.push_back(comment("kernel " + std::to_string(ki) + ": cat, " +
                             (output ? "written by the attention that reads its pieces"
                                     : "not in memory: attention reads its pieces")));
      if (output)
        body.push_back(decl("", "kiln::Tensor", print(tensor_of(g, k.outputs[0])),
                            call("kiln::empty", {sizes_of(k.product),
                                                 dtype_expr(pn.type.dtype), dev})));
      return;
    }
    if (pn.op == Op::Cat && v.plan.cat_allocated_first(k.product)) {
      // Allocated before the first launch; kernels wrote some pieces.
      std::vector<Expr> ts, shapes;
      for (NodeId t : k.inputs) {
        ts.push_back(v.plan.cat_of(t) == k.product ? call("kiln::Tensor", {})
                                                  : tensor_of(g, t));
        shapes.push_back(sizes_of(t));
      }
      const std::string copied = operand_names(g, v.plan.cat_tensors(k, false));
      body.push_back(comment("kernel " + std::to_string(ki) + ": cat, " +
                             (copied.empty() ? "every piece written in place"
                                             : "copies " + copied)));
      if (!copied.empty())
        body.push_back(eval(call(
            "kiln::gen::cat_copy",
            {tensor_of(g, k.outputs[0]),
             typed_braces("std::vector<kiln::Tensor>", std::move(ts)),
             braces(std::move(shapes)),
             lit(std::to_string(ir::cat_dim(g, pn)))})));
      return;
    }
    if (pn.op == Op::Cat) {
      body.push_back(comment("kernel " + std::to_string(ki) +
                             ": cat (the runtime's copies)"));
      std::vector<Expr> ts;
      for (NodeId t : k.inputs)
        ts.push_back(tensor_of(g, t));
      body.push_back(decl(
          "", "kiln::Tensor", print(tensor_of(g, k.outputs[0])),
          call("kiln::cat",
               {typed_braces("std::vector<kiln::Tensor>", std::move(ts)),
                lit(std::to_string(ir::cat_dim(g, pn)))})));
      return;
    }
    if (pn.op == Op::Attention) {
      body.push_back(comment("kernel " + std::to_string(ki) +
                             ": attention (the runtime's fused kernel)"));
      std::vector<Expr> args;
      for (int i = 0; i < 3; ++i)
        args.push_back(tensor_of(g, pn.operands[i]));
      args.push_back(g.node(pn.operands[3]).type.scalar
                         ? call("kiln::Tensor", {})
                         : tensor_of(g, pn.operands[3]));
      args.push_back(call("bool", {host_scalar(pn.operands[4])}));
      const bool pieces = v.plan.read_in_pieces(pn.operands[1]) ||
                          v.plan.read_in_pieces(pn.operands[2]);
      if (pn.operands.size() >= 6)
        args.push_back(call("double", {host_scalar(pn.operands[5])}));
      else if (pieces)
        args.push_back(nm("std::nullopt"));
      if (!pieces) {
        body.push_back(decl("", "kiln::Tensor", print(tensor_of(g, k.outputs[0])),
                            call("kiln::scaled_dot_product_attention",
                                 std::move(args))));
        return;
      }
      // Keys or values a cat read in pieces (kiln::gen::attention_pieces):
      // its tensors, and its result where it is an output (written too).
      for (int i : {1, 2}) {
        const NodeId c = pn.operands[i];
        std::vector<Expr> ts;
        if (v.plan.read_in_pieces(c))
          for (NodeId t : llvm::ArrayRef<NodeId>(g.node(c).operands).drop_back())
            ts.push_back(tensor_of(g, t));
        else
          ts.push_back(tensor_of(g, c));
        args[size_t(i)] = typed_braces("std::vector<kiln::Tensor>", std::move(ts));
      }
      for (int i : {1, 2}) {
        const NodeId c = pn.operands[i];
        const bool write = v.plan.read_in_pieces(c) &&
                           llvm::is_contained(g.outputs, c) &&
                           (i == 1 || pn.operands[1] != c);
        args.push_back(write ? tensor_of(g, c) : call("kiln::Tensor", {}));
      }
      for (int i : {1, 2}) // the cats' dims (the runtime checks the key dim)
        args.push_back(lit(std::to_string(v.plan.read_in_pieces(pn.operands[i])
                                              ? ir::cat_dim(g, g.node(pn.operands[i]))
                                              : -2)));
      body.push_back(decl("", "kiln::Tensor", print(tensor_of(g, k.outputs[0])),
                          call("kiln::gen::attention_pieces", std::move(args))));
      return;
    }
    std::string what = "kernel " + std::to_string(ki) + ": " +
                       ir::op_info(pn.op).name + " (a library GEMM)";
    if (k.act >= 0)
      what += std::string(", epilogue ") + ir::op_info(g.node(k.act).op).name;
    body.push_back(comment(what));
    const char *act = "kiln::rt::Epilogue::None";
    if (k.act >= 0)
      switch (g.node(k.act).op) {
      case Op::Relu: act = "kiln::rt::Epilogue::Relu"; break;
      case Op::Gelu: act = "kiln::rt::Epilogue::Gelu"; break;
      default: act = "kiln::rt::Epilogue::GeluTanh"; break;
      }
    auto opt = [&](NodeId id) {
      return id >= 0 ? tensor_of(g, id) : call("kiln::Tensor", {});
    };
    body.push_back(decl(
        "", "kiln::Tensor", print(tensor_of(g, k.outputs[0])),
        call("kiln::gen::product",
             {product_kind(pn), tensor_of(g, pn.operands[0]), tensor_of(g, pn.operands[1]),
              opt(k.bias), opt(k.addend), nm(act)})));
  }

  void launch_pointwise(int ki, const sched::Kernel &k, bool allocate = true) {
    const int vec = vector_width(g, k);
    const Expr n = nm("n"), shape = nm("shape" + std::to_string(ki));
    std::string what = "kernel " + std::to_string(ki) + ": " +
                       std::to_string(k.nodes.size()) + " ops fused";
    for (NodeId o : k.outputs) {
      const ir::Node &nd = g.node(o);
      if (nd.loc.valid())
        what += "; writes " + (nd.name.empty() ? "%" + std::to_string(o) : nd.name) +
                " (line " + std::to_string(nd.loc.line) + ")";
    }
    body.push_back(comment(what));
    if (allocate)
      allocate_outputs(ki, k);
    Stmts b;
    Expr dense = lit("true");
    for (NodeId in : k.inputs)
      dense = dense && call("kiln::gen::dense", {tensor_of(g, in), n});
    for (NodeId o : k.outputs) // a cat's piece, a copy_'s destination: views
      if (v.plan.cat_of(o) >= 0 || v.plan.store_of(o) >= 0)
        dense = dense && call("kiln::gen::dense", {tensor_of(g, o), n});
    b.push_back(decl("const", "bool", "dense", dense));
    pointers(b, k);
    Stmts cpu;
    cpu.push_back(decl("", ctx_name(ki), "c", ctx_init(k, {})));
    const Expr c = nm("c"), calc_c = c.field("calc"), inner = nm("inner");
    cpu.push_back(if_then(
        nm("dense"),
        {cpu_launch(kname(ki, "contig"), n, lit(32768))},
        {eval(call("kiln::rt::make_offset_calc", {shape, operand_list(k), calc_c})),
         decl("const", "int64_t", "inner",
              select(calc_c.field("rank"),
                     calc_c.field("sizes")[calc_c.field("rank") - 1], lit(1))),
         cpu_launch(kname(ki, "strided"), n / inner,
                    call("std::max<int64_t>", {lit(1), lit(32768) / inner}))}));
    if (!opts.cuda) {
      for (Stmt &s : cpu)
        b.push_back(std::move(s));
    } else {
      Stmts gpu;
      gpu.push_back(decl("", "int64_t", "n_", n));
      gpu.push_back(decl("const", "int64_t", "sms_",
                         call("kiln::rt::multiprocessor_count", {dev})));
      gpu.push_back(decl("const", "bool", "small",
                         call("kiln::gen::pointwise_small",
                              {(n + (vec - 1)) / lit(vec), nm("sms_")})));
      Expr aligned = nm("dense") && unary("!", nm("small"));
      for (auto [i, in] : llvm::enumerate(k.inputs))
        aligned = aligned &&
                  call("kiln::gen::aligned",
                       {nm("in" + std::to_string(i)),
                        lit(vec * element_size(g.node(in).type.dtype))});
      for (auto [j, o] : llvm::enumerate(k.outputs))
        aligned = aligned &&
                  call("kiln::gen::aligned",
                       {nm("out" + std::to_string(j) + "_"),
                        lit(vec * element_size(g.node(o).type.dtype))});
      std::vector<Expr> vargs = {addr(nm("n_"))}, sargs = {addr(nm("n_")),
                                                          addr(nm("calc"))};
      for (Expr &e : pointer_args(k)) {
        vargs.push_back(e);
        sargs.push_back(e);
      }
      gpu.push_back(if_then(
          aligned,
          {args_array(vargs),
           spread_launch(kernel_ref(kname(ki, "vec")),
                         (n + (vec - 1)) / lit(vec))},
          {decl("", "kiln::OffsetCalc<" +
                        std::to_string(k.outputs.size() + k.inputs.size()) + ">",
                "calc"),
           eval(call("kiln::rt::make_offset_calc",
                     {shape, operand_list(k), nm("calc")})),
           args_array(sargs),
           if_then(unary("!", nm("small")) && call("kiln::gen::fits_u32", {nm("calc"), n}) &&
                       call("kiln::gen::inner_vec",
                            {nm("calc"), lit(vec), op_pointers(k), op_bytes(k)}),
                   {spread_launch(kernel_ref(kname(ki, "sv")), n / lit(vec))},
                   {spread_launch(select(call("kiln::gen::fits_u32", {nm("calc"), n}),
                                         kernel_ref(kname(ki, "s32")),
                                         kernel_ref(kname(ki, "s64"))),
                                  n)})}));
      b.push_back(if_then(method(dev, "is_cuda"), std::move(gpu), std::move(cpu)));
    }
    Stmt run = if_then(n > lit(0), std::move(b));
    run.init.push_back(decl("const", "int64_t", "n",
                            method(tensor_of(g, k.outputs[0]), "numel")));
    body.push_back(std::move(run));
  }

  void launch_reduction(int ki, const sched::Kernel &k, const Kernel *cuda,
                        const Kernel &cpu) {
    const std::string n = std::to_string(ki);
    const Expr sp = nm("sp" + n), st = nm("st" + n), full = nm("full" + n),
               geo = nm("geo" + n);
    const size_t nout = k.outputs.size(), nops = nout + k.inputs.size();
    const int vec = vector_width(g, k);
    std::string what = "kernel " + n + ": reduction over dims [";
    for (auto [i, d] : llvm::enumerate(k.dims))
      what += (i ? ", " : "") + std::to_string(d);
    what += "], " + std::to_string(k.passes) + " pass" +
            (k.passes == 1 ? "" : "es") + ", " + std::to_string(k.nodes.size()) +
            " ops fused";
    body.push_back(comment(what));
    for (NodeId o : k.outputs) {
      bool is_full = k.role[o] == sched::Role::Full;
      body.push_back(decl(
          "", "kiln::Tensor", print(tensor_of(g, o)),
          call("kiln::empty", {nm((is_full ? "full" : k.drop[o] ? "drop" : "keep") + n),
                               dtype_expr(g.node(o).type.dtype), dev})));
    }
    body.push_back(decl("", "kiln::RowStrides<" + std::to_string(nops) + ">",
                        print(st)));
    // Every operand's strides along [outer, R, inner], and along each
    // outer dim for operands broadcast across rows unevenly (a [T, T] mask
    // beside [B, H, T, T] scores): kiln::RowStrides.
    for (auto [j, o] : llvm::enumerate(k.outputs))
      body.push_back(eval(
          k.role[o] == sched::Role::Full
              ? cast("void", call("kiln::gen::row_operand",
                                  {tensor_of(g, o), full, geo, st, lit(int64_t(j))}))
              : call("kiln::gen::row_reduced", {sp, st, lit(int64_t(j))})));
    for (auto [i, in] : llvm::enumerate(k.inputs)) {
      std::string an = operand_name(g, in);
      body.push_back(fail_if(
          lnot(call("kiln::gen::row_operand",
                    {tensor_of(g, in), full, geo, st, lit(int64_t(nout + i))})),
          "kernel " + n + ": " + an +
              " has a layout the reduction can walk along the reduced dims",
          an + " has a layout the reduction cannot walk along the reduced "
               "dims (or the dims after them)"));
    }
    Stmts b;
    pointers(b, k);
    std::vector<Expr> head = {addr(sp), addr(st)};
    std::vector<Expr> ptrs = pointer_args(k);

    Stmts cpu_run;
    const Expr c = nm("c"), csp = c.field("sp");
    cpu_run.push_back(decl("", ctx_name(ki), "c",
                           ctx_init(k, {sp, st, lit("nullptr")})));
    const int launches = split_launches(g, k);
    const Expr pass = nm("pass");
    cpu_run.push_back(if_then(
        call("kiln::gen::plan_cpu", {csp}),
        {cpu_launch(kname(ki, "cpu_rows"), csp.field("rows"),
                    call("std::max<int64_t>",
                         {lit(1), lit(32768) / call("std::max<int64_t>",
                                                    {lit(1), csp.field("R")})}))},
        {decl("", "std::vector<char>", "partials",
              call("std::vector<char>", {scratch_bytes(cpu.scratch, csp)})),
         assign(c.field("partials"), method(nm("partials"), "data")),
         for_loop(decl("", "int", "pass", lit(0)), pass < launches,
                  pre_inc(pass),
                  {assign(csp.field("pass"), pass),
                   cpu_launch(kname(ki, "cpu_split"),
                              csp.field("rows") * csp.field("splits"), lit(1))})}));

    if (!cuda) {
      for (Stmt &s : cpu_run)
        b.push_back(std::move(s));
    } else {
      Stmts gpu;
      // 16-byte slots when every operand read or written per element is
      // contiguous along R with aligned rows.
      Expr vec_ok = sp.field("inner") == lit(1) && sp.field("R") % vec == lit(0);
      for (auto [i, in] : llvm::enumerate(k.inputs)) {
        Expr s = st.field("s")[int64_t(nout + i)];
        vec_ok = vec_ok && s[1] == lit(1) &&
                 call("kiln::gen::rows_aligned", {st, lit(int64_t(nout + i)), lit(vec)}) &&
                 call("kiln::gen::aligned",
                      {nm("in" + std::to_string(i)),
                       lit(vec * element_size(g.node(in).type.dtype))});
      }
      for (auto [j, o] : llvm::enumerate(k.outputs))
        if (k.role[o] == sched::Role::Full)
          vec_ok = vec_ok &&
                   call("kiln::gen::aligned",
                        {nm("out" + std::to_string(j) + "_"),
                         lit(vec * element_size(g.node(o).type.dtype))});
      gpu.push_back(assign(sp.field("vec"), vec_ok));
      gpu.push_back(decl("", "unsigned", "grid"));
      gpu.push_back(decl("", "unsigned", "block"));
      const int slots = register_slots(g, k), vslots = rows_slots_vector(g, k);
      const bool reread = rows_reread(g, k);
      // Rows that are neighbours in memory: column mode (plan_cuda says
      // whether there are enough of them), where the reduced dims may be
      // followed by others.
      const bool columns = may_reduce_columns(g, k);
      // Rows that fill rows_exact_slots slots exactly at a power of two of
      // threads take its FULL instance.
      const int exact = rows_exact_slots(g, k);
      std::vector<Expr> plan_args = {sp, lit(vec), lit(slots),
                                     call("kiln::rt::multiprocessor_count", {dev}),
                                     nm("grid"), nm("block"),
                                     columns ? call("kiln::gen::columns_fit", {st})
                                             : nm("false"),
                                     st.field("nouter") != lit(0), lit(vslots)};
      if (exact)
        plan_args.push_back(lit(exact));
      gpu.push_back(decl("const", "kiln::gen::RedMode", "mode",
                         call("kiln::gen::plan_cuda", std::move(plan_args))));
      const Expr mode = nm("mode");
      // The rows kernel holding the row: the fewest slots that do, its
      // FULL twin when the row fills every one of them.
      // Rows that fill an instance of fewer slots than a power of two
      // (rows_full_between: f32 rows of 768 fill 6) take its FULL twin.
      auto full = [&](int n) {
        return sp.field("vpt") == lit(n) &&
               sp.field("R") == lit(int64_t(n) * vec) * sp.field("tpr");
      };
      auto rows_of = [&](int s) {
        Expr e = kernel_ref(kname(ki, "rows") + std::to_string(s));
        for (int n : rows_full_between(g, k))
          if (n > s / 2 && n < s)
            e = select(full(n), kernel_ref(kname(ki, "rows") + std::to_string(n) + "full"), e);
        return select(full(s), kernel_ref(kname(ki, "rows") + std::to_string(s) + "full"), e);
      };
      // The instance of the fewest slots holding the row, of `of(slots)`
      // (up to `most` slots: the 16-byte rows kernel's may be more).
      auto fewest = [&](auto of, int most) {
        Expr e = of(1);
        for (int s = 2; s <= most; s *= 2)
          e = select(sp.field("vpt") > lit(s / 2), of(s), e);
        return e;
      };
      // Rows it cannot read 16 bytes at a time: its element-by-element twin.
      Expr rows_vec = fewest(rows_of, vslots);
      if (exact)
        rows_vec = select(full(exact), kernel_ref(kname(ki, "rows") + std::to_string(exact) + "full"),
                          rows_vec);
      Expr rows_any = fewest([&](int s) {
        return kernel_ref(kname(ki, "rowsany") + std::to_string(s));
      }, slots);
      // Rows contiguous along R (every operand read or written per
      // element), launched at a thread count an instance fixes: that one.
      const std::vector<FixedRows> fixed = rowsany_fixed(g, k);
      if (!fixed.empty()) {
        Expr unit;
        auto unit_along_r = [&](size_t op) {
          Expr one = st.field("s")[int64_t(op)][1] == lit(1);
          unit = unit ? unit && one : one;
        };
        for (size_t i = 0; i < k.inputs.size(); ++i)
          unit_along_r(nout + i);
        for (auto [j, o] : llvm::enumerate(k.outputs))
          if (k.role[o] == sched::Role::Full)
            unit_along_r(j);
        gpu.push_back(decl("const", "bool", "unit", unit));
        for (FixedRows fr : fixed)
          rows_any = select(nm("unit") && sp.field("tpr") == lit(fr.tpr) &&
                                sp.field("vpt") > lit(fr.slots / 2) &&
                                sp.field("vpt") <= lit(fr.slots),
                            kernel_ref(kname(ki, "rowsany") + std::to_string(fr.slots) +
                                       "t" + std::to_string(fr.tpr)),
                            rows_any);
      }
      const Expr rows = select(sp.field("vec"), rows_vec, rows_any);
      std::vector<Expr> rargs = head, sargs = head;
      for (const Expr &e : ptrs) {
        rargs.push_back(e);
        sargs.push_back(e);
      }
      sargs.push_back(addr(nm("partials")));
      Expr rows_kernel = select(mode == nm("kiln::gen::RedMode::loop"),
                                select(sp.field("vec"), kernel_ref(kname(ki, "loop")),
                                       kernel_ref(kname(ki, "loopany"))),
                                rows);
      Stmts rows_case = {args_array(rargs)};
      if (reread) {
        // f32 layer norm over rows of kRereadThreads * kRereadSlots
        // slots: the kernel re-reading the row, a block of kRereadThreads
        // a row (cuda_rows_reread).
        const int64_t tpr = kRereadThreads;
        rows_case.push_back(decl(
            "const", "bool", "rowsre",
            mode == nm("kiln::gen::RedMode::rows") && sp.field("vec") &&
                sp.field("R") == lit(tpr * kRereadSlots * vec) &&
                sp.field("rows") <= lit(int64_t(INT32_MAX))));
        rows_case.push_back(if_then(
            nm("rowsre"), {assign(nm("grid"), cast("unsigned", sp.field("rows"))),
                           assign(nm("block"), lit(tpr))}));
        rows_kernel = select(nm("rowsre"),
                             kernel_ref(kname(ki, "rowsre") + std::to_string(tpr)),
                             rows_kernel);
      }
      rows_case.push_back(decl("", "kiln::rt::KernelRef &", "k", rows_kernel));
      rows_case.push_back(gpu_launch(nm("k"), nm("grid"), nm("block")));
      rows_case.push_back(brk());
      // Column mode: the registers kernel of the fewest slots holding the
      // rows, or the one re-reading them.
      Stmts cols_case = {
          args_array(rargs),
          decl("", "kiln::rt::KernelRef &", "k",
               select(mode == nm("kiln::gen::RedMode::cols"),
                      kernel_ref(kname(ki, "cols")), fewest([&](int s) {
                        return kernel_ref(kname(ki, "colsreg") + std::to_string(s));
                      }, slots))),
          gpu_launch(nm("k"), nm("grid"), nm("block")), brk()};
      Stmts split_case = {
          decl("", "kiln::Tensor", "scratch",
               call("kiln::empty",
                    {braces({cast("int64_t", scratch_bytes(cuda->scratch, sp))}),
                     nm("kiln::DType::b8"), dev})),
          decl("", "char *", "partials", method(nm("scratch"), "data<char>")),
          args_array(sargs)};
      // Each pass over all blocks (a kernel per pass: split mode's, or
      // column mode's colsplit); after a pass with reductions, a block per
      // row combines their partials for the next (the combine kernel reads
      // sp.pass to know which), 512 threads: 16 partials a thread in one
      // batch of loads cover the 4224 of an H200's split (var(x) over 2^26
      // f32: 256 threads waited for two batches).
      for (int p = 0; p < k.passes; ++p) {
        const std::string pn = std::to_string(p);
        bool reduces = false;
        for (NodeId r : k.reductions)
          reduces |= k.phase[r] - 1 == p;
        // A pass that only writes runs a block per tile (split mode's;
        // column mode's keeps its blocks).
        Expr pass_grid = nm("grid");
        if (!reduces) {
          pass_grid = call("kiln::gen::split_write_grid", {sp, lit(vec)});
          if (columns)
            pass_grid = select(mode == nm("kiln::gen::RedMode::colsplit"),
                               nm("grid"), pass_grid);
        }
        split_case.push_back(gpu_launch(
            columns ? select(mode == nm("kiln::gen::RedMode::colsplit"),
                             kernel_ref(kname(ki, "colsplit" + pn)),
                             kernel_ref(kname(ki, "split" + pn)))
                    : kernel_ref(kname(ki, "split" + pn)),
            pass_grid, nm("block")));
        if (reduces) {
          split_case.push_back(assign(sp.field("pass"), lit(p + 1)));
          split_case.push_back(gpu_launch(kernel_ref(kname(ki, "combine")),
                                          cast("unsigned", sp.field("rows")),
                                          lit(512)));
        }
      }
      split_case.push_back(brk());
      std::vector<std::pair<std::vector<Expr>, Stmts>> cases;
      cases.push_back({{nm("kiln::gen::RedMode::rows"), nm("kiln::gen::RedMode::loop")},
                       std::move(rows_case)});
      // (Without a column kernel plan_cuda never picks column mode: the
      // split case takes the switch's default, which no mode reaches.)
      if (columns)
        cases.push_back({{nm("kiln::gen::RedMode::cols"), nm("kiln::gen::RedMode::colsreg")},
                         std::move(cols_case)});
      std::vector<Expr> split_labels = {nm("kiln::gen::RedMode::split")};
      if (columns)
        split_labels.push_back(nm("kiln::gen::RedMode::colsplit"));
      else
        split_labels.push_back(Expr());
      cases.push_back({std::move(split_labels), std::move(split_case)});
      gpu.push_back(switch_on(mode, std::move(cases)));
      b.push_back(if_then(method(dev, "is_cuda"), std::move(gpu),
                          std::move(cpu_run)));
    }
    body.push_back(if_then(sp.field("rows") > lit(0), std::move(b)));
  }
};

} // namespace

std::string arg_name(const ir::Graph &g, int arg) {
  for (NodeId id : g.args())
    if (g.node(id).arg_index == arg && !g.node(id).name.empty())
      return "'" + g.node(id).name + "'";
  return "argument " + std::to_string(arg + 1);
}

std::string profile_name(const ir::Graph &g, int arg) {
  for (NodeId id : g.args())
    if (g.node(id).arg_index == arg && !g.node(id).name.empty())
      return g.node(id).name;
  return "@" + std::to_string(arg + 1);
}

std::string operand_name(const ir::Graph &g, NodeId id) {
  const ir::Node &n = g.node(id);
  if (n.op == Op::Input)
    return arg_name(g, n.arg_index);
  if (n.op == Op::Store) // the argument it wrote, after the write
    return operand_name(g, stored_arg(g, id)) +
           (n.loc.valid() ? " (after the copy_ at line " +
                                std::to_string(n.loc.line) + ")"
                          : " (after a copy_ into it)");
  std::string s = n.name.empty() ? "%" + std::to_string(id) : "'" + n.name + "'";
  if (n.loc.valid())
    s += " (line " + std::to_string(n.loc.line) + ")";
  return s;
}

std::string operand_names(const ir::Graph &g, llvm::ArrayRef<NodeId> ids) {
  std::string s;
  for (auto [i, in] : llvm::enumerate(ids))
    s += (i ? ", " : "") + operand_name(g, in);
  return s;
}

std::string input_names(const ir::Graph &g, const sched::Kernel &k) {
  return operand_names(g, k.inputs);
}

bool attention_mask_only(const ir::Graph &captured, int arg_index) {
  bool used = false;
  for (const ir::Node &n : captured.nodes)
    for (auto [i, o] : llvm::enumerate(n.operands)) {
      const ir::Node &on = captured.node(o);
      if (on.op != Op::Input || on.arg_index != arg_index)
        continue;
      if (n.op != Op::Attention || i != 3)
        return false;
      used = true;
    }
  return used;
}

bool is_pinned(const FunctionSpec &spec, int arg_index) {
  return size_t(arg_index) < spec.arg_dtypes.size() &&
         !spec.arg_dtypes[size_t(arg_index)].empty();
}

llvm::SmallSet<NodeId, 4> condition_args(const ir::Graph &g) {
  llvm::SmallSet<NodeId, 4> conds;
  for (const ir::Node &n : g.nodes)
    if (n.op == Op::Where && g.node(n.operands[0]).op == Op::Input)
      conds.insert(n.operands[0]);
  return conds;
}

int dispatch_index(const FunctionSpec &spec) {
  const ir::Graph &g = spec.graph;
  const llvm::SmallSet<NodeId, 4> conds = condition_args(g);
  for (NodeId id : g.args())
    if (g.node(id).op == Op::Input && !conds.contains(id) &&
        !is_pinned(spec, g.node(id).arg_index) &&
        !attention_mask_only(g, g.node(id).arg_index))
      return g.node(id).arg_index;
  for (NodeId id : g.args())
    if (g.node(id).op == Op::Input && !conds.contains(id))
      return g.node(id).arg_index;
  for (NodeId id : g.args())
    if (g.node(id).op == Op::Input)
      return g.node(id).arg_index;
  return -1;
}

NodeId dispatch_arg(const FunctionSpec &spec, const Variant &v) {
  const int want = dispatch_index(spec);
  for (NodeId id : v.graph.args())
    if (v.graph.node(id).op == Op::Input && v.graph.node(id).arg_index == want)
      return id;
  for (NodeId id : v.graph.args())
    if (v.graph.node(id).op == Op::Input)
      return id;
  return -1;
}

static std::string checked_value(const ir::ShapeCheck &c) {
  std::string s = c.name.empty() ? "a value" : "'" + c.name + "'";
  if (c.loc.valid())
    s += " (line " + std::to_string(c.loc.line) + ")";
  if (ir::op_info(c.op).kind == ir::OpKind::Composite)
    return s + ": " + ir::op_info(c.op).name + "'s input, weight or bias";
  return s + ", computed and dropped,";
}

Guard shape_check_guard(const ir::ShapeCheck &c) {
  return {checked_value(c) + " has shapes eager accepts",
          checked_value(c) + " raises in eager for these shapes"};
}

low::Variant lower_variant(const FunctionSpec &spec, const Variant &v,
                           const Options &opts) {
  low::Variant lv;
  lv.dtype = v.dtype;
  lv.name = v.name;
  lv.function = spec.symbol + "_" + v.name;
  const ir::Graph &g = v.graph;
  for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
    bool red = k.kind == sched::Kernel::Kind::Reduction;
    if (k.kind == sched::Kernel::Kind::Product)
      continue; // a library call
    if (opts.cuda)
      lv.kernels.push_back(
          red ? lower_reduction_cuda(g, k, int(ki), spec.symbol, v.name)
              : lower_pointwise_cuda(g, k, int(ki), spec.symbol, v.name));
  }
  for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
    bool red = k.kind == sched::Kernel::Kind::Reduction;
    if (k.kind == sched::Kernel::Kind::Product)
      continue;
    lv.kernels.push_back(
        red ? lower_reduction_cpu(g, k, int(ki), spec.symbol, v.name)
            : lower_pointwise_cpu(g, k, int(ki), spec.symbol, v.name));
  }
  auto kernel_of = [&](int ki, Target t) -> const Kernel * {
    for (const Kernel &k : lv.kernels)
      if (k.index == ki && k.target == t)
        return &k;
    return nullptr;
  };

  Host h{spec, v, opts};
  const NodeId dispatch = dispatch_arg(spec, v);
  h.body.push_back(decl("constexpr const", "char *", "kFn",
                        str_lit(spec.user_name)));
  h.body.push_back(decl("const", "kiln::Device", "dev",
                        method(arg_of(g, dispatch), "device")));
  h.dtype_guards(dispatch);
  h.shape_checks();
  // The host scalars the kernels and layout ops take, once per call, with
  // the runtime's formulas (the eager body computes them with the same
  // functions).
  {
    // Only those some kernel takes, and what they are computed from.
    std::vector<NodeId> work;
    for (const sched::Kernel &k : v.plan.kernels)
      work.insert(work.end(), k.scalars.begin(), k.scalars.end());
    for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id)
      if (ir::is_view(g.node(id).op))
        work.insert(work.end(), g.node(id).operands.begin() + 1,
                    g.node(id).operands.end());
    std::vector<bool> &needed = h.needed;
    while (!work.empty()) {
      NodeId id = work.back();
      work.pop_back();
      if (needed[id])
        continue;
      needed[id] = true;
      if (g.node(id).op != Op::Size) // a shape, not a value
        for (NodeId o : g.node(id).operands)
          work.push_back(o);
    }
    // Those that read a shape wait until the host knows it (before the
    // layout op or launch that takes them).
    for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id) {
      if (g.node(id).op == Op::ScalarInput)
        h.values[id] = arg_of(g, id);
      else if (needed[id] && sched::is_host_scalar(g, id) && !h.reads_shape(id))
        h.compute_scalar(id);
    }
  }
  // Every kernel's iteration space and every view's layout, before
  // anything runs (a view's when its base's shape is known).
  for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
    h.view_layouts(int(ki));
    if (k.kind == sched::Kernel::Kind::Reduction)
      h.reduction_space(ki, k);
    else if (k.kind == sched::Kernel::Kind::Product)
      h.product_space(ki, k);
    else if (!v.plan.is_fused(int(ki)))
      h.pointwise_space(ki, k);
  }
  h.view_layouts(int(v.plan.kernels.size()));
  for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id)
    if (h.needed[id] && sched::is_host_scalar(g, id))
      h.compute_scalar(id);
  for (const sched::KernelPlan::MultiOutput &m : v.plan.multi)
    h.fused_space(m);
  std::string probe;
  for (const Kernel &k : lv.kernels)
    if (k.target == Target::Cuda && probe.empty() && !k.entry_points().empty())
      probe = k.entry_points().front();
  h.cuda_guard(probe);
  // Every guard passed: in Nsight Systems the call's kernels sit inside a
  // range named after the user's function.
  h.body.push_back(decl("const", "kiln::rt::NvtxRange", "nvtx_call",
                        call("kiln::rt::NvtxRange", {nm("kFn")})));
  // (The views of arguments first: a cat may be allocated as one, a
  // copy_'s destination.)
  h.make_views(0);
  h.allocate_cats();
  // In plan order: a kernel reads what earlier ones wrote (and the views
  // the host makes of them).
  for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
    h.make_views(int(ki));
    if (k.kind == sched::Kernel::Kind::Reduction)
      h.launch_reduction(int(ki), k, kernel_of(int(ki), Target::Cuda),
                         *kernel_of(int(ki), Target::Cpu));
    else if (k.kind == sched::Kernel::Kind::Product)
      h.launch_product(int(ki), k);
    else if (const auto *m = v.plan.multi_of(int(ki)))
      h.launch_fused(*m);
    else if (!v.plan.alternative(int(ki)))
      h.launch_pointwise(int(ki), k);
  }
  // Outputs that are different tensors in eager (each a fresh result) are
  // different tensors here, whatever the passes made of them: one that
  // became another output's node, or an argument, is copied. An argument
  // reached through casts only is the argument itself, as in eager
  // (Tensor::to returns its object when the dtypes agree).
  h.make_views(int(v.plan.kernels.size()));
  const std::vector<NodeId> &captured = spec.graph.outputs;
  auto through_casts = [&](NodeId id) {
    while (spec.graph.node(id).op == Op::Cast ||
           spec.graph.node(id).op == Op::CastLike)
      id = spec.graph.node(id).operands[0];
    return id;
  };
  // Output j is its argument itself in eager: every cast on its way was
  // the identity (none is left in this variant's graph).
  auto is_argument = [&](size_t j) {
    return g.node(g.outputs[j]).op == Op::Input &&
           spec.graph.node(through_casts(captured[j])).op == Op::Input;
  };
  for (auto [j, o] : llvm::enumerate(g.outputs)) {
    bool shared = g.node(o).op == Op::Input && !is_argument(j);
    for (size_t i = 0; i < j; ++i)
      shared |= g.outputs[i] == o && captured[i] != captured[j] &&
                !(is_argument(i) && is_argument(j));
    // A view shares its base's storage in eager too.
    shared &= !ir::is_view(g.node(o).op);
    Expr t = tensor_of(g, o);
    h.body.push_back(assign(deref(nm("out" + std::to_string(j))),
                            shared ? method(t, "clone") : t));
  }
  // Arguments updated in place: their storage's version moves, as an eager
  // in-place op's does (autograd's saved tensors check it).
  std::set<int> written;
  for (int a : spec.into)
    if (a >= 0 && written.insert(a).second)
      h.body.push_back(eval(call("kiln::rt::bump_version", {arg(a)})));
  h.body.push_back(eval(call("kiln::rt::count_compiled", {})));
  h.body.push_back(ret(lit("true")));
  lv.body = std::move(h.body);
  return lv;
}

Stmts lower_entry(const FunctionSpec &spec,
                  const std::vector<Variant> &variants,
                  bool compiled_backward) {
  const ir::Graph &first = variants.front().graph;
  const NodeId dispatch = dispatch_arg(spec, variants.front());
  const std::string dname = arg_name(first, first.node(dispatch).arg_index);
  Stmts b;
  b.push_back(decl("constexpr const", "char *", "kFn", str_lit(spec.user_name)));
  b.push_back(if_then(call("kiln::rt::fast_path_off", {nm("kFn")}),
                      {ret(lit("false"))}));
  // Every tensor argument defined, all on one device.
  std::vector<NodeId> tensors;
  for (NodeId id : first.args())
    if (first.node(id).op == Op::Input)
      tensors.push_back(id);
  for (NodeId id : tensors) {
    std::string n = arg_name(first, first.node(id).arg_index);
    b.push_back(fail_if(lnot(method(arg_of(first, id), "defined")),
                        n + " is a defined tensor", n + " is an undefined tensor"));
  }
  for (NodeId id : tensors)
    if (id != dispatch) {
      std::string n = arg_name(first, first.node(id).arg_index);
      b.push_back(fail_if(method(arg_of(first, id), "device") !=
                              method(arg_of(first, dispatch), "device"),
                          n + " is on the device of " + dname,
                          n + " and " + dname + " are on different devices"));
    }
  // The kernels record nothing for autograd: a call that must be recorded
  // runs the original body, whose eager ops record it; or, with a compiled
  // backward, the kernels with recording off, then one node for the call.
  if (!tensors.empty() && compiled_backward) {
    std::vector<Expr> ptrs, args;
    for (NodeId id : tensors)
      ptrs.push_back(addr(arg_of(first, id)));
    for (size_t i = 0; i < spec.args.size(); ++i)
      args.push_back(arg(int(i)));
    args.push_back(nm("out0"));
    b.push_back(if_then(call("kiln::rt::autograd_records", {braces(ptrs)}),
                        {ret(call(spec.symbol + "_autograd", args))}));
  } else if (!tensors.empty()) {
    std::vector<Expr> ptrs;
    std::string names;
    for (NodeId id : tensors) {
      ptrs.push_back(addr(arg_of(first, id)));
      names += (names.empty() ? "" : ", ") +
               arg_name(first, first.node(id).arg_index);
    }
    b.push_back(fail_if(call("kiln::rt::autograd_records", {braces(ptrs)}),
                        "no tensor argument requires grad while autograd "
                        "records",
                        "an argument (" + names +
                            ") requires grad while autograd records: the "
                            "original body runs, its eager ops record"));
  }
  std::vector<Expr> call_args;
  for (size_t i = 0; i < spec.args.size(); ++i)
    call_args.push_back(arg(int(i)));
  for (size_t j = 0; j < spec.graph.outputs.size(); ++j)
    call_args.push_back(nm("out" + std::to_string(j)));
  std::string compiled;
  for (const Variant &var : variants)
    compiled += (compiled.empty() ? "" : ", ") + var.label;
  // One case per dtype of the dispatch argument; within it, the variants
  // of that dtype in order, each taken when its pinned arguments have its
  // dtypes (the variant checks every other dtype itself).
  std::vector<std::pair<std::vector<Expr>, Stmts>> cases;
  for (const Variant &var : variants) {
    auto it = std::find_if(cases.begin(), cases.end(), [&](const auto &c) {
      return c.first.front()->text == dtype_expr(var.dtype)->text;
    });
    if (it == cases.end()) {
      cases.push_back({{dtype_expr(var.dtype)}, {}});
      it = cases.end() - 1;
    }
    Stmt call_it = ret(call(spec.symbol + "_" + var.name, call_args));
    Expr cond;
    for (auto [arg_index, dt] : var.pinned) {
      if (arg_index == first.node(dispatch).arg_index)
        continue;
      Expr c = method(arg(arg_index), "dtype") == dtype_expr(dt);
      cond = cond ? cond && c : c;
    }
    it->second.push_back(cond ? if_then(cond, {call_it}) : call_it);
  }
  const bool pins = llvm::any_of(
      variants, [](const Variant &v) { return !v.pinned.empty(); });
  const std::string what = pins ? "the tensor arguments' dtypes are those of"
                                : "the dtype of " + dname + " is";
  Stmt failure = dtype_fail_if(
      spec, first, {},
      what + " " +
          (variants.size() == 1
               ? compiled + " (the variant compiled)"
               : "one of " + compiled + " (it picks the variant)"),
      (pins ? "the tensor arguments have dtypes" : dname + " has a dtype") +
          std::string(" this function was not compiled for (compiled for ") +
          compiled + ")");
  // Within a case the conditional variants come first (the dtype
  // profile's, every argument pinned, may share a dispatch dtype with a
  // variant that takes the rest). A case whose last variant is
  // conditional falls through to the failure after the switch.
  for (auto &c : cases) {
    Stmts ordered;
    for (bool conditional : {true, false})
      for (Stmt &s : c.second)
        if ((s.kind != Stmt::Return) == conditional)
          ordered.push_back(std::move(s));
    c.second = std::move(ordered);
  }
  bool falls = false;
  for (auto &c : cases)
    if (c.second.back().kind != Stmt::Return) {
      c.second.push_back(brk());
      falls = true;
    }
  cases.push_back({{Expr()}, {falls ? brk() : failure}});
  b.push_back(switch_on(method(arg_of(first, dispatch), "dtype"), std::move(cases)));
  if (falls)
    b.push_back(failure);
  return b;
}

} // namespace kiln::codegen

namespace kiln::low {

void lower_caller_checks(const codegen::FunctionSpec &spec, Program &p) {
  p.caller_checks.clear();
  p.num_caller_checks = spec.caller_checks.size();
  if (spec.caller_checks.empty())
    return;
  p.caller_checks.push_back(
      decl("constexpr const", "char *", "kFn", str_lit(spec.user_name)));
  for (auto [i, c] : llvm::enumerate(spec.caller_checks))
    p.caller_checks.push_back(guard_check(
        lnot(var("held" + std::to_string(i))), {c.check, c.message}));
  p.caller_checks.push_back(ret(lit("true")));
}

} // namespace kiln::low
