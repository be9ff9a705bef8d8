// The rewrite driver of decompose, simplify and fold-constants: one walk
// over a graph in topological order that offers each node, its operands
// already rewritten, to a pass's rewrite, and builds the new graph from
// the answers. Rewrites that are patterns are written as KIR snippets
// (kiln/ops.def's decompositions, simplify's rules), matched and
// instantiated here.
#pragma once

#include <kiln/passes/ir.h>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <optional>

namespace kiln::passes {

// The node being rewritten: as the old graph has it (op, attributes, type,
// name, loc), with its operands as ids of the new graph.
struct Site {
  const ir::Node &node;
  llvm::ArrayRef<ir::NodeId> x;
  bool is_output; // the old graph returns it
};

// Appends a node's replacement to the new graph. Nodes it appends carry
// the location of the node being rewritten and are typed as they come.
class Rewriter {
public:
  explicit Rewriter(ir::GraphBuilder &b) : b_(b) {}
  const ir::Graph &g() const { return b_.graph(); }
  ir::Graph &graph() { return b_.graph(); } // the new graph
  const ir::Node &node(ir::NodeId id) const { return g().node(id); }

  // `op` on `operands`, with the dims and keepdim of `attrs` when given,
  // typed by infer_node_type: an error when the operands do not type.
  llvm::Expected<ir::NodeId> emit(ir::Op op,
                                  llvm::ArrayRef<ir::NodeId> operands,
                                  const ir::Node *attrs = nullptr,
                                  std::string name = "");
  ir::NodeId constant(double v, DType dt) { return b_.constant(v, dt, loc); }

  // `snippet`'s nodes with its arguments standing for `operands`: constants
  // as they are, every op through `emit_op` (given the snippet's node for
  // its op and attributes, and its operands in the new graph). Returns the
  // node of the snippet's result.
  using EmitOp = llvm::function_ref<llvm::Expected<ir::NodeId>(
      const ir::Node &, llvm::ArrayRef<ir::NodeId>)>;
  llvm::Expected<ir::NodeId> instantiate(const ir::Graph &snippet,
                                         llvm::ArrayRef<ir::NodeId> operands,
                                         EmitOp emit_op);
  // The same with every op emitted as it is.
  llvm::Expected<ir::NodeId> instantiate(const ir::Graph &snippet,
                                         llvm::ArrayRef<ir::NodeId> operands);

  // Drops what has been appended for the current node (a rejected try).
  void roll_back() { b_.graph().nodes.resize(mark); }

  ir::Loc loc;     // of the node being rewritten
  size_t mark = 0; // the new graph's size before the current node

private:
  ir::GraphBuilder &b_;
};

// What a pass makes of one node: std::nullopt keeps it (the driver copies
// it, dropping anything appended), a node of the new graph replaces it (one
// appended for it takes its name), an error stops the pass.
using RewriteResult = llvm::Expected<std::optional<ir::NodeId>>;
using RewriteFn =
    llvm::function_ref<RewriteResult(Rewriter &, const Site &)>;

// Rebuilds `g` (name, assumptions, checks, outputs) node by node through
// `rewrite`.
llvm::Expected<ir::Graph> rewrite_graph(const ir::Graph &g,
                                        RewriteFn rewrite);

// A snippet of KIR as the op table and the rule tables write them: `body`
// (statements, `;`-separated) in terms of the arguments %a, %b, ... (the
// first `num_args` letters), `result` the value it computes. `what` names
// it in parse errors.
llvm::Expected<ir::Graph> parse_snippet(llvm::StringRef what, int num_args,
                                        llvm::StringRef body,
                                        llvm::StringRef result = "%r");

// Matches `pattern` (a snippet) against `root` (its op and attributes)
// applied to `operands`, nodes of `g`: each pattern node must be a node of
// the same op and attributes, a constant one of equal value (+0.0 and -0.0
// alike), a pattern node used twice one node, and the operands of a
// COMMUTATIVE op may come in either order (the first order that matches
// is kept, without trying the other for the sake of a later operand). On
// success `args` holds the node each argument of the pattern stands for
// (-1 for one it does not use).
bool match(const ir::Graph &pattern, const ir::Graph &g, const ir::Node &root,
           llvm::ArrayRef<ir::NodeId> operands,
           llvm::SmallVectorImpl<ir::NodeId> &args);

} // namespace kiln::passes
