// The fast-path function: guards, then one launch per fused kernel.
//
// Everything the generated kernels assume is checked here, at run time, in
// a few comparisons: tensors defined, on one device, of the dtypes the
// variant was specialised for; shapes broadcast. A failed check returns
// false through rt::guard_failed (counted, logged with the reason) and the
// caller runs the original body. Layout is not a guard but a choice: dense
// and aligned operands take the vectorised kernel, anything else the
// strided one.
#include "Emit.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <set>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;

namespace {

struct Emitter {
  const FunctionSpec &spec;
  const Options &opts;
  llvm::raw_string_ostream &os;

  std::string params() const {
    std::string s;
    for (auto [i, k] : llvm::enumerate(spec.args))
    {
      std::string t = cxx_param_type(k);
      s += (i ? ", " : "") + t + (t.back() == '&' ? "a" : " a") +
           std::to_string(i);
    }
    for (size_t j = 0; j < spec.graph.outputs.size(); ++j)
      s += ", kiln::Tensor *out" + std::to_string(j);
    return s;
  }
  std::string call_args() const {
    std::string s;
    for (size_t i = 0; i < spec.args.size(); ++i)
      s += (i ? ", a" : "a") + std::to_string(i);
    for (size_t j = 0; j < spec.graph.outputs.size(); ++j)
      s += ", out" + std::to_string(j);
    return s;
  }

  static std::string arg_var(const ir::Graph &g, NodeId id) {
    return "a" + std::to_string(g.node(id).arg_index);
  }
  static std::string tensor_var(const ir::Graph &g, NodeId id) {
    return g.node(id).op == Op::Input ? arg_var(g, id) : "t" + std::to_string(id);
  }

  void kernel_refs(const Variant &v) {
    if (!opts.cuda)
      return;
    for (size_t ki = 0; ki < v.plan.kernels.size(); ++ki) {
      const sched::Kernel &k = v.plan.kernels[ki];
      std::vector<std::string> paths = {"vec", "s32", "s64"};
      if (k.kind == sched::Kernel::Kind::Reduction) {
        paths = {"loop", "combine"};
        for (int p = 0; p < k.passes; ++p)
          paths.push_back("split" + std::to_string(p));
        for (int slots = 1; slots <= register_slots(v.graph, k); slots *= 2)
          paths.push_back("rows" + std::to_string(slots));
      }
      for (const std::string &path : paths) {
        std::string name =
            kernel_name(spec.symbol, int(ki), v.dtype, path.c_str());
        os << "static kiln::rt::KernelRef " << name << "_ref{&kiln_module, \""
           << name << "\"};\n";
      }
    }
  }

  // `{&a0.sizes(), &a1.sizes()}` for a kernel's inputs.
  std::string size_list(const ir::Graph &g, const sched::Kernel &k) const {
    std::string s = "{";
    for (auto [i, in] : llvm::enumerate(k.inputs))
      s += (i ? ", &" : "&") + arg_var(g, in) + ".sizes()";
    return s + "}";
  }
  // `{&t4, &a0, &a1}`: outputs then inputs, the operand order of OffsetCalc.
  std::string operand_list(const ir::Graph &g, const sched::Kernel &k) const {
    std::string s = "{";
    bool first = true;
    for (NodeId o : k.outputs)
      s += (std::exchange(first, false) ? "&" : ", &") + tensor_var(g, o);
    for (NodeId i : k.inputs)
      s += (std::exchange(first, false) ? "&" : ", &") + tensor_var(g, i);
    return s + "}";
  }

  void launch_kernel(const Variant &v, int ki, const sched::Kernel &k) {
    const ir::Graph &g = v.graph;
    size_t nops = k.outputs.size() + k.inputs.size();
    int vec = vector_width(g, k);
    std::string shape = "shape" + std::to_string(ki);
    auto name = [&](const char *path) {
      return kernel_name(spec.symbol, ki, v.dtype, path);
    };

    os << "  // kernel " << ki << ": " << k.nodes.size() << " ops fused";
    for (NodeId o : k.outputs) {
      const ir::Node &n = g.node(o);
      if (n.loc.valid())
        os << "; writes " << (n.name.empty() ? "%" + std::to_string(o) : n.name)
           << " (line " << n.loc.line << ")";
    }
    os << "\n";
    for (NodeId o : k.outputs)
      os << "  kiln::Tensor " << tensor_var(g, o) << " = kiln::empty(" << shape
         << ", kiln::DType::" << dtype_name(g.node(o).type.dtype) << ", dev);\n";
    os << "  if (const int64_t n = " << tensor_var(g, k.outputs[0])
       << ".numel(); n > 0) {\n";
    os << "    const bool dense = true";
    for (NodeId in : k.inputs)
      os << " && kiln::gen::dense(" << arg_var(g, in) << ", n)";
    os << ";\n";

    // Pointers and scalars, as lvalues of the kernels' parameter types.
    for (auto [i, in] : llvm::enumerate(k.inputs))
      os << "    const " << storage_type(g.node(in).type.dtype) << " *in" << i
         << " = " << arg_var(g, in) << ".data<const "
         << storage_type(g.node(in).type.dtype) << ">();\n";
    for (auto [j, o] : llvm::enumerate(k.outputs))
      os << "    " << storage_type(g.node(o).type.dtype) << " *out" << j << "_ = "
         << tensor_var(g, o) << ".data<" << storage_type(g.node(o).type.dtype)
         << ">();\n";
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      os << "    " << storage_type(g.node(sc).type.dtype) << " s" << i << " = "
         << arg_var(g, sc) << ";\n";
    std::string ptr_args;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      ptr_args += ", &in" + std::to_string(i);
    for (size_t j = 0; j < k.outputs.size(); ++j)
      ptr_args += ", &out" + std::to_string(j) + "_";
    for (size_t i = 0; i < k.scalars.size(); ++i)
      ptr_args += ", &s" + std::to_string(i);

    if (opts.cuda) {
      os << "    if (dev.is_cuda()) {\n";
      os << "      int64_t n_ = n;\n";
      os << "      if (dense";
      for (auto [i, in] : llvm::enumerate(k.inputs))
        os << " && kiln::gen::aligned(in" << i << ", "
           << vec * element_size(g.node(in).type.dtype) << ")";
      for (auto [j, o] : llvm::enumerate(k.outputs))
        os << " && kiln::gen::aligned(out" << j << "_, "
           << vec * element_size(g.node(o).type.dtype) << ")";
      os << ") {\n";
      os << "        void *args[] = {&n_" << ptr_args << "};\n";
      os << "        kiln::rt::launch(" << name("vec") << "_ref, dev, {kiln::gen::blocks((n + "
         << vec - 1 << ") / " << vec << ")}, {256}, args);\n";
      os << "      } else {\n";
      os << "        kiln::OffsetCalc<" << nops << "> calc;\n";
      os << "        kiln::rt::make_offset_calc(" << shape << ", "
         << operand_list(g, k) << ", calc);\n";
      os << "        void *args[] = {&n_, &calc" << ptr_args << "};\n";
      os << "        kiln::rt::launch(kiln::gen::fits_u32(calc, n) ? " << name("s32")
         << "_ref : " << name("s64") << "_ref, dev, {kiln::gen::blocks(n)}, "
         << "{256}, args);\n";
      os << "      }\n";
      os << "    } else {\n";
    } else {
      os << "    {\n";
    }
    os << "      " << kernel_name(spec.symbol, ki, v.dtype, "ctx") << " c{";
    bool first = true;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      os << (std::exchange(first, false) ? "" : ", ") << "in" << i;
    for (size_t j = 0; j < k.outputs.size(); ++j)
      os << (std::exchange(first, false) ? "" : ", ") << "out" << j << "_";
    for (size_t i = 0; i < k.scalars.size(); ++i)
      os << (std::exchange(first, false) ? "" : ", ") << "s" << i;
    os << "};\n";
    os << "      if (dense) {\n";
    os << "        kiln::rt::cpu_launch(\"" << name("contig") << "\", n, 32768, &"
       << name("contig") << ", &c);\n";
    os << "      } else {\n";
    os << "        kiln::rt::make_offset_calc(" << shape << ", "
       << operand_list(g, k) << ", c.calc);\n";
    os << "        const int64_t inner = c.calc.rank ? "
          "c.calc.sizes[c.calc.rank - 1] : 1;\n";
    os << "        kiln::rt::cpu_launch(\"" << name("strided")
       << "\", n / inner, std::max<int64_t>(1, 32768 / inner), &"
       << name("strided") << ", &c);\n";
    os << "      }\n";
    os << "    }\n";
    os << "  }\n";
  }

  // A reduction kernel's space: the broadcast of its inputs as [outer, R,
  // inner]; guards that every reduction reads, and every full output is,
  // a value of that whole shape (eager would broadcast otherwise).
  void reduction_space(const Variant &v, int ki, const sched::Kernel &k) {
    const ir::Graph &g = v.graph;
    std::string n = std::to_string(ki);
    std::string names = input_names(g, k);
    os << "  kiln::Dims full" << n << ", keep" << n << ", drop" << n << ";\n"
       << "  if (!kiln::rt::broadcast_shapes(" << size_list(g, k) << ", full"
       << n << "))\n"
       << "    return kiln::rt::guard_failed(kFn, \"the shapes of " << names
       << " do not broadcast\");\n";
    os << "  kiln::RowSpace sp" << n << ";\n  kiln::gen::ReduceGeom geo" << n
       << ";\n  if (!kiln::gen::row_space(full" << n << ", {";
    for (auto [i, d] : llvm::enumerate(k.dims))
      os << (i ? ", " : "") << d;
    os << "}, sp" << n << ", keep" << n << ", drop" << n << ", geo" << n
       << "))\n"
       << "    return kiln::rt::guard_failed(kFn, \"the reduced dims are out of "
          "range or not adjacent for this shape\");\n";
    bool extreme = false;
    for (NodeId r : k.reductions)
      extreme |= ir::empty_reduction_raises(g.node(r).op);
    if (extreme)
      os << "  if (sp" << n << ".R == 0 && sp" << n << ".rows > 0)\n"
         << "    return kiln::rt::guard_failed(kFn, \"amax, amin and argmax of "
            "an empty dimension are errors\");\n";
    std::set<NodeId> all(k.inputs.begin(), k.inputs.end());
    auto guard_shape = [&](NodeId id, const char *what) {
      std::set<NodeId> ins;
      bool reduced = false;
      full_leaves(k, g, id, ins, reduced);
      if (ins == all)
        return; // the broadcast of every input is `full` by definition
      os << "  {\n    kiln::Dims t;\n    if (!kiln::rt::broadcast_shapes({";
      bool first = true;
      for (NodeId in : ins)
        os << (std::exchange(first, false) ? "&" : ", &") << arg_var(g, in)
           << ".sizes()";
      if (reduced)
        os << (first ? "&keep" : ", &keep") << n;
      os << "}, t) || !(t == full" << n << "))\n"
         << "      return kiln::rt::guard_failed(kFn, \"" << what
         << " does not have the shape of the whole reduction\");\n  }\n";
    };
    for (NodeId r : k.reductions)
      guard_shape(g.node(r).operands[0], "a reduced value");
    for (NodeId o : k.outputs)
      if (k.role[o] == sched::Role::Full)
        guard_shape(o, "an output");
  }

  void launch_reduction(const Variant &v, int ki, const sched::Kernel &k) {
    const ir::Graph &g = v.graph;
    std::string n = std::to_string(ki);
    std::string sp = "sp" + n;
    size_t nout = k.outputs.size(), nops = nout + k.inputs.size();
    int vec = vector_width(g, k);
    auto name = [&](const char *path) {
      return kernel_name(spec.symbol, ki, v.dtype, path);
    };
    os << "  // kernel " << ki << ": reduction over dims [";
    for (auto [i, d] : llvm::enumerate(k.dims))
      os << (i ? ", " : "") << d;
    os << "], " << k.passes << " pass" << (k.passes == 1 ? "" : "es") << ", "
       << k.nodes.size() << " ops fused\n";
    for (NodeId o : k.outputs) {
      bool full = k.role[o] == sched::Role::Full;
      os << "  kiln::Tensor " << tensor_var(g, o) << " = kiln::empty("
         << (full ? "full" : k.drop[o] ? "drop" : "keep") << n
         << ", kiln::DType::" << dtype_name(g.node(o).type.dtype) << ", dev);\n";
    }
    os << "  kiln::RowStrides<" << nops << "> st" << n << ";\n";
    for (auto [j, o] : llvm::enumerate(k.outputs)) {
      if (k.role[o] == sched::Role::Full)
        os << "  kiln::gen::row_strides(" << tensor_var(g, o) << ", full" << n
           << ", geo" << n << ", st" << n << ".s[" << j << "]);\n";
      else
        os << "  st" << n << ".s[" << j << "][0] = " << sp << ".inner, st" << n
           << ".s[" << j << "][1] = 0, st" << n << ".s[" << j << "][2] = 1;\n";
    }
    for (auto [i, in] : llvm::enumerate(k.inputs))
      os << "  if (!kiln::gen::row_strides(" << arg_var(g, in) << ", full" << n
         << ", geo" << n << ", st" << n << ".s[" << nout + i << "]))\n"
         << "    return kiln::rt::guard_failed(kFn, \""
         << arg_name(g, g.node(in).arg_index)
         << " has a layout the reduction cannot walk as rows\");\n";
    os << "  if (" << sp << ".rows > 0) {\n";
    for (auto [i, in] : llvm::enumerate(k.inputs))
      os << "    const " << storage_type(g.node(in).type.dtype) << " *in" << i
         << " = " << arg_var(g, in) << ".data<const "
         << storage_type(g.node(in).type.dtype) << ">();\n";
    for (auto [j, o] : llvm::enumerate(k.outputs))
      os << "    " << storage_type(g.node(o).type.dtype) << " *out" << j
         << "_ = " << tensor_var(g, o) << ".data<"
         << storage_type(g.node(o).type.dtype) << ">();\n";
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      os << "    " << storage_type(g.node(sc).type.dtype) << " s" << i << " = "
         << arg_var(g, sc) << ";\n";
    // Bytes of split-mode partials: one accumulator per reduction per chunk.
    auto partial_bytes = [&](const std::string &space) {
      std::string bytes = "size_t(0)";
      for (NodeId r : k.reductions) {
        const ir::Node &rn = g.node(r);
        std::string et = compute_type(rn.op == Op::Argmax
                                          ? g.node(rn.operands[0]).type.dtype
                                          : rn.type.dtype);
        std::string at =
            rn.op == Op::Argmax ? "kiln::scalar::ArgAcc<" + et + ">" : et;
        bytes += " + ((sizeof(" + at + ") * " + space + ".rows * " + space +
                 ".splits + 15) & ~size_t(15))";
      }
      return bytes;
    };
    int launches = split_launches(g, k);
    std::string ptr_args;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      ptr_args += ", &in" + std::to_string(i);
    for (size_t j = 0; j < nout; ++j)
      ptr_args += ", &out" + std::to_string(j) + "_";
    for (size_t i = 0; i < k.scalars.size(); ++i)
      ptr_args += ", &s" + std::to_string(i);

    if (opts.cuda) {
      os << "    if (dev.is_cuda()) {\n";
      // 16-byte slots when every operand read or written per element is
      // contiguous along R with aligned rows.
      os << "      " << sp << ".vec = " << sp << ".inner == 1 && " << sp << ".R % "
         << vec << " == 0";
      for (auto [i, in] : llvm::enumerate(k.inputs)) {
        size_t J = nout + i;
        os << "\n          && st" << n << ".s[" << J << "][1] == 1 && st" << n
           << ".s[" << J << "][0] % " << vec << " == 0 && kiln::gen::aligned(in" << i
           << ", " << vec * element_size(g.node(in).type.dtype) << ")";
      }
      for (auto [j, o] : llvm::enumerate(k.outputs))
        if (k.role[o] == sched::Role::Full)
          os << "\n          && kiln::gen::aligned(out" << j << "_, "
             << vec * element_size(g.node(o).type.dtype) << ")";
      os << ";\n";
      os << "      unsigned grid, block;\n"
         << "      const kiln::gen::RedMode mode = kiln::gen::plan_cuda(" << sp << ", " << vec
         << ", " << register_slots(g, k)
         << ", kiln::rt::multiprocessor_count(dev), grid, block);\n"
         << "      switch (mode) {\n"
         << "      case kiln::gen::RedMode::rows:\n"
         << "      case kiln::gen::RedMode::loop: {\n"
         << "        void *args[] = {&" << sp << ", &st" << n << ptr_args << "};\n"
         << "        kiln::rt::KernelRef &k = mode == kiln::gen::RedMode::loop ? " << name("loop")
         << "_ref";
      for (int slots = register_slots(g, k); slots >= 2; slots /= 2)
        os << "\n            : " << sp << ".vpt > " << slots / 2 << " ? "
           << kernel_name(spec.symbol, ki, v.dtype,
                          ("rows" + std::to_string(slots)).c_str())
           << "_ref";
      os << "\n            : " << name("rows1") << "_ref;\n"
         << "        kiln::rt::launch(k, dev, {grid}, {block}, args);\n"
         << "        break;\n      }\n"
         << "      case kiln::gen::RedMode::split: {\n"
         << "        kiln::Tensor scratch = kiln::empty({int64_t(" << partial_bytes(sp)
         << ")}, kiln::DType::b8, dev);\n"
         << "        char *partials = scratch.data<char>();\n"
         << "        void *args[] = {&" << sp << ", &st" << n << ptr_args
         << ", &partials};\n"
         ;
      // Each pass over all blocks (a kernel per pass); after a pass with
      // reductions, a block per row combines their partials for the next
      // (the combine kernel reads sp.pass to know which).
      for (int p = 0; p < k.passes; ++p) {
        os << "        kiln::rt::launch("
           << name(("split" + std::to_string(p)).c_str())
           << "_ref, dev, {grid}, {block}, args);\n";
        bool reduces = false;
        for (NodeId r : k.reductions)
          reduces |= k.phase[r] - 1 == p;
        if (reduces)
          os << "        " << sp << ".pass = " << p + 1 << ";\n"
             << "        kiln::rt::launch(" << name("combine") << "_ref, dev, {unsigned("
             << sp << ".rows)}, {256}, args);\n";
      }
      os << "        break;\n      }\n      }\n";
      os << "    } else {\n";
    } else {
      os << "    {\n";
    }
    os << "      " << name("ctx") << " c{";
    bool first = true;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      os << (std::exchange(first, false) ? "" : ", ") << "in" << i;
    for (size_t j = 0; j < nout; ++j)
      os << (std::exchange(first, false) ? "" : ", ") << "out" << j << "_";
    for (size_t i = 0; i < k.scalars.size(); ++i)
      os << (std::exchange(first, false) ? "" : ", ") << "s" << i;
    os << (first ? "" : ", ") << sp << ", st" << n << ", nullptr};\n"
       << "      if (kiln::gen::plan_cpu(c.sp)) {\n"
       << "        kiln::rt::cpu_launch(\"" << name("cpu_rows") << "\", c.sp.rows, "
       << "std::max<int64_t>(1, 32768 / std::max<int64_t>(1, c.sp.R)), &"
       << name("cpu_rows") << ", &c);\n"
       << "      } else {\n"
       << "        std::vector<char> partials(" << partial_bytes("c.sp") << ");\n"
       << "        c.partials = partials.data();\n"
       << "        for (int pass = 0; pass < " << launches << "; ++pass) {\n"
       << "          c.sp.pass = pass;\n"
       << "          kiln::rt::cpu_launch(\"" << name("cpu_split")
       << "\", c.sp.rows * c.sp.splits, 1, &" << name("cpu_split") << ", &c);\n"
       << "        }\n"
       << "      }\n"
       << "    }\n"
       << "  }\n";
  }

  // Shapes eager raises on that the kernels do not check: values the
  // function computes and drops (dce), arguments of decomposed ops (the
  // norms' weights). Computed here; inputs eager would raise on run the
  // original body, which raises.
  void shape_checks(const ir::Graph &g) {
    for (auto [i, c] : llvm::enumerate(g.checks)) {
      std::string k = "k" + std::to_string(i);
      auto ref = [](int o) { return "k" + std::to_string(o); };
      if (c.op == Op::Input) {
        os << "  const kiln::Dims &" << k << " = a" << c.arg_index << ".sizes();\n";
        continue;
      }
      if (ir::is_pointwise(c.op) && c.operands.size() == 1) {
        os << "  const kiln::Dims &" << k << " = " << ref(c.operands[0]) << ";\n";
        continue;
      }
      if (c.op == Op::LayerNorm || c.op == Op::RmsNorm) {
        // A check of its arguments; its result has its input's shape (for
        // checks of values computed from it).
        if (c.raises) {
          os << "  if (!kiln::rt::norm_shapes(" << ref(c.operands[0]) << ", {";
          for (size_t j = 1; j < c.operands.size(); ++j)
            os << (j > 1 ? ", &" : "&") << ref(c.operands[j]);
          os << "}))\n"
             << "    return kiln::rt::guard_failed(kFn, \"" << shape_check_message(c)
             << "\");\n";
        }
        os << "  [[maybe_unused]] const kiln::Dims &" << k << " = "
           << ref(c.operands[0]) << ";\n";
        continue;
      }
      std::string call;
      llvm::raw_string_ostream cs(call);
      if (ir::is_pointwise(c.op)) {
        os << "  kiln::Dims " << k << ";\n";
        cs << "kiln::rt::broadcast_shapes({";
        for (auto [j, o] : llvm::enumerate(c.operands))
          cs << (j ? ", &" : "&") << ref(o);
        cs << "}, " << k << ")";
      } else {
        os << "  kiln::Dims " << k << ";\n";
        bool nonempty = c.op == Op::Amax || c.op == Op::Amin || c.op == Op::Argmax;
        cs << "kiln::rt::reduced_shape(" << ref(c.operands[0]) << ", {";
        for (auto [j, d] : llvm::enumerate(c.dims))
          cs << (j ? ", " : "") << d;
        cs << "}, " << (c.keepdim ? "true" : "false") << ", "
           << (nonempty ? "true" : "false") << ", " << k << ")";
      }
      if (c.raises)
        os << "  if (!" << call << ")\n"
           << "    return kiln::rt::guard_failed(kFn, \"" << shape_check_message(c)
           << "\");\n";
      else // known valid at compile time: only its shape is wanted
        os << "  (void)" << call << ";\n";
    }
  }

  void variant_function(const Variant &v, NodeId dispatch) {
    const ir::Graph &g = v.graph;
    kernel_refs(v);
    os << "static bool " << spec.symbol << "_" << dtype_name(v.dtype) << "("
       << params() << ") {\n";
    os << "  constexpr const char *kFn = \"" << llvm::StringRef(spec.user_name)
       << "\";\n";
    os << "  const kiln::Device dev = a" << g.node(dispatch).arg_index
       << ".device();\n";
    // Dtype guards (the dispatch argument's dtype chose this variant).
    for (NodeId id : g.args()) {
      const ir::Node &n = g.node(id);
      if (n.op != Op::Input || id == dispatch)
        continue;
      os << "  if (" << arg_var(g, id) << ".dtype() != kiln::DType::"
         << dtype_name(n.type.dtype) << ")\n"
         << "    return kiln::rt::guard_failed(kFn, \"" << arg_name(g, n.arg_index)
         << " is not " << dtype_name(n.type.dtype);
      if (n.type.dtype == v.dtype)
        os << " like " << arg_name(g, g.node(dispatch).arg_index);
      os << "\");\n";
    }
    shape_checks(g);
    // Every kernel's iteration space, before anything runs.
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels)) {
      if (k.kind == sched::Kernel::Kind::Reduction) {
        reduction_space(v, int(ki), k);
        continue;
      }
      os << "  kiln::Dims shape" << ki << ";\n";
      os << "  if (!kiln::rt::broadcast_shapes(" << size_list(g, k) << ", shape"
         << ki << "))\n";
      std::string names = input_names(g, k);
      os << "    return kiln::rt::guard_failed(kFn, \"the shapes of " << names
         << " do not broadcast\");\n";
    }
    if (!opts.cuda)
      os << "  if (dev.is_cuda())\n"
         << "    return kiln::rt::guard_failed(kFn, kiln_no_cuda_reason);\n";
    else
      os << "  if (dev.is_cuda() && !kiln_have_cuda)\n"
         << "    return kiln::rt::guard_failed(kFn, kiln_no_cuda_reason);\n";
    for (auto [ki, k] : llvm::enumerate(v.plan.kernels))
      if (k.kind == sched::Kernel::Kind::Reduction)
        launch_reduction(v, int(ki), k);
      else
        launch_kernel(v, int(ki), k);
    // Outputs that are different tensors in eager (each a fresh result) are
    // different tensors here, whatever the passes made of them: one that
    // became another output's node, or an argument, is copied.
    const std::vector<NodeId> &captured = spec.graph.outputs;
    for (auto [j, o] : llvm::enumerate(g.outputs)) {
      bool shared = g.node(o).op == Op::Input &&
                    spec.graph.node(captured[j]).op != Op::Input;
      for (size_t i = 0; i < j; ++i)
        shared |= g.outputs[i] == o && captured[i] != captured[j];
      os << "  *out" << j << " = " << tensor_var(g, o)
         << (shared ? ".clone()" : "") << ";\n";
    }
    os << "  kiln::rt::count_compiled();\n  return true;\n}\n\n";
  }
};

} // namespace

static std::string checked_value(const ir::ShapeCheck &c) {
  std::string s = c.name.empty() ? "a value" : "'" + c.name + "'";
  if (c.loc.valid())
    s += " (line " + std::to_string(c.loc.line) + ")";
  if (ir::op_info(c.op).kind == ir::OpKind::Composite)
    return s + ": " + ir::op_info(c.op).name + "'s input, weight or bias";
  return s + ", computed and dropped,";
}

std::string shape_check_text(const ir::ShapeCheck &c) {
  return checked_value(c) + " has shapes eager accepts";
}

std::string shape_check_message(const ir::ShapeCheck &c) {
  return checked_value(c) + " raises in eager for these shapes";
}

std::string arg_name(const ir::Graph &g, int arg) {
  for (NodeId id : g.args())
    if (g.node(id).arg_index == arg && !g.node(id).name.empty())
      return "'" + g.node(id).name + "'";
  return "argument " + std::to_string(arg + 1);
}

std::string input_names(const ir::Graph &g, const sched::Kernel &k) {
  std::string s;
  for (auto [i, in] : llvm::enumerate(k.inputs))
    s += (i ? ", " : "") + arg_name(g, g.node(in).arg_index);
  return s;
}

NodeId dispatch_arg(const Variant &v) {
  for (NodeId id : v.graph.args())
    if (v.graph.node(id).op == Op::Input &&
        v.graph.node(id).type.dtype == v.dtype)
      return id;
  for (NodeId id : v.graph.args())
    if (v.graph.node(id).op == Op::Input)
      return id;
  return -1;
}

void full_leaves(const sched::Kernel &k, const ir::Graph &g, NodeId id,
                 std::set<NodeId> &inputs, bool &reduced) {
  const ir::Node &n = g.node(id);
  if (n.op == Op::Input) {
    inputs.insert(id);
    return;
  }
  if (k.role[id] == sched::Role::Reduced) {
    reduced = true;
    return;
  }
  if (k.role[id] == sched::Role::Full)
    for (NodeId o : n.operands)
      full_leaves(k, g, o, inputs, reduced);
}

std::string emit_host_function(const FunctionSpec &spec,
                               const std::vector<Variant> &variants,
                               const Options &opts) {
  std::string s;
  llvm::raw_string_ostream os(s);
  Emitter e{spec, opts, os};
  const Variant &first = variants.front();
  NodeId dispatch = dispatch_arg(first);

  os << "// ---- fast path of '" << spec.user_name << "'";
  if (spec.loc.valid())
    os << " (" << llvm::sys::path::filename(spec.loc.file) << ":"
       << spec.loc.line << ")";
  os << " ----\n\n";
  for (const Variant &v : variants) {
    std::string loops;
    emit_cpu_loops(v.graph, v.plan, spec.symbol, v.dtype, loops);
    os << loops;
    e.variant_function(v, dispatch_arg(v));
  }

  os << "bool " << spec.symbol << "(" << e.params() << ") __asm__(\""
     << spec.symbol << "\");\n";
  os << "bool " << spec.symbol << "(" << e.params() << ") {\n";
  os << "  constexpr const char *kFn = \"" << spec.user_name << "\";\n";
  os << "  if (kiln::rt::fast_path_off(kFn))\n"
     << "    return false;\n";
  // Every tensor argument defined, all on one device.
  std::vector<NodeId> tensors;
  for (NodeId id : first.graph.args())
    if (first.graph.node(id).op == Op::Input)
      tensors.push_back(id);
  for (NodeId id : tensors)
    os << "  if (!" << Emitter::arg_var(first.graph, id) << ".defined())\n"
       << "    return kiln::rt::guard_failed(kFn, \""
       << arg_name(first.graph, first.graph.node(id).arg_index)
       << " is an undefined tensor\");\n";
  for (NodeId id : tensors)
    if (id != dispatch)
      os << "  if (" << Emitter::arg_var(first.graph, id) << ".device() != "
         << Emitter::arg_var(first.graph, dispatch) << ".device())\n"
         << "    return kiln::rt::guard_failed(kFn, \""
         << arg_name(first.graph, first.graph.node(id).arg_index) << " and "
         << arg_name(first.graph, first.graph.node(dispatch).arg_index)
         << " are on different devices\");\n";
  os << "  switch (" << Emitter::arg_var(first.graph, dispatch) << ".dtype()) {\n";
  std::string compiled;
  for (const Variant &v : variants) {
    os << "  case kiln::DType::" << dtype_name(v.dtype) << ":\n"
       << "    return " << spec.symbol << "_" << dtype_name(v.dtype) << "("
       << e.call_args() << ");\n";
    compiled += (compiled.empty() ? "" : ", ") + std::string(dtype_name(v.dtype));
  }
  os << "  default:\n"
     << "    return kiln::rt::guard_failed(kFn, \""
     << arg_name(first.graph, first.graph.node(dispatch).arg_index)
     << " has a dtype this function was not compiled for (compiled for "
     << compiled << ")\");\n";
  os << "  }\n}\n\n";
  return s;
}

} // namespace kiln::codegen
