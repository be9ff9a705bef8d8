// plugin/Options.h - what the user asked for: plugin arguments
// (-fplugin-arg-kiln-<arg>) and per-function [[kiln::compile("...")]]
// options.
#pragma once

#include "Warnings.h"

#include <kiln/dtype.h>

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <vector>

namespace clang {
class CompilerInstance;
class FunctionDecl;
class ParmVarDecl;
class SourceLocation;
} // namespace clang

namespace kiln::plugin {

// -fplugin-arg-kiln-<arg>, one per TU.
struct PluginArgs {
  bool dump = false;    // print rewrites and generated code to stderr
  bool remarks = false; // remarks: what was compiled, what stayed eager
  bool cuda = true;     // cuda=off: no kernels, no nvcc
  std::string nvcc;     // nvcc=<path>
  std::string arch;     // arch=<list> (Nvcc.h: cuda_arch_flags); "": $KILN_CUDA_ARCH
  std::string cache_dir; // cache-dir=<dir>
  std::string cache_size; // cache-size=<size> (Cache.h); "": $KILN_CACHE_SIZE
  // W<option>: a Kiln warning group turned off, on, into an error
  // (Wno-eager-fallback, Werror=graph-break). `warnings` is what these and
  // the command line's -W options for Kiln groups make (complete_plugin_args).
  std::vector<std::string> warning_args;
  WarningPolicy warnings;
  // debug-dir=<dir>: the debug dump's folder (DebugDump.h); "" turns it off.
  // Unset: $KILN_DEBUG_DIR.
  std::optional<std::string> debug_dir;
  // dtype-profile=<file>: the argument dtype combinations a run recorded
  // (KILN_DTYPE_PROFILE); each fast path gets a variant per combination
  // its guards refused (codegen::FunctionSpec::observed_dtypes). "": none.
  std::string dtype_profile;
};

// Parses one argument; returns an error message, or "" when it is valid.
std::string parse_plugin_arg(llvm::StringRef arg, PluginArgs &args);

// What the rest of the command line and the environment add: remarks are
// on with -Rpass=kiln (or -Rpass-missed / -Rpass-analysis matching "kiln"),
// debug_dir defaults to $KILN_DEBUG_DIR, and the warning policy comes from
// the -W options naming Kiln groups, then the W plugin arguments.
void complete_plugin_args(const clang::CompilerInstance &ci, PluginArgs &args);

// The options of one [[kiln::compile(...)]] function.
struct CompileOptions {
  bool fullgraph = false;   // a graph break is an error, not a warning
  bool disable = false;     // leave the function alone, silently
  bool eager_backend = false; // "backend=eager": keep the eager body
  bool unsafe_math = false;
  bool cuda_graphs = false; // "mode=reduce-overhead" or "mode=max-autotune"
  bool autotune = false; // "mode=max-autotune[-no-cudagraphs]": GEMMs timed
  bool backward = false;    // "backward": compile the backward too
  std::vector<std::string> backward_args; // "backward=x,w": of these only
  std::vector<DType> dtypes; // empty: codegen's default set
};

// Validates one option string and folds it into `opts`; returns an error
// message, or "" when it is valid.
std::string parse_compile_option(llvm::StringRef option, CompileOptions &opts);

// The attribute is recorded on the declaration as an AnnotateAttr whose
// annotation is this prefix followed by the options, each ended by ';'.
// AnnotateAttr is inherited by redeclarations, so a definition after an
// annotated declaration is compiled too.
inline constexpr llvm::StringLiteral kAnnotationPrefix = "kiln.compile;";

// [[kiln::dtype("i64", ...)]] on a tensor parameter: an AnnotateAttr of
// this prefix then the dtype names, comma-separated ("kiln.dtype;i64,f32").
inline constexpr llvm::StringLiteral kDtypePrefix = "kiln.dtype;";

// The dtypes [[kiln::dtype]] gives parameter `p` (empty: none).
std::vector<DType> pinned_dtypes(const clang::ParmVarDecl *p);

// The options of `fd` (merged over all its kiln.compile annotations), or
// nullopt when it is not marked [[kiln::compile]]. `attr_loc` receives the
// location of the first annotation.
std::optional<CompileOptions> compile_options_of(const clang::FunctionDecl *fd,
                                                 clang::SourceLocation *attr_loc);

// Whether this process has parsed [[kiln::compile]] on a lambda (set by the
// attribute, read by the consumer so that only then does it walk bodies to
// find the lambdas).
bool annotated_lambda_seen();

} // namespace kiln::plugin
