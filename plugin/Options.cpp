#include "Options.h"

#include <kiln/passes/ir.h>

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/Frontend/CompilerInstance.h>

#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/Process.h>

#include <algorithm>

using namespace clang;

namespace kiln::plugin {

std::string parse_plugin_arg(llvm::StringRef arg, PluginArgs &args) {
  if (arg == "dump")
    args.dump = true;
  else if (arg == "remarks")
    args.remarks = true;
  else if (arg == "cuda=off")
    args.cuda = false;
  else if (arg == "cuda=on")
    args.cuda = true;
  else if (arg.consume_front("nvcc="))
    args.nvcc = arg.str();
  else if (arg.consume_front("arch="))
    args.arch = arg.str();
  else if (arg.consume_front("cache-dir="))
    args.cache_dir = arg.str();
  else if (arg.consume_front("cache-size="))
    args.cache_size = arg.str();
  else if (arg.starts_with("W")) {
    WarningPolicy probe;
    if (!probe.apply(arg.drop_front(), /*short_names=*/true))
      return "unknown warning group in '" + arg.str() + "' (Kiln's groups: "
             "kiln, eager-fallback, graph-break, no-cuda, attribute, config)";
    args.warning_args.push_back(arg.drop_front().str());
  }
  else if (arg.consume_front("debug-dir="))
    args.debug_dir = arg.str();
  else if (arg.consume_front("dtype-profile="))
    args.dtype_profile = arg.str();
  else
    return "unknown argument '" + arg.str() +
           "' (expected dump, remarks, cuda=off, nvcc=<path>, arch=<list>, "
           "cache-dir=<dir>, cache-size=<size>, debug-dir=<dir>, "
           "dtype-profile=<file>, "
           "W[no-][error=]<group>)";
  return "";
}

void complete_plugin_args(const CompilerInstance &ci, PluginArgs &args) {
  // -Rpass=<regex> both sets the pattern and enables the remark group
  // "pass" (-fsave-optimization-record sets the patterns alone).
  const CodeGenOptions &cg = ci.getCodeGenOpts();
  bool asked = false;
  for (const std::string &r : ci.getDiagnosticOpts().Remarks)
    asked |= r == "pass" || r == "pass-missed" || r == "pass-analysis";
  if (asked && (cg.OptimizationRemark.patternMatches("kiln") ||
                cg.OptimizationRemarkMissed.patternMatches("kiln") ||
                cg.OptimizationRemarkAnalysis.patternMatches("kiln")))
    args.remarks = true;
  for (const std::string &w : ci.getDiagnosticOpts().Warnings)
    (void)args.warnings.apply(w);
  for (const std::string &w : args.warning_args)
    (void)args.warnings.apply(w, /*short_names=*/true);
  if (!args.debug_dir) {
    std::optional<std::string> env =
        llvm::sys::Process::GetEnv("KILN_DEBUG_DIR");
    args.debug_dir = env ? *env : "";
  }
}

std::string parse_compile_option(llvm::StringRef option,
                                 CompileOptions &opts) {
  if (option == "fullgraph") {
    opts.fullgraph = true;
  } else if (option == "disable") {
    opts.disable = true;
  } else if (option == "unsafe-math") {
    opts.unsafe_math = true;
  } else if (option == "backward") {
    opts.backward = true;
    opts.backward_args.clear();
  } else if (option.starts_with("backward=")) {
    // The tensor arguments whose gradients the compiled backward computes.
    llvm::SmallVector<llvm::StringRef, 4> names;
    option.drop_front(9).split(names, ',');
    opts.backward = true;
    opts.backward_args.clear();
    for (llvm::StringRef name : names) {
      if (name.trim().empty())
        return "kiln::compile option 'backward=' needs argument names "
               "(backward=x,w), or none at all ('backward': every tensor "
               "argument)";
      opts.backward_args.push_back(name.trim().str());
    }
  } else if (option.starts_with("backend=")) {
    llvm::StringRef backend = option.drop_front(8);
    if (backend == "eager")
      opts.eager_backend = true;
    else if (backend == "kiln")
      opts.eager_backend = false;
    else
      return "unknown kiln::compile backend '" + backend.str() +
             "' (expected 'eager' or 'kiln')";
  } else if (option.starts_with("mode=")) {
    // torch.compile's modes: "default", "reduce-overhead" (CUDA graphs),
    // "max-autotune" (GEMM algorithms timed, and CUDA graphs) and
    // "max-autotune-no-cudagraphs".
    llvm::StringRef mode = option.drop_front(5);
    if (mode == "reduce-overhead" || mode == "default" ||
        mode == "max-autotune" || mode == "max-autotune-no-cudagraphs") {
      opts.cuda_graphs = mode == "reduce-overhead" || mode == "max-autotune";
      opts.autotune = mode.starts_with("max-autotune");
    } else {
      return "unknown kiln::compile mode '" + mode.str() +
             "' (expected 'default', 'reduce-overhead', 'max-autotune' or "
             "'max-autotune-no-cudagraphs')";
    }
  } else if (option.starts_with("dtypes=")) {
    llvm::SmallVector<llvm::StringRef, 4> names;
    option.drop_front(7).split(names, ',');
    std::vector<DType> dtypes;
    for (llvm::StringRef name : names) {
      std::optional<DType> dt = ir::dtype_from_name(name.trim());
      if (!dt || !is_floating(*dt))
        return "unknown dtype '" + name.trim().str() +
               "' in kiln::compile option 'dtypes' (expected a list of f32, "
               "f16, bf16, f64)";
      if (std::find(dtypes.begin(), dtypes.end(), *dt) == dtypes.end())
        dtypes.push_back(*dt);
    }
    opts.dtypes = std::move(dtypes);
  } else {
    return "unknown kiln::compile option '" + option.str() +
           "' (expected fullgraph, disable, backend=eager, dtypes=<list>, "
           "mode=<default|reduce-overhead|max-autotune|"
           "max-autotune-no-cudagraphs>, unsafe-math, backward, "
           "backward=<arguments>)";
  }
  return "";
}

std::vector<DType> pinned_dtypes(const ParmVarDecl *p) {
  std::vector<DType> out;
  for (const auto *a : p->specific_attrs<AnnotateAttr>()) {
    llvm::StringRef text = a->getAnnotation();
    if (!text.consume_front(kDtypePrefix))
      continue;
    llvm::SmallVector<llvm::StringRef, 4> names;
    text.split(names, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef n : names)
      if (std::optional<DType> dt = ir::dtype_from_name(n);
          dt && std::find(out.begin(), out.end(), *dt) == out.end())
        out.push_back(*dt);
  }
  return out;
}

std::optional<CompileOptions> compile_options_of(const FunctionDecl *fd,
                                                 SourceLocation *attr_loc) {
  std::optional<CompileOptions> opts;
  for (const FunctionDecl *d : fd->redecls()) {
    for (const auto *a : d->specific_attrs<AnnotateAttr>()) {
      llvm::StringRef text = a->getAnnotation();
      if (!text.consume_front(kAnnotationPrefix))
        continue;
      if (!opts) {
        opts.emplace();
        if (attr_loc)
          *attr_loc = a->getLocation();
      }
      // Options were validated when the attribute was applied.
      llvm::SmallVector<llvm::StringRef, 4> parts;
      text.split(parts, ';', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef p : parts)
        (void)parse_compile_option(p, *opts);
    }
  }
  return opts;
}

} // namespace kiln::plugin
