// kiln/autograd.h - reverse-mode automatic differentiation for kiln::Tensor,
// with PyTorch's user model.
//
//   kiln::Tensor w = kiln::randn({4, 3}).requires_grad_();
//   kiln::Tensor loss = kiln::mean(kiln::relu(kiln::matmul(x, w)));
//   loss.backward();          // w.grad() now holds d loss / d w
//   { kiln::no_grad ng;       // an optimizer step: not recorded
//     w -= 0.1 * w.grad(); }
//
// While gradients are enabled (the default, per thread) every op whose
// operands require grad records a node: its derivative formula (kiln/ops.def,
// KILN_DERIVATIVE, beside the op) and the tensors that formula needs. The
// result requires grad and backward() walks the nodes in reverse, summing
// gradients over broadcast dims and accumulating them into the leaves'
// grad(). Gradients of integer and bool tensors are not computed, and
// comparisons, trunc_div and argmax are not differentiable (their results
// do not require grad).
//
// A [[kiln::compile]] function called with an argument that requires grad,
// while gradients are enabled, runs its original body (a guard; the remarks
// say so), so its ops are recorded as eager ops, unless it was compiled
// with its backward ([[kiln::compile("backward")]]): then its kernels run
// and one node records the call, whose backward runs the fused backward
// kernels the plugin derived at build time. Inside kiln::no_grad the
// compiled code runs.
//
// In-place updates are recorded when the updated tensor is the only holder
// of its storage (no view, other handle or saved copy shares it); otherwise
// they raise, as does an in-place update of a leaf that requires grad
// outside no_grad (PyTorch's rule). A tensor saved for backward and then
// written in place makes backward() raise (the storage's version moved).
// Not supported yet: gradients of gradients (backward builds no graph),
// hooks, retain_grad on non-leaves.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <initializer_list>
#include <vector>

KILN_API_BEGIN
namespace kiln {

// Whether ops record for autograd on this thread (true by default).
bool is_grad_enabled();
void set_grad_enabled(bool on);

// Scopes that switch recording off (no_grad) or on (enable_grad) on this
// thread, restoring the previous state when they end.
class no_grad {
public:
  no_grad();
  ~no_grad();
  no_grad(const no_grad &) = delete;
  no_grad &operator=(const no_grad &) = delete;

private:
  bool prev_;
};
class enable_grad {
public:
  enable_grad();
  ~enable_grad();
  enable_grad(const enable_grad &) = delete;
  enable_grad &operator=(const enable_grad &) = delete;

private:
  bool prev_;
};

} // namespace kiln

namespace kiln::rt {
// For compiled code's guards: true when gradients are enabled and one of
// the tensors requires grad (the compiled kernels record nothing, so the
// call runs the original body).
bool autograd_records(std::initializer_list<const Tensor *> tensors);
// For compiled code with a compiled backward ([[kiln::compile("backward")]]):
// records one node for a call whose kernels ran without recording.
// `inputs` are the call's tensor arguments (their gradients are the node's
// outputs, in that order), `saved` the tensors the backward reads (kept as
// autograd keeps saved tensors: a later in-place write makes backward()
// raise), `scalars` the call's scalar arguments. `fn` returns one gradient
// per input (undefined: none); a gradient may be broadcast wider than its
// input and have another floating dtype (autograd sums and converts it).
// Does nothing when no input requires grad or gradients are disabled.
using CompiledBackward = std::vector<Tensor> (*)(
    const Tensor &grad, const std::vector<Tensor> &saved,
    const std::vector<double> &scalars);
void record_compiled(const char *name,
                     std::initializer_list<const Tensor *> inputs,
                     Tensor &result, std::vector<Tensor> saved,
                     std::vector<double> scalars, CompiledBackward fn);
// A compiled backward whose fast path and eager fallback both declined:
// raises kiln::Error naming the function.
[[noreturn]] void compiled_backward_failed(const char *name);
// For compiled code that wrote a tensor argument in place: moves its
// storage's version, as an eager in-place op does.
inline void bump_version(const Tensor &t) {
  if (t.defined())
    const_cast<Storage *>(t.storage())
        ->version.fetch_add(1, std::memory_order_relaxed);
}
} // namespace kiln::rt
KILN_API_END
