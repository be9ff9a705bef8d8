// kiln/passes/dot.h - Graphviz view of a graph.
#pragma once

#include <kiln/passes/ir.h>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>

namespace kiln::ir {

// A `digraph`: one box per node labelled "%name = op : type" (reductions
// with their attributes: "%s = sum {dims=[-1], keepdim=false} : f32[4]"),
// edges from operand to user, the outputs marked. When group_of_node is
// given (one entry per node, e.g. the kernel each node went to), nodes with
// the same group id >= 0 are drawn inside one cluster, labelled
// "<group_label> <id>".
std::string to_dot(const Graph &g, llvm::ArrayRef<int> group_of_node = {},
                   llvm::StringRef group_label = "group");

} // namespace kiln::ir
