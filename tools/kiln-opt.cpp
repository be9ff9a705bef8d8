// kiln-opt: runs Kiln's graph passes on KIR text and prints the result.
//
//   kiln-opt [--passes=a,b,(c,d) | --pipeline] [--unsafe-math]
//            [--print-after-all] [--emit=kir|dot [--dot-kernels]] [-o out]
//            file.kir|-
//   kiln-opt --emit=plan|lowered|cuda|host [--dtypes=f32,...] [--no-cuda]
//            [--arg-dtype=<arg>=<dtype>[+<dtype>...]]...
//            [--dtype-profile=<file>] file.kir
//
// --emit=plan|lowered|cuda|host runs the code generator on each graph as the
// plugin does on a captured function (every dtype specialisation, the
// default pipeline, the scheduler, lowering) and prints the kernel plan,
// the lowered program (guards, launches, kernels as loop nests), the CUDA
// kernels or the host code.
//
// The input is type-checked after parsing (node types may be omitted; a
// written type must be the inferred one). Errors are clang-style
// "file:line:col: error: ..." diagnostics and exit status 1.
#include <kiln/passes/codegen.h>
#include <kiln/passes/dot.h>
#include <kiln/passes/passes.h>
#include <kiln/passes/schedule.h>
#include <kiln/passes/text.h>

#include <llvm/IR/PrintPasses.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/ToolOutputFile.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

using namespace kiln;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("kiln-opt options");
cl::opt<std::string> input_file(cl::Positional,
                                cl::desc("<input .kir, - for stdin>"),
                                cl::init("-"), cl::cat(category));
cl::opt<std::string> output_file("o", cl::desc("Output file (default stdout)"),
                                 cl::value_desc("file"), cl::init("-"),
                                 cl::cat(category));
cl::opt<std::string>
    pass_list("passes",
              cl::desc("Comma-separated passes to run; a parenthesised group "
                       "repeats to a fixed point"),
              cl::value_desc("a,b,(c,d)"), cl::cat(category));
cl::opt<bool> pipeline("pipeline", cl::desc("Run the default pipeline"),
                       cl::cat(category));
cl::opt<bool> unsafe_math("unsafe-math",
                          cl::desc("Allow value-changing rewrites"),
                          cl::cat(category));
cl::opt<bool> backward(
    "backward",
    cl::desc("Also derive and compile each graph's backward (the "
             "[[kiln::compile(\"backward\")]] option)"),
    cl::cat(category));
cl::list<std::string> backward_args(
    "backward-args", cl::CommaSeparated,
    cl::desc("With --backward: the tensor arguments (by name) to "
             "differentiate for (default every one)"),
    cl::cat(category));
cl::opt<bool> cuda_graphs(
    "cuda-graphs",
    cl::desc("Generate entries that replay as CUDA graphs "
             "(mode=reduce-overhead)"),
    cl::cat(category));
cl::opt<bool> autotune(
    "autotune",
    cl::desc("Generate entries whose GEMMs are autotuned "
             "(mode=max-autotune-no-cudagraphs; with --cuda-graphs, "
             "mode=max-autotune)"),
    cl::cat(category));
enum class Emit { Kir, Dot, Plan, Lowered, Cuda, Host };
cl::opt<Emit> emit(
    "emit", cl::desc("Output format"), cl::init(Emit::Kir),
    cl::values(clEnumValN(Emit::Kir, "kir", "KIR text"),
               clEnumValN(Emit::Dot, "dot", "Graphviz"),
               clEnumValN(Emit::Plan, "plan", "kernel plan and remarks"),
               clEnumValN(Emit::Lowered, "lowered",
                          "the lowered program (guards, launches, loops)"),
               clEnumValN(Emit::Cuda, "cuda", "generated CUDA kernels"),
               clEnumValN(Emit::Host, "host", "generated host code")),
    cl::cat(category));
cl::list<std::string> pins(
    "arg-dtype",
    cl::desc("With --emit=plan|lowered|cuda|host: <arg>=<dtype>[+<dtype>...], "
             "the dtypes of a tensor argument whatever the others' "
             "(as [[kiln::dtype]] on its parameter); repeatable"),
    cl::value_desc("arg=dtypes"));
cl::opt<std::string> dtype_profile(
    "dtype-profile",
    cl::desc("With --emit=plan|lowered|cuda|host: a dtype profile "
             "(KILN_DTYPE_PROFILE's file); graph @g's fast path is __kiln_g "
             "there, as the plugin's -fplugin-arg-kiln-dtype-profile"),
    cl::value_desc("file"), cl::cat(category));
cl::list<std::string> dtypes("dtypes", cl::CommaSeparated,
                             cl::desc("With --emit=plan|lowered|cuda|host: dtypes to "
                                      "specialise for (default all floats)"),
                             cl::cat(category));
cl::opt<bool> no_cuda("no-cuda",
                      cl::desc("With --emit=plan|lowered|host: no CUDA kernels"),
                      cl::cat(category));
cl::opt<bool> dot_kernels("dot-kernels",
                          cl::desc("With --emit=dot, draw the kernels the "
                                   "scheduler makes as clusters"),
                          cl::cat(category));

std::string display_name() {
  return input_file == "-" ? std::string("<stdin>") : input_file.getValue();
}

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kiln-opt") << message << "\n";
  return 1;
}

// Where a pass error points: the node's source location when it has one,
// else (for the input's own nodes) where the node is in the KIR text.
std::string render(const passes::PassError &e, llvm::StringRef kir,
                   const ir::ParsedGraph *parsed) {
  if (e.loc.valid()) {
    llvm::StringRef source;
    std::unique_ptr<llvm::MemoryBuffer> file;
    if (e.loc.file == display_name()) {
      source = kir;
    } else if (auto buf = llvm::MemoryBuffer::getFile(e.loc.file)) {
      file = std::move(*buf);
      source = file->getBuffer();
    }
    return ir::format_diagnostic(e.loc.file, source, e.loc.line, e.loc.col,
                                 e.message);
  }
  if (parsed && e.node >= 0 && (size_t)e.node < parsed->node_pos.size() &&
      parsed->node_pos[e.node].line)
    return ir::format_diagnostic(display_name(), kir,
                                 parsed->node_pos[e.node].line,
                                 parsed->node_pos[e.node].col, e.message);
  return display_name() + ": error: " + e.value + ": " + e.message + "\n";
}

std::string render(llvm::Error err, llvm::StringRef kir,
                   const ir::ParsedGraph *parsed) {
  std::string out;
  llvm::handleAllErrors(
      std::move(err),
      [&](const passes::PassError &e) { out += render(e, kir, parsed); },
      [&](const llvm::ErrorInfoBase &e) {
        out += display_name() + ": error: " + e.message() + "\n";
      });
  return out;
}

// Infers the parsed graph's types and checks the ones the text wrote.
llvm::Expected<ir::Graph> type_check(const ir::ParsedGraph &pg) {
  llvm::Expected<ir::Graph> g = passes::infer_types(pg.graph, {});
  if (!g)
    return g.takeError();
  std::vector<std::string> names = ir::value_names(*g);
  for (ir::NodeId id = 0; id < (ir::NodeId)g->nodes.size(); ++id) {
    const ir::Type &written = pg.graph.nodes[id].type,
                   &inferred = g->nodes[id].type;
    if (pg.typed[id] && !(written == inferred))
      return llvm::make_error<passes::PassError>(
          id, ir::Loc{}, names[id],
          names[id] + " is written as " + ir::to_string(written) +
              " but its type is " + ir::to_string(inferred));
  }
  return g;
}

// Runs the code generator on each graph as on a captured function.
int generate(const std::vector<ir::Graph> &graphs, llvm::StringRef kir,
             llvm::raw_ostream &os) {
  codegen::Options opts;
  opts.unsafe_math = unsafe_math;
  opts.cuda = !no_cuda;
  opts.cuda_graphs = cuda_graphs;
  opts.autotune = autotune;
  opts.backward = backward || !backward_args.empty();
  opts.backward_args.assign(backward_args.begin(), backward_args.end());
  if (!dtypes.empty()) {
    opts.dtypes.clear();
    for (const std::string &d : dtypes) {
      std::optional<DType> c = ir::dtype_from_name(d);
      if (!c || !is_floating(*c))
        return fail("--dtypes: '" + d + "' is not one of f32, f16, bf16, f64");
      opts.dtypes.push_back(*c);
    }
  }
  codegen::DtypeProfile profile;
  if (!dtype_profile.empty()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
        llvm::MemoryBuffer::getFile(dtype_profile);
    if (!buf)
      return fail("cannot read '" + dtype_profile + "': " +
                  buf.getError().message());
    profile = codegen::parse_dtype_profile((*buf)->getBuffer().str());
    if (profile.bad)
      llvm::WithColor::warning(llvm::errs(), "kiln-opt")
          << profile.bad << " line(s) of '" << dtype_profile
          << "' are not a profile's: ignored\n";
  }
  std::vector<codegen::FunctionCode> fns;
  for (const ir::Graph &g : graphs) {
    codegen::FunctionSpec spec;
    spec.graph = g;
    for (ir::NodeId a : g.args()) {
      const ir::Node &n = g.node(a);
      spec.args.push_back(n.op == ir::Op::Input      ? codegen::ArgKind::Tensor
                          : n.type.dtype == DType::i64 ? codegen::ArgKind::Int64
                          : n.type.dtype == DType::b8  ? codegen::ArgKind::Bool
                                                       : codegen::ArgKind::Double);
    }
    spec.arg_dtypes.resize(spec.args.size());
    for (llvm::StringRef p : pins) {
      auto [name, list] = p.split('=');
      for (ir::NodeId a : g.args()) // in each graph that has it
        if (g.node(a).op == ir::Op::Input && g.node(a).name == name) {
          llvm::SmallVector<llvm::StringRef, 4> names;
          list.split(names, '+');
          for (llvm::StringRef d : names) {
            std::optional<DType> t = ir::dtype_from_name(d);
            if (!t)
              return fail("--arg-dtype: '" + d.str() + "' is not a dtype");
            spec.arg_dtypes[size_t(g.node(a).arg_index)].push_back(*t);
          }
        }
    }
    spec.user_name = g.name;
    spec.symbol = "__kiln_" + g.name;
    if (auto it = profile.by_symbol.find(spec.symbol);
        it != profile.by_symbol.end())
      spec.observed_dtypes = it->second;
    codegen::FunctionCode fc = codegen::compile_function(spec, opts);
    if (!fc.error.empty()) {
      ir::Loc l = fc.error_loc;
      llvm::errs() << (l.valid() ? ir::format_diagnostic(l.file, "", l.line,
                                                         l.col, fc.error)
                                 : display_name() + ": error: " + fc.error +
                                       "\n");
      return 1;
    }
    if (emit == Emit::Plan) {
      os << fc.plan;
      for (const codegen::Remark &r : fc.remarks)
        os << "remark: " << r.message << "\n";
    }
    if (emit == Emit::Lowered)
      os << fc.lowered;
    fns.push_back(std::move(fc));
  }
  if (emit == Emit::Cuda)
    os << codegen::cuda_translation_unit(fns);
  else if (emit == Emit::Host)
    os << codegen::host_translation_unit(fns, {}, display_name(),
                                         "kiln-opt emits no fatbin");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // libLLVM already owns --print-after-all: use it rather than register a
  // second option of that name (which LLVM rejects).
  if (cl::Option *o = cl::getRegisteredOptions().lookup("print-after-all")) {
    o->setDescription("Print the graph after each pass (to stderr)");
    o->addCategory(category);
  }
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "kiln-opt: run Kiln graph passes on KIR\n");
  if (pipeline && !pass_list.empty())
    return fail("--passes and --pipeline are exclusive");

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(input_file);
  if (!buffer)
    return fail("cannot read '" + input_file +
                "': " + buffer.getError().message());
  llvm::StringRef kir = (*buffer)->getBuffer();

  auto parsed = ir::parse_kir(kir, display_name());
  if (!parsed) {
    llvm::errs() << llvm::toString(parsed.takeError());
    return 1;
  }

  passes::PassOptions opts;
  opts.unsafe_math = unsafe_math;
  std::string list =
      pipeline ? passes::default_pipeline().str() : pass_list.getValue();
  std::vector<ir::Graph> results;
  for (const ir::ParsedGraph &pg : *parsed) {
    llvm::Expected<ir::Graph> g = type_check(pg);
    if (!g) {
      llvm::errs() << render(g.takeError(), kir, &pg);
      return 1;
    }
    if (!list.empty()) {
      auto after = [&](llvm::StringRef pass, const ir::Graph &out) {
        if (llvm::shouldPrintAfterAll())
          llvm::errs() << "# after " << pass << "\n" << ir::print(out);
      };
      g = passes::run_passes(*g, list, opts, after);
      if (!g) {
        llvm::errs() << render(g.takeError(), kir, nullptr);
        return 1;
      }
    }
    results.push_back(std::move(*g));
  }

  std::error_code ec;
  llvm::ToolOutputFile out(output_file, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + output_file + "': " + ec.message());
  if (emit == Emit::Plan || emit == Emit::Lowered || emit == Emit::Cuda ||
      emit == Emit::Host) {
    if (int rc = generate(results, kir, out.os()))
      return rc;
  } else if (emit == Emit::Dot)
    for (const ir::Graph &g : results)
    {
      std::vector<int> groups;
      if (dot_kernels) {
        llvm::Expected<sched::KernelPlan> plan = sched::schedule(g);
        if (!plan) {
          llvm::errs() << render(plan.takeError(), kir, nullptr);
          return 1;
        }
        groups = plan->kernel_of_node;
      }
      out.os() << ir::to_dot(g, groups);
    }
  else
    out.os() << ir::print(results);
  out.keep();
  return 0;
}
