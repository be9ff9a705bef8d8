// autograd_impl.h - how the runtime's ops record for autograd
// (kiln/autograd.h). An op opens a Recorder on its tensor inputs before it
// computes; when the Recorder is active (gradients enabled, an input
// requires grad) the op runs with recording off (its inner ops record
// nothing) and then attaches one node to its result.
#pragma once

#include <kiln/autograd.h>
#include <kiln/ops.h>
#include <kiln/view_kind.h>

#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace kiln::autograd {

// A backward function: the gradients of the node's inputs (in the order the
// Recorder was given them; an undefined tensor for none) from the gradient
// of its result and the tensors it saved. need[i] says whether input i's
// gradient is wanted. A gradient may have any shape that broadcasts with
// its input's and any floating dtype: the engine sums and converts it.
using BackwardFn = std::function<std::vector<Tensor>(
    const Tensor &grad, const std::vector<Tensor> &saved,
    const std::vector<bool> &need)>;

class Recorder {
public:
  Recorder(const char *name, std::initializer_list<const Tensor *> inputs);
  Recorder(const char *name, std::span<const Tensor> inputs);
  Recorder(const char *name, std::span<const Tensor *const> inputs);
  ~Recorder();
  Recorder(const Recorder &) = delete;
  Recorder &operator=(const Recorder &) = delete;

  explicit operator bool() const { return active_; }
  // Whether input i's gradient will be wanted.
  const std::vector<bool> &need() const { return need_; }
  // Attaches the node to `result` (a fresh tensor the op made).
  void finish(Tensor &result, std::vector<Tensor> saved, BackwardFn fn);
  // An in-place op: `target` (input `target_input` of the node, its old
  // value) now holds the result. Raises where the update cannot be
  // recorded soundly (see kiln/autograd.h).
  void finish_inplace(const Tensor &target, std::vector<Tensor> saved,
                      BackwardFn fn);

private:
  void start(const char *name, const Tensor *const *inputs, size_t n);
  const char *name_ = "";
  bool active_ = false;
  bool prev_mode_ = true;
  std::vector<bool> need_;
  std::vector<Tensor> inputs_; // handles: their history as of the op
};

// Checks that an in-place write into `target` may run with these operands
// while gradients are enabled (before the write happens); raises
// otherwise. Returns whether the write must be recorded.
bool check_inplace(const char *fn, const Tensor &target,
                   std::span<const Tensor *const> operands);

// The ops of kiln/ops.def, recorded with their table formulas.
// Pointwise: `operands` as the eager call got them; `target` for an
// in-place op (the result is written there; operand 0 is its old value,
// already cloned by the caller when the formula reads it).
void record_pointwise(Recorder &rec, OpId op,
                      std::initializer_list<Operand> operands, Tensor &result);
void record_pointwise_inplace(Recorder &rec, OpId op,
                              std::initializer_list<Operand> operands,
                              const Tensor &old_target, const Tensor &target);
// Whether the formula of `op` reads an operand that shares `target`'s
// storage (an in-place op must then keep its old value).
bool pointwise_reads_alias(OpId op, std::initializer_list<Operand> operands,
                           const Tensor &target);
// Reductions and row ops by their ops.def name ("sum", "layer_norm"):
// x, then the other tensor operands (weight, bias: undefined for none),
// then the scalar operands, in the table's operand order. dims: the
// reduced dims (wrapped; all of x's for a whole-tensor reduction).
void record_reduction(Recorder &rec, const char *name, const Tensor &x,
                      std::vector<const Tensor *> tensor_operands,
                      std::vector<double> scalar_operands,
                      std::vector<int64_t> dims, bool keepdim, Tensor &result);
// A layout op (ViewKind) with its integer arguments.
void record_view(Recorder &rec, ViewKind kind, std::span<const int64_t> args,
                 const Tensor &input, Tensor &result);

// Sums `g` over the dims it broadcasts against `sizes` (and drops the
// leading ones), then broadcasts it to `sizes`.
Tensor sum_to(const Tensor &g, const Dims &sizes);

} // namespace kiln::autograd
