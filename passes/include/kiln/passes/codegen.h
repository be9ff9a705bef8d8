// kiln/passes/codegen.h - from a captured graph to CUDA and host C++ text.
//
// The plugin calls this in two phases:
//   1. compile_function() for each [[kiln::compile]] function, when its body
//      is captured: specialises the graph per dtype, optimises, schedules
//      (fusion), and generates the CUDA kernels and the host code (guards,
//      launchers, fused CPU loops) of that function;
//   2. cuda_translation_unit() / host_translation_unit() once per TU, to
//      assemble every function's code into one .cu (one nvcc run) and one
//      host .cpp that embeds the fatbin and defines each fast-path function.
//
// The fast-path function of a user function has the C++ signature
//     bool <symbol>(<args>..., kiln::Tensor *out0, ...)
// with one parameter per graph argument, in arg_index order (a Tensor
// argument is `const kiln::Tensor &`, a Double `double`, an Int64
// `int64_t`, a Bool `bool`), then one `kiln::Tensor *` per graph output.
// It returns true when it computed the outputs, false when a guard failed
// (it has then counted the failure and the fallback, and the caller runs
// the original body). Its definition carries `__asm__("<symbol>")`, so the
// caller can declare it with the same asm label.
#pragma once

#include <kiln/passes/ir.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::codegen {

enum class ArgKind { Tensor, Double, Int64, Bool };

// C++ parameter type of an argument kind in the fast-path signature.
const char *cxx_param_type(ArgKind k);

struct Options {
  // Dtypes to specialise for: the compiled path runs when all tensor
  // arguments share one of these dtypes (guarded at run time).
  std::vector<DType> dtypes = {DType::f32, DType::f16, DType::bf16,
                               DType::f64};
  bool cuda = true; // generate CUDA kernels (false: nvcc missing or disabled)
  bool cpu = true;  // generate fused CPU loops
  // Value-changing rewrites (e.g. sin(x)^2 + cos(x)^2 -> 1); off by default.
  bool unsafe_math = false;
  // mode=reduce-overhead: the entry replays a call's kernels as a CUDA
  // graph (kiln/rt.h, graph_call).
  bool cuda_graphs = false;
  // mode=max-autotune[-no-cudagraphs]: the fast path holds a
  // kiln::gen::AutotuneScope, so its GEMMs are autotuned (kiln/matmul.h).
  bool autotune = false;
  // [[kiln::compile("backward")]]: also derive, fuse and compile the
  // function's backward (AOTAutograd), so a call autograd records runs the
  // kernels and records one node whose backward runs the backward's
  // kernels. Where it cannot be derived, a remark says why and such calls
  // run the original body, as without the option.
  bool backward = false;
  // "backward=x,w": the tensor arguments (by name) whose gradients it
  // computes; empty: every floating one. A call where another requires
  // grad runs the original body.
  std::vector<std::string> backward_args;
};

// An assumption of the fast path that only its caller can check, as it
// sees names the graph does not (two references to one object, a tensor
// updated in place sharing storage with another).
struct CallerCheck {
  std::string check;   // what must hold, in words
  std::string message; // what a failure logs
};

struct FunctionSpec {
  ir::Graph graph;           // as captured; tensor inputs may have any dtype
  std::vector<ArgKind> args; // one per graph argument, in arg_index order
  std::string user_name;     // the user's function, for logs ("sin_plus_cos")
  std::string symbol;        // the fast-path function's symbol
  ir::Loc loc;               // where the user's function is
  // The caller evaluates each and passes it, true when it holds, to
  // caller_checks_symbol(symbol), which logs the first that fails.
  std::vector<CallerCheck> caller_checks;
  // Per graph output (empty: none): whether the caller copies the result
  // into a tensor (an in-place update, `t.copy_(out)`): kInto when it is
  // no argument's, else the index of the argument it is. The caller passes
  // that tensor in *out<j>, and the fast path may write the result into it
  // directly (the copy is then of the tensor onto itself: nothing).
  static constexpr int kNotInto = -1, kInto = -2;
  std::vector<int> into;
  // Per graph argument (empty, or shorter than args: none): the dtypes a
  // tensor argument is compiled for whatever the others' dtype
  // ([[kiln::dtype("i64")]] on its parameter). An argument with none takes
  // each dtype of Options::dtypes; the variants are every combination.
  std::vector<std::vector<DType>> arg_dtypes;
  // Per entry: argument `first` has, in each variant, the dtype graph value
  // `second` has there (a compiled backward's gradient: the dtype of the
  // forward's output, which the backward graph recomputes).
  std::vector<std::pair<int, ir::NodeId>> dtype_from;
  // Combinations of the tensor arguments' dtypes seen at run time by a
  // failing dtype guard (the dtype profile: KILN_DTYPE_PROFILE, read back
  // by -fplugin-arg-kiln-dtype-profile): per entry, each argument's name
  // and dtype. Each one no other variant covers is one more variant, every
  // tensor argument pinned to the dtype seen.
  std::vector<std::vector<std::pair<std::string, DType>>> observed_dtypes;
};

// A dtype profile: per fast-path symbol, the argument dtype combinations
// its failing dtype guards recorded (kiln::rt::note_dtypes writes the
// lines: "<symbol> <name>=<dtype>... # <function>"; blank lines and text
// after '#' are ignored). Lines that do not parse are counted in `bad`.
struct DtypeProfile {
  std::map<std::string,
           std::vector<std::vector<std::pair<std::string, DType>>>>
      by_symbol;
  int bad = 0;
};
DtypeProfile parse_dtype_profile(const std::string &text);

// `bool <symbol>_aliased(bool held0, ...)`: the host code's function that
// checks a FunctionSpec's caller_checks (none when it has none).
inline std::string caller_checks_symbol(const std::string &symbol) {
  return symbol + "_aliased";
}

// A remark for the user: where, and what Kiln did or could not do.
struct Remark {
  ir::Loc loc;
  std::string message;
};

// One op a fused kernel computes, for explain.json and the debug dump.
struct KernelOp {
  std::string op;    // KIR mnemonic ("sin")
  std::string value; // the value it computes, as KIR names it ("%a")
  ir::Loc loc;       // where the user wrote it
};

// One fused kernel of one dtype variant: what went into it and the memory
// traffic it costs per element of its iteration space.
struct KernelInfo {
  std::string name; // <symbol>_k<i>_<dtype>: the prefix of its CUDA kernels
                    // and CPU loops
  std::string variant; // its variant's name ("f32", "bf16_f32")
  bool reduction = false;
  bool product = false; // a library GEMM and its epilogue (no generated code)
  std::vector<KernelOp> ops;       // in the order the kernel computes them
  std::vector<std::string> inputs; // tensors read (KIR names)
  std::vector<std::string> outputs; // values written (KIR names)
  int reads_bytes_per_element = 0;
  int writes_bytes_per_element = 0; // reductions: full-size outputs only
  int passes = 1; // passes over each row (reductions); 1 for pointwise
  // When a call launches it: "always", "when the outputs share one shape"
  // (the multi-output kernel) or "when the outputs' shapes differ" (the
  // per-input-set kernels that run in its place).
  std::string runs = "always";
};

// One run-time check of the fast path, as the host code makes it. A failed
// check logs `message` (KILN_LOGS=guards) and the eager body runs.
struct GuardInfo {
  std::string check;   // what must hold, in words
  std::string message; // what a failure logs
  // The variants (names) that make the check; empty: every call does.
  std::vector<std::string> variants;
};

// The graph a dtype variant ended with, after every pass.
struct VariantGraph {
  std::string variant; // its name ("f32", "bf16_f32")
  std::string kir;
  std::string dot; // Graphviz, one cluster per fused kernel
};

// A function's compiled backward ([[kiln::compile("backward")]]), for
// explain.json and the remarks.
struct BackwardInfo {
  // "off" (not asked for), "compiled", or why there is none.
  std::string status = "off";
  // What it saves beyond the tensor arguments ("'h' (linear, line 12)"):
  // values written by the forward when autograd records a call, each of
  // the size its value has at run time.
  std::vector<std::string> saved;
  // What it assumes, checked when a call is recorded.
  std::vector<std::string> assumptions;
  size_t gradients = 0; // arguments whose gradients it computes
};

struct FunctionCode {
  // Non-empty when the function cannot be compiled (then nothing else is
  // set): the plugin warns at error_loc and leaves the function eager.
  std::string error;
  ir::Loc error_loc;
  std::string symbol;
  std::string user_name;
  std::string cuda;   // kernels (no includes; see cuda_translation_unit)
  std::string host;   // CPU loops and the fast-path function definition
  std::string plan;   // human-readable kernel plan
  std::string lowered; // the lowered program as text (low::print_text)
  std::vector<Remark> remarks;
  // Graphs after each pass, for the debug dump: (pass name, KIR text).
  std::vector<std::pair<std::string, std::string>> pass_dumps;
  std::vector<std::string> kernel_names;
  bool has_cuda_kernels = false;
  // Structured views of the above, for explain.json and the remarks (which
  // are made from these lists, so the two agree).
  std::vector<KernelInfo> kernels; // every variant's, variant by variant
  std::vector<GuardInfo> guards;   // in the order the host code checks them
  std::vector<VariantGraph> graphs; // per compiled variant
  BackwardInfo backward;
};

FunctionCode compile_function(const FunctionSpec &spec, const Options &opts);

// [[kiln::compile("backend=eager")]]: the captured graph run node by node
// with the eager ops of kiln/ops.h, behind the same fast-path signature as
// generated code. It tells a capture bug (the eager graph disagrees with
// the original statements) from a codegen bug (the fused code disagrees
// with the eager graph), like torch.compile's backend="eager"; and it is a
// compiled backward's fallback. `error` is set when a node has no eager
// counterpart.
FunctionCode eager_function(const FunctionSpec &spec);

// One .cu for the whole TU (includes kiln/scalar.h and kiln/kernel_abi.h).
std::string cuda_translation_unit(const std::vector<FunctionCode> &fns);

// One host .cpp for the whole TU. `fatbin` is the nvcc output for
// cuda_translation_unit(fns), or empty when there is none: then, with a
// `no_cuda_reason`, every fast-path function declines CUDA tensors with a
// guard failure that says it; without one (no function needs a kernel of
// its own: library calls only), CUDA runs. `module_id` makes the TU's
// internal names unique.
std::string host_translation_unit(const std::vector<FunctionCode> &fns,
                                  const std::vector<uint8_t> &fatbin,
                                  const std::string &module_id,
                                  const std::string &no_cuda_reason);

} // namespace kiln::codegen
