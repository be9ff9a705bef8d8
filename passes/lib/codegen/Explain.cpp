// Kernels and guards of a compiled function as data (explain.json, remarks).
//
// The guard list restates the checks HostFunction.cpp emits, with the very
// messages it logs; test/plugin/debug/guards-match-host.cpp fails when the
// two drift apart.
#include "Explain.h"

#include <kiln/passes/dot.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>

#include <set>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;

std::vector<KernelInfo> kernel_infos(const FunctionSpec &spec,
                                     const std::vector<Variant> &variants) {
  std::vector<KernelInfo> out;
  for (const Variant &v : variants) {
    const ir::Graph &g = v.graph;
    std::vector<std::string> names = ir::value_names(g);
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
      KernelInfo info;
      info.name = kernel_name(spec.symbol, int(ki), v.dtype, "");
      info.name.pop_back(); // the '_' before the (empty) flavour
      info.variant = v.dtype;
      info.reduction = k.kind == sched::Kernel::Kind::Reduction;
      info.passes = info.reduction ? k.passes : 1;
      for (NodeId m : k.nodes)
        info.ops.push_back({ir::op_info(g.node(m).op).name, names[m],
                            g.node(m).loc});
      for (NodeId i : k.inputs) {
        info.inputs.push_back(names[i]);
        info.reads_bytes_per_element += element_size(g.node(i).type.dtype);
      }
      for (NodeId o : k.outputs) {
        info.outputs.push_back(names[o]);
        // A reduced output is written once per row, not per element.
        if (!info.reduction || k.role[o] == sched::Role::Full)
          info.writes_bytes_per_element += element_size(g.node(o).type.dtype);
      }
      out.push_back(std::move(info));
    }
  }
  return out;
}

namespace {

struct GuardList {
  std::vector<GuardInfo> guards;
  size_t first_variant_guard = 0;

  void every_call(std::string check, std::string message) {
    guards.push_back({std::move(check), std::move(message), {}});
    first_variant_guard = guards.size();
  }
  // A check made in variant `dt`: merged with the same check of another
  // variant.
  void in_variant(DType dt, std::string check, std::string message) {
    for (size_t i = first_variant_guard; i < guards.size(); ++i)
      if (guards[i].check == check && guards[i].message == message) {
        guards[i].variants.push_back(dt);
        return;
      }
    guards.push_back({std::move(check), std::move(message), {dt}});
  }
};

void reduction_guards(GuardList &gl, const Variant &v, size_t ki,
                      const sched::Kernel &k) {
  const ir::Graph &g = v.graph;
  std::vector<std::string> names = ir::value_names(g);
  std::string kn = "kernel " + std::to_string(ki) + ": ";
  std::string dims = "[";
  for (auto [i, d] : llvm::enumerate(k.dims))
    dims += (i ? ", " : "") + std::to_string(d);
  dims += "]";
  gl.in_variant(v.dtype, kn + "the shapes of " + input_names(g, k) +
                             " broadcast together",
                "the shapes of " + input_names(g, k) + " do not broadcast");
  gl.in_variant(v.dtype,
                kn + (k.dims.empty() ? "the reduction over all dims has a "
                                       "shape to reduce"
                                     : "the reduced dims " + dims +
                                           " are in range and adjacent"),
                "the reduced dims are out of range or not adjacent for this "
                "shape");
  bool extreme = false;
  for (NodeId r : k.reductions)
    extreme |= ir::empty_reduction_raises(g.node(r).op);
  if (extreme)
    gl.in_variant(v.dtype,
                  kn + "the reduced extent is not 0 when there are rows "
                       "(amax, amin, argmax)",
                  "amax, amin and argmax of an empty dimension are errors");
  std::set<NodeId> all(k.inputs.begin(), k.inputs.end());
  auto whole = [&](NodeId id, const std::string &what,
                   const std::string &message) {
    std::set<NodeId> ins;
    bool reduced = false;
    full_leaves(k, g, id, ins, reduced);
    if (ins != all)
      gl.in_variant(v.dtype,
                    kn + what + " has the shape of the whole reduction",
                    message);
  };
  for (NodeId r : k.reductions)
    whole(g.node(r).operands[0],
          names[g.node(r).operands[0]] + " (reduced by " + names[r] + ")",
          "a reduced value does not have the shape of the whole reduction");
  for (NodeId o : k.outputs)
    if (k.role[o] == sched::Role::Full)
      whole(o, "the output " + names[o],
            "an output does not have the shape of the whole reduction");
}

} // namespace

std::vector<GuardInfo> guard_infos(const std::vector<Variant> &variants,
                                   const Options &opts) {
  GuardList gl;
  const ir::Graph &first = variants.front().graph;
  NodeId dispatch = dispatch_arg(variants.front());
  std::string dname = arg_name(first, first.node(dispatch).arg_index);

  // The entry function: defined, one device, the dtype picks the variant.
  std::vector<NodeId> tensors;
  for (NodeId id : first.args())
    if (first.node(id).op == Op::Input)
      tensors.push_back(id);
  for (NodeId id : tensors) {
    std::string n = arg_name(first, first.node(id).arg_index);
    gl.every_call(n + " is a defined tensor", n + " is an undefined tensor");
  }
  for (NodeId id : tensors)
    if (id != dispatch) {
      std::string n = arg_name(first, first.node(id).arg_index);
      gl.every_call(n + " is on the device of " + dname,
                    n + " and " + dname + " are on different devices");
    }
  std::string compiled;
  for (const Variant &v : variants)
    compiled += (compiled.empty() ? "" : ", ") + std::string(dtype_name(v.dtype));
  gl.every_call("the dtype of " + dname + " is " +
                    (variants.size() == 1 ? compiled + " (the variant compiled)"
                                          : "one of " + compiled +
                                                " (it picks the variant)"),
                dname + " has a dtype this function was not compiled for "
                        "(compiled for " + compiled + ")");

  // Each variant: the other arguments' dtypes, every kernel's iteration
  // space, the device, then (reductions) the layouts.
  for (const Variant &v : variants) {
    const ir::Graph &g = v.graph;
    NodeId vd = dispatch_arg(v);
    std::string vdname = arg_name(g, g.node(vd).arg_index);
    for (NodeId id : g.args()) {
      const ir::Node &n = g.node(id);
      if (n.op != Op::Input || id == vd)
        continue;
      std::string like = n.type.dtype == v.dtype ? " like " + vdname : "";
      std::string an = arg_name(g, n.arg_index);
      std::string dt = dtype_name(n.type.dtype);
      gl.in_variant(v.dtype, an + " is " + dt + like,
                    an + " is not " + dt + like);
    }
    for (const ir::ShapeCheck &c : g.checks)
      if (c.raises)
        gl.in_variant(v.dtype, shape_check_text(c), shape_check_message(c));
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
      if (k.kind == sched::Kernel::Kind::Reduction) {
        reduction_guards(gl, v, ki, k);
        continue;
      }
      gl.in_variant(v.dtype,
                    "kernel " + std::to_string(ki) + ": the shapes of " +
                        input_names(g, k) + " broadcast together",
                    "the shapes of " + input_names(g, k) + " do not broadcast");
    }
    gl.in_variant(v.dtype,
                  opts.cuda ? "on a CUDA device, this file's CUDA kernels "
                              "were built (nvcc ran)"
                            : "the tensors are on the CPU (no CUDA kernels "
                              "were generated)",
                  "why this file has no CUDA kernels (e.g. \"nvcc was not "
                  "found when this file was compiled\")");
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels))
      if (k.kind == sched::Kernel::Kind::Reduction)
        for (NodeId in : k.inputs) {
          std::string an = arg_name(g, g.node(in).arg_index);
          gl.in_variant(v.dtype,
                        "kernel " + std::to_string(ki) + ": " + an +
                            " has a layout the reduction can walk as rows",
                        an + " has a layout the reduction cannot walk as rows");
        }
  }
  for (GuardInfo &gi : gl.guards)
    if (gi.variants.size() == variants.size())
      gi.variants.clear();
  return gl.guards;
}

std::vector<VariantGraph> variant_graphs(const std::vector<Variant> &variants) {
  std::vector<VariantGraph> out;
  for (const Variant &v : variants)
    out.push_back({v.dtype, ir::print(v.graph),
                   ir::to_dot(v.graph, v.plan.kernel_of_node, "kernel")});
  return out;
}

} // namespace kiln::codegen
