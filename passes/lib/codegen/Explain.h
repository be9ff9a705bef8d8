// Structured views of a compiled function for explain.json and the remarks:
// its kernels (what each fuses, what it costs in memory) and its guards.
#pragma once

#include "Emit.h"

#include <vector>

namespace kiln::codegen {

// Every variant's kernels, variant by variant, in plan order.
std::vector<KernelInfo> kernel_infos(const FunctionSpec &spec,
                                     const std::vector<Variant> &variants);

// The checks the fast path makes before it computes anything, in the order
// emit_host_function emits them, each with the message it logs on failure.
// A check every variant makes alike is listed once, for every call.
std::vector<GuardInfo> guard_infos(const std::vector<Variant> &variants,
                                   const Options &opts);

// The final graph of each variant (KIR and Graphviz, kernels as clusters).
std::vector<VariantGraph> variant_graphs(const std::vector<Variant> &variants);

} // namespace kiln::codegen
