// Kernels and guards of a compiled function as data (explain.json, remarks).
//
// The guard list is read off the lowered program's GuardCheck statements,
// the very statements the host code is printed from: what explain.json and
// the remarks say is checked is what runs.
#include "Lower.h"

#include <kiln/passes/dot.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>

namespace kiln::codegen {

using ir::NodeId;

std::vector<KernelInfo> kernel_infos(const FunctionSpec &spec,
                                     const std::vector<Variant> &variants) {
  std::vector<KernelInfo> out;
  for (const Variant &v : variants) {
    const ir::Graph &g = v.graph;
    std::vector<std::string> names = ir::value_names(g);
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
      KernelInfo info;
      info.name = kernel_name(spec.symbol, int(ki), v.name);
      info.variant = v.name;
      info.reduction = k.kind == sched::Kernel::Kind::Reduction;
      info.product = k.kind == sched::Kernel::Kind::Product;
      info.passes = info.reduction ? k.passes : 1;
      if (v.plan.is_fused(int(ki)))
        info.runs = "when the outputs share one shape";
      else if (v.plan.alternative(int(ki)))
        info.runs = "when the outputs' shapes differ";
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

std::vector<GuardInfo> guard_infos(const low::Program &p) {
  std::vector<GuardInfo> guards;
  for (const low::Guard &g : low::guards_of(p.entry))
    guards.push_back({g.check, g.message, {}});
  for (const low::Guard &g : low::guards_of(p.caller_checks))
    guards.push_back({g.check, g.message, {}});
  const size_t first_variant_guard = guards.size();
  // A check made in several variants is listed once, with its variants.
  for (const low::Variant &v : p.variants)
    for (const low::Guard &g : low::guards_of(v.body)) {
      auto it = std::find_if(guards.begin() + first_variant_guard, guards.end(),
                             [&](const GuardInfo &gi) {
                               return gi.check == g.check &&
                                      gi.message == g.message;
                             });
      if (it != guards.end())
        it->variants.push_back(v.name);
      else
        guards.push_back({g.check, g.message, {v.name}});
    }
  for (GuardInfo &gi : guards)
    if (gi.variants.size() == p.variants.size())
      gi.variants.clear();
  return guards;
}

std::vector<VariantGraph> variant_graphs(const std::vector<Variant> &variants) {
  std::vector<VariantGraph> out;
  for (const Variant &v : variants)
    out.push_back({v.name, ir::print(v.graph),
                   ir::to_dot(v.graph, v.plan.kernel_of_node, "kernel")});
  return out;
}

} // namespace kiln::codegen
