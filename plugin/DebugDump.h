// plugin/DebugDump.h - the debug dump folder (KILN_DEBUG_DIR or
// -fplugin-arg-kiln-debug-dir=<dir>): what Kiln did with each annotated
// function, on disk, for people to read.
//
//   <dir>/<main file name>/
//     index.txt              every annotated function: status, folder
//     tu.cu, tu.host.cpp     what nvcc and the nested compile were given
//                            (only when the compile emits code)
//     <function>/            one per annotated function, compiled or not
//       explain.json         the summary (see explain_json)
//       captured.kir .dot    the graph as captured
//       passes/<dtype>/<NN>-<pass>.kir .dot   after each pass
//       final/<dtype>.kir .dot   the graph each variant ended with, each
//                            fused kernel drawn as a cluster
//       plan.txt             which ops went into which kernel, bytes moved
//       kernels.cu           this function's CUDA kernels
//       host.cpp             this function's guards, launches and CPU loops
//   A function with several fast paths (regions around graph breaks,
//   specialisations) has these files once per fast path, in subfolders
//   named after it (region-1, region-2.1, ...); explain.json stays on top.
//   .svg next to each .dot when Graphviz's `dot` is on PATH.
//
// The TU's folder is written at the end of the TU, into a temporary folder
// renamed over the previous dump, so readers never see half of one.
#pragma once

#include "Options.h"

#include <kiln/passes/codegen.h>
#include <kiln/passes/ir.h>

#include <nlohmann/json.hpp>

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace kiln::plugin {

// Where the capture stopped following the function, and why.
struct GraphBreak {
  ir::Loc loc;
  std::string reason;
};

// One fast path of a function: the whole body, or one region of it (one
// specialisation).
struct DumpedPath {
  ir::Graph captured;
  codegen::FunctionCode code;
};

// What Kiln did with one [[kiln::compile]] function.
struct DumpedFunction {
  std::string name;    // qualified, as the user wrote it
  std::string mangled; // tells overloads apart
  ir::Loc loc;
  CompileOptions options;
  bool cuda = false; // CUDA kernels were generated (cuda on, nvcc found)
  std::string no_cuda_reason; // when !cuda

  bool compiled = false;
  std::string reason; // why it runs eagerly
  ir::Loc reason_loc;

  std::vector<DumpedPath> paths;
  std::vector<GraphBreak> breaks;
};

class DebugDump {
public:
  explicit DebugDump(std::string dir) : dir_(std::move(dir)) {}

  // A record for the next function; the reference stays valid.
  DumpedFunction &add() { return fns_.emplace_back(); }
  void set_tu_cuda(std::string cu) { tu_cuda_ = std::move(cu); }
  void set_tu_host(std::string host) { tu_host_ = std::move(host); }

  // Writes <dir>/<file name of main_file>/. Returns "" or the first error
  // (nothing half-written is left behind then).
  std::string write(llvm::StringRef main_file) const;

private:
  std::string dir_;
  std::deque<DumpedFunction> fns_;
  std::optional<std::string> tu_cuda_, tu_host_;
};

// explain.json of one function.
nlohmann::ordered_json explain_json(const DumpedFunction &f);

} // namespace kiln::plugin
