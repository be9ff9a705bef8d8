// kiln/passes/passes.h - graph-to-graph optimisation passes and the pipeline.
//
// Each pass builds a new graph (GraphBuilder); node locations and names
// carry over. Passes after infer_types expect a typed graph. Rewrites keep
// IEEE semantics (NaN, inf, signed zero) unless PassOptions::unsafe_math.
#pragma once

#include <kiln/passes/ir.h>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::passes {

struct PassOptions {
  bool unsafe_math = false;    // value-changing rewrites (x+0 -> x, ...)
  int max_fixpoint_rounds = 8; // bound on repeating a `(...)` group
};

// A pass failed on a node (e.g. shapes that do not broadcast).
class PassError : public llvm::ErrorInfo<PassError> {
public:
  static char ID;
  PassError(ir::NodeId node, ir::Loc loc, std::string value,
            std::string message)
      : node(node), loc(std::move(loc)), value(std::move(value)),
        message(std::move(message)) {}
  // "file:line:col: message" when loc is valid, else "%value: message".
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  ir::NodeId node; // in the graph the failing pass was given
  ir::Loc loc;
  std::string value; // the node as printed in KIR ("%c")
  std::string message;
};

// Type of node `id` of `g` from its operands' types (which must be set).
// Broadcasting two different symbols keeps the first and appends the
// relation it assumes ("s0 == s1") to *assumptions when given.
llvm::Expected<ir::Type>
infer_node_type(const ir::Graph &g, ir::NodeId id,
                std::vector<std::string> *assumptions = nullptr);

// 1. Types of all nodes by the op table's rules; records assumptions.
llvm::Expected<ir::Graph> infer_types(const ir::Graph &g,
                                      const PassOptions &opts);
// 1b. Attention written as ops (softmax(q @ k^T * s + mask) @ v) becomes
// one attention node, before decompose takes softmax apart.
llvm::Expected<ir::Graph> fuse_attention(const ir::Graph &g,
                                         const PassOptions &opts);
// 2. Replaces ops that have a decomposition in kiln/ops.def, recursively;
// no composite op (mean, softmax, layer_norm, ...) remains.
llvm::Expected<ir::Graph> decompose(const ir::Graph &g,
                                    const PassOptions &opts);
// 3. Merges structurally identical nodes.
ir::Graph cse(const ir::Graph &g, const PassOptions &opts);
// 4. Drops nodes the outputs do not use (arguments stay).
ir::Graph dce(const ir::Graph &g, const PassOptions &opts);
// 5. Evaluates ops on constants whose result is a weak scalar, with the
// runtime's formulas (kiln::scalar::op_<name>), and reduce_size of a
// statically known shape.
ir::Graph fold_constants(const ir::Graph &g, const PassOptions &opts);
// 6. Algebraic identities (IEEE-safe ones; more under unsafe_math). Fails
// only when one of its rules (KIR patterns) does not parse: a Kiln bug.
llvm::Expected<ir::Graph> simplify(const ir::Graph &g,
                                   const PassOptions &opts);
// 7. Pointwise work after a concatenation along a dim counted from the end
// moves before it, piece by piece (`part` views of the other operands), so
// each piece is a pointwise value a kernel writes into the result.
llvm::Expected<ir::Graph> sink_cat(const ir::Graph &g,
                                   const PassOptions &opts);
// 7b. A layout op (view, reshape, transpose, permute, unsqueeze, squeeze,
// slice) of pointwise work on one tensor moves onto that tensor: the work
// is then done by the kernel reading the view, not written first.
llvm::Expected<ir::Graph> sink_views(const ir::Graph &g,
                                     const PassOptions &opts);
// 8. sum((x - mean(x))^2) over all of x's dims, as var(x) decomposes,
// becomes sum_sq_dev(x): one pass of Welford's update, beside the mean's
// sum, instead of a second pass after it (a launch less when split).
llvm::Expected<ir::Graph> welford(const ir::Graph &g, const PassOptions &opts);

// 9. The backward graph of a function of one floating output (AOTAutograd's
// backward half, Autodiff.cpp): its arguments are g's, then the output's
// gradient (`grad`, an Input numbered g.num_args()), then the saved values
// (below); its outputs the
// gradients of the tensor arguments that have one, in argument order,
// `grad_of` naming each one's arg_index. Values the derivatives read are
// recomputed from the arguments (g's nodes, copied). A gradient may be
// broadcast wider than its argument and have another floating dtype (the
// caller sums and converts it, as autograd does). An error names the node
// whose derivative cannot be derived at build time.
// Where the derivation needs it, tensor arguments that meet in pointwise
// ops are taken to have one shape: `same_shape` lists each such argument's
// arg_index with the one it must match, for the caller to check.
// The forward's reductions and matrix products the backward reads are
// saved, not recomputed:
// `saved` lists their node ids in g, each an argument of the backward after
// %grad, in that order. `dtype_from` pairs each of the backward's arguments
// after g's (grad, the saved values) with a node of the backward graph
// whose dtype it has (FunctionSpec::dtype_from).
struct Backward {
  ir::Graph graph;
  std::vector<int> grad_of;
  std::vector<std::pair<int, int>> same_shape;
  std::vector<ir::NodeId> saved;
  std::vector<std::pair<int, ir::NodeId>> dtype_from;
  // Arguments that must have 2 or more dims (a matrix product's operands
  // come from them): the caller checks.
  std::vector<int> rank2;
};
// `wrt`: the arg_index of each argument to differentiate for (empty: all).
llvm::Expected<Backward> derive_backward(const ir::Graph &g,
                                         llvm::ArrayRef<int> wrt = {});
// derive_backward as a pass (kiln-opt --passes=autodiff): the graph only.
llvm::Expected<ir::Graph> autodiff(const ir::Graph &g, const PassOptions &opts);

// --- Pipeline (Pipeline.cpp) ---

using AfterEach =
    llvm::function_ref<void(llvm::StringRef pass, const ir::Graph &g)>;

// The default pipeline as a pass list: names separated by commas, a
// parenthesised group repeats until the graph stops changing (bounded).
llvm::StringRef default_pipeline();
// Names of the registered passes.
std::vector<llvm::StringRef> pass_names();
// Runs a pass list such as "infer-types,(simplify,cse),dce". after_each is
// called with every pass's result (the debug dump writes each graph).
llvm::Expected<ir::Graph> run_passes(const ir::Graph &g, llvm::StringRef list,
                                     const PassOptions &opts,
                                     AfterEach after_each = nullptr);
llvm::Expected<ir::Graph> run_pipeline(const ir::Graph &g,
                                       const PassOptions &opts,
                                       AfterEach after_each = nullptr);

} // namespace kiln::passes
