// kiln/passes/schedule.h - the scheduler: which nodes run in which kernel.
//
// Pointwise nodes that feed the same output iteration space fuse into one
// kernel (TorchInductor's scheduler, for the pointwise case). Values that
// a kernel needs from outside are its inputs (graph arguments and constants
// are passed or inlined; values made by another kernel are read from
// memory); values the graph returns are its outputs.
#pragma once

#include <kiln/passes/ir.h>

#include <string>
#include <vector>

namespace kiln::sched {

struct Kernel {
  std::vector<ir::NodeId> nodes;   // computed in the kernel, topological order
  std::vector<ir::NodeId> inputs;  // tensor values read from memory, in order
  std::vector<ir::NodeId> scalars; // ScalarInput nodes passed by value
  std::vector<ir::NodeId> outputs; // values written to memory, in order
};

struct KernelPlan {
  std::vector<Kernel> kernels;
  // Graph outputs that are no kernel's output (a returned argument).
  std::vector<ir::NodeId> passthrough;
  // The kernel each node is computed in, or -1 (arguments, constants).
  std::vector<int> kernel_of_node;
};

KernelPlan schedule(const ir::Graph &g);

// Human-readable plan: per kernel, the ops it fuses (with source lines),
// what it reads and writes per element.
std::string describe(const ir::Graph &g, const KernelPlan &plan);

} // namespace kiln::sched
