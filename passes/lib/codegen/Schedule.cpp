// The scheduler for pointwise graphs.
//
// Every pointwise output is a function of the tensor arguments it reads,
// and its shape is the broadcast of theirs. Outputs that read the same set
// of tensor arguments therefore share one iteration space and fuse into one
// kernel; a kernel recomputes whatever pointwise producers its outputs need
// (recomputing a pointwise value is cheaper than a round trip to memory).
#include <kiln/passes/schedule.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <set>

namespace kiln::sched {

using ir::NodeId;
using ir::Op;

// Nodes needed to compute `root`, in topological order (by id).
static std::set<NodeId> closure(const ir::Graph &g, NodeId root) {
  std::set<NodeId> seen;
  std::vector<NodeId> work{root};
  while (!work.empty()) {
    NodeId n = work.back();
    work.pop_back();
    if (!seen.insert(n).second)
      continue;
    for (NodeId o : g.node(n).operands)
      work.push_back(o);
  }
  return seen;
}

KernelPlan schedule(const ir::Graph &g) {
  KernelPlan plan;
  plan.kernel_of_node.assign(g.nodes.size(), -1);
  std::map<std::set<NodeId>, int> kernel_of_inputs;
  std::vector<std::set<NodeId>> members;

  for (NodeId out : g.outputs) {
    const ir::Node &n = g.node(out);
    if (!ir::is_pointwise(n.op)) {
      plan.passthrough.push_back(out);
      continue;
    }
    std::set<NodeId> need = closure(g, out);
    std::set<NodeId> inputs;
    for (NodeId m : need)
      if (g.node(m).op == Op::Input)
        inputs.insert(m);
    auto [it, fresh] = kernel_of_inputs.try_emplace(inputs, plan.kernels.size());
    if (fresh) {
      plan.kernels.emplace_back();
      members.emplace_back();
    }
    Kernel &k = plan.kernels[it->second];
    if (!llvm::is_contained(k.outputs, out))
      k.outputs.push_back(out);
    members[it->second].insert(need.begin(), need.end());
  }

  for (auto [ki, k] : llvm::enumerate(plan.kernels)) {
    for (NodeId m : members[ki]) { // std::set: ascending id = topological
      const ir::Node &n = g.node(m);
      if (n.op == Op::Input)
        k.inputs.push_back(m);
      else if (n.op == Op::ScalarInput)
        k.scalars.push_back(m);
      else if (ir::is_pointwise(n.op)) {
        k.nodes.push_back(m);
        if (plan.kernel_of_node[m] < 0)
          plan.kernel_of_node[m] = int(ki);
      }
    }
  }
  return plan;
}

static std::string loc_str(const ir::Loc &l) {
  if (!l.valid())
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << l.file << ":" << l.line << ":" << l.col;
  return s;
}

std::string describe(const ir::Graph &g, const KernelPlan &plan) {
  std::vector<std::string> names = ir::value_names(g);
  auto value_name = [&](const ir::Graph &g, NodeId id) {
    const ir::Node &n = g.node(id);
    return n.op == Op::Constant ? ir::constant_text(n) : names[id];
  };
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "plan for @" << g.name << ": " << plan.kernels.size() << " kernel"
     << (plan.kernels.size() == 1 ? "" : "s") << "\n";
  for (auto [ki, k] : llvm::enumerate(plan.kernels)) {
    int read = 0, written = 0;
    for (NodeId i : k.inputs)
      read += element_size(g.node(i).type.dtype);
    for (NodeId o : k.outputs)
      written += element_size(g.node(o).type.dtype);
    os << "kernel " << ki << ": pointwise, " << k.nodes.size() << " op"
       << (k.nodes.size() == 1 ? "" : "s") << " fused; per element reads "
       << read << " B (" << k.inputs.size() << " tensor"
       << (k.inputs.size() == 1 ? "" : "s") << "), writes " << written
       << " B (" << k.outputs.size() << " tensor"
       << (k.outputs.size() == 1 ? "" : "s") << ")\n";
    os << "  iteration space: broadcast of";
    for (NodeId i : k.inputs)
      os << " " << value_name(g, i);
    os << "\n";
    for (NodeId m : k.nodes) {
      const ir::Node &n = g.node(m);
      os << "  " << value_name(g, m) << " = " << ir::op_info(n.op).name;
      for (auto [oi, o] : llvm::enumerate(n.operands))
        os << (oi ? ", " : " ") << value_name(g, o);
      std::string l = loc_str(n.loc);
      if (!l.empty())
        os << "    (" << l << ")";
      os << "\n";
    }
    os << "  writes";
    for (NodeId o : k.outputs)
      os << " " << value_name(g, o);
    os << "\n";
  }
  for (NodeId p : plan.passthrough)
    os << "output " << value_name(g, p) << ": returned as is (no kernel)\n";
  return s;
}

} // namespace kiln::sched
