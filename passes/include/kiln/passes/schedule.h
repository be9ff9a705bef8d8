// kiln/passes/schedule.h - the scheduler: which nodes run in which kernel.
//
// Pointwise kernels: pointwise nodes that feed outputs of the same
// iteration space fuse into one kernel (TorchInductor's scheduler, for the
// pointwise case).
//
// Reduction kernels: a graph with reductions over one set of dims runs as
// one kernel over a canonical space [outer, R, inner], R the reduced
// extent. Every value is either *full* (one per element of the space) or
// *reduced* (one per row, i.e. per (outer, inner)). The kernel runs in
// passes: pass p computes the full values of phase <= p that it needs and
// accumulates the reductions of phase p; their results are available to
// later passes. Softmax is three passes (amax, sum, write), layer norm
// three, RMS norm two, `where(sum(x) > t, 2x, x)` two. How a pass reaches
// memory (rows in registers, re-reading long rows, one launch per pass
// for few long rows) is the code generator's choice at run time.
//
// Graphs one such kernel cannot compute (reductions over different dims,
// a reduction of a reduced value) run as several kernels, in the order of
// their data: a kernel's inputs are then tensor arguments and values an
// earlier kernel of the plan writes (Kernel::inputs holds both).
#pragma once

#include <kiln/passes/ir.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::sched {

enum class Role : uint8_t { None, Full, Reduced };

struct Kernel {
  // Product: a library GEMM (kiln::gen::product) with its epilogue, not
  // generated code.
  enum class Kind : uint8_t { Pointwise, Reduction, Product } kind = Kind::Pointwise;
  std::vector<ir::NodeId> nodes;   // computed in the kernel, topological order
  // Tensor values read from memory, in order: arguments, and values an
  // earlier kernel of the plan writes.
  std::vector<ir::NodeId> inputs;
  // Host scalars passed by value: ScalarInput nodes and values computed
  // from them on the host (is_host_scalar).
  std::vector<ir::NodeId> scalars;
  std::vector<ir::NodeId> outputs; // values written to memory, in order

  // Outputs the kernel may write straight into the tensor the caller
  // copies them into (an in-place update; plan_in_place): `output`, the
  // position in `outputs`; `result`, the graph output; `input`, the
  // position in `inputs` of that same tensor, or -1 when the kernel does
  // not read it. The pointers of such a pair may be equal, so neither is
  // __restrict__ (restricted_input/output).
  struct WriteInto {
    int output, result, input;
  };
  std::vector<WriteInto> write_into;
  bool restricted_input(int x) const {
    return llvm::none_of(write_into, [&](const WriteInto &w) { return w.input == x; });
  }
  bool restricted_output(int y) const {
    return llvm::none_of(write_into, [&](const WriteInto &w) {
      return w.output == y && w.input >= 0;
    });
  }

  // Product kernels only: the matmul or linear node, and its epilogue: a
  // bias and one more addend (tensors added to the product, -1: none) and
  // the activation node (relu, gelu, gelu_tanh; -1: none). inputs are the
  // product's operands, then the bias and the addend; outputs, the
  // epilogue's last node.
  ir::NodeId product = -1, bias = -1, addend = -1, act = -1;

  // Reduction kernels only.
  llvm::SmallVector<int64_t, 2> dims; // as written; empty = all dims
  // Per graph node: a reduced value without the reduced dims (from
  // keepdim=false reductions) rather than with them as size 1.
  std::vector<bool> drop;
  std::vector<ir::NodeId> reductions; // reduction nodes, topological order
  int passes = 1;                     // 1 + the longest chain of reductions
  std::vector<Role> role;   // per graph node
  std::vector<int> phase;   // per graph node: the pass that can compute it
  // Per graph node: bit p is set when the full value is used in pass p.
  std::vector<unsigned> need;
};

struct KernelPlan {
  std::vector<Kernel> kernels;
  // Graph outputs that are no kernel's output (a returned argument).
  std::vector<ir::NodeId> passthrough;
  // The kernel each node is computed in, or -1 (arguments, constants).
  std::vector<int> kernel_of_node;
  // Multi-output fusion (pointwise kernels whose outputs read different
  // sets of inputs): kernel `fused` writes every output in one pass over
  // the broadcast of all the inputs. It runs when each output has that
  // shape; otherwise kernels `unfused` run in its place, one per set of
  // inputs, each over its own outputs' shape. One entry per pointwise
  // group that has such a choice.
  struct MultiOutput {
    int fused = -1;
    std::vector<int> unfused;
  };
  std::vector<MultiOutput> multi;
  // The choice kernel ki is the multi-output kernel of, or null.
  const MultiOutput *multi_of(int ki) const {
    for (const MultiOutput &m : multi)
      if (m.fused == ki)
        return &m;
    return nullptr;
  }
  bool is_fused(int ki) const { return multi_of(ki) != nullptr; }
  // Whether kernel ki is one of the alternatives above rather than a kernel
  // every call launches.
  bool alternative(int ki) const {
    return llvm::any_of(multi, [&](const MultiOutput &m) {
      return ki == m.fused || llvm::is_contained(m.unfused, ki);
    });
  }
  // Whether kernel ki is a per-input-set kernel replacing a multi-output one.
  bool is_unfused(int ki) const {
    return llvm::any_of(multi, [&](const MultiOutput &m) {
      return llvm::is_contained(m.unfused, ki);
    });
  }
  size_t unfused_count() const {
    size_t n = 0;
    for (const MultiOutput &m : multi)
      n += m.unfused.size();
    return n;
  }
  // Concatenations written in place: into_cat[id] is the cat node whose
  // result value id is a piece of (the kernel writing id writes it into
  // that piece; a cat that is itself such a piece is a view of the outer
  // result), or -1. Only a pointwise kernel's output or a cat's result of
  // the cat's dtype, used by nothing else, is written in place; the cat
  // kernel copies the other tensors.
  std::vector<ir::NodeId> into_cat;
  ir::NodeId cat_of(ir::NodeId id) const {
    return size_t(id) < into_cat.size() ? into_cat[id] : -1;
  }
  // Copies into arguments written in place: into_store[id] is the store
  // node (ir::Op::Store) whose source value id is, when a pointwise
  // kernel computes id (or id is a cat whose pieces kernels write) for
  // nothing else, in the destination's dtype, and
  // the destination is a view of the argument itself (made before the
  // first launch): the kernel writes id straight into the destination,
  // through its strides, where id's shape is the destination's at run
  // time (kiln::gen::store_target), and the store's copy, a tensor onto
  // itself, then does nothing. Else -1.
  std::vector<ir::NodeId> into_store;
  ir::NodeId store_of(ir::NodeId id) const {
    return size_t(id) < into_store.size() ? into_store[id] : -1;
  }
  // Concatenations along the key dim that attention reads in pieces
  // (kiln::gen::attention_pieces: a key/value cache and the new token's key
  // and value): the cat kernel launches nothing; its result is not in
  // memory unless it is also a graph output, which the attention kernel
  // then writes as it reads the pieces.
  std::vector<ir::NodeId> pieces_read;
  bool read_in_pieces(ir::NodeId c) const {
    return llvm::is_contained(pieces_read, c);
  }
  // Whether cat node c has a piece written in place.
  bool cat_in_place(ir::NodeId c) const {
    return llvm::is_contained(into_cat, c);
  }
  // Whether the host allocates cat c's result before the first launch: a
  // kernel writes a piece of it, or it is itself a piece of another.
  bool cat_allocated_first(ir::NodeId c) const {
    return cat_in_place(c) || cat_of(c) >= 0;
  }
  // Kernels a call launches when the outputs share one shape.
  size_t launched() const {
    return kernels.size() - unfused_count() - in_place_cats();
  }
  // Kernels a call launches when the outputs' shapes differ.
  size_t launched_apart() const {
    return kernels.size() - multi.size() - in_place_cats();
  }
  // Whether kernel k is a cat whose every tensor a kernel wrote into its
  // piece, or that attention reads in pieces: it launches nothing.
  bool copies_nothing(const Kernel &k) const {
    return k.kind == Kernel::Kind::Product && !k.inputs.empty() &&
           (cat_tensors(k, false).empty() || read_in_pieces(k.product));
  }
  // A cat kernel's tensors that kernels wrote into their pieces (written:
  // true) or that the runtime copies (false), in order.
  std::vector<ir::NodeId> cat_tensors(const Kernel &k, bool written) const {
    std::vector<ir::NodeId> ts;
    for (ir::NodeId t : k.inputs)
      if ((cat_of(t) == k.product) == written)
        ts.push_back(t);
    return ts;
  }
  size_t in_place_cats() const {
    return size_t(llvm::count_if(kernels, [&](const Kernel &k) { return copies_nothing(k); }));
  }
};

// Fails (with a message naming the node) on graphs the code generator
// cannot run yet, e.g. a reduced extent outside a kernel reducing those
// dims.
llvm::Expected<KernelPlan> schedule(const ir::Graph &g);

// A weak scalar the host computes once per call from scalar arguments and
// constants (`1.0 / std::sqrt(double(n))`), before the launches, with the
// runtime's formulas: kernels take it as a parameter. Not reduce_size (the
// kernel counts its row) nor what depends on it.
bool is_host_scalar(const ir::Graph &g, ir::NodeId id);

// In-place updates written through: into[j] says whether graph output j
// is copied into a tensor after the call (codegen::FunctionSpec::into:
// kNotInto -1, kInto -2 for a tensor no argument is, else that argument's
// index). A pointwise kernel writing output j may write it into that
// tensor instead, element by element as it reads the tensor's old value,
// when no other kernel the call launches with it reads that argument
// (it would see the new values) and no other output is copied into the
// same value. Fills Kernel::write_into; the host code still checks at
// run time that the tensor has the output's shape, dtype and a dense
// layout.
void plan_in_place(const ir::Graph &g, const std::vector<int> &into,
                   KernelPlan &plan);

// Human-readable plan: per kernel, the ops it fuses (with source lines),
// its passes, what it reads and writes per element.
std::string describe(const ir::Graph &g, const KernelPlan &plan);

} // namespace kiln::sched
