// plugin/EagerBackend.h - [[kiln::compile("backend=eager")]]: the captured
// graph run node by node with the eager ops of kiln/ops.h, behind the same
// fast-path signature as generated code. It tells a capture bug (the eager
// graph disagrees with the original statements) from a codegen bug (the
// fused code disagrees with the eager graph), like torch.compile's
// backend="eager".
#pragma once

#include <kiln/passes/codegen.h>

namespace kiln::plugin {

// Host code defining spec.symbol; `error` set when a node has no eager
// counterpart.
codegen::FunctionCode eager_function(const codegen::FunctionSpec &spec);

} // namespace kiln::plugin
