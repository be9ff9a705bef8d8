#include "Remarks.h"

#include <clang/Basic/CodeGenOptions.h>
#include <clang/Frontend/CompilerInstance.h>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Remarks/Remark.h>
#include <llvm/Remarks/RemarkSerializer.h>
#include <llvm/Remarks/RemarkStreamer.h>

#include <memory>

namespace kiln::plugin {

namespace {

struct Pending {
  std::vector<RecordedRemark> remarks;
  bool done = false;
};

void emit(llvm::Module &m, Pending &p) {
  if (p.done)
    return;
  p.done = true;
  llvm::remarks::RemarkStreamer *rs = m.getContext().getMainRemarkStreamer();
  if (!rs || !rs->matchesFilter("kiln"))
    return;
  for (const RecordedRemark &r : p.remarks) {
    llvm::StringRef text = r.message;
    llvm::remarks::Remark out;
    if (text.contains("graph break") || text.contains("runs eagerly") ||
        text.contains("cannot compile")) {
      out.RemarkType = llvm::remarks::Type::Missed;
      out.RemarkName = "GraphBreak";
    } else if (text.starts_with("kiln: compiled")) {
      out.RemarkType = llvm::remarks::Type::Passed;
      out.RemarkName = "Compiled";
    } else {
      out.RemarkType = llvm::remarks::Type::Analysis;
      out.RemarkName = "Kiln";
    }
    out.PassName = "kiln";
    out.FunctionName = r.function.empty() ? llvm::StringRef("<file>")
                                          : llvm::StringRef(r.function);
    if (!r.file.empty())
      out.Loc = llvm::remarks::RemarkLocation{r.file, r.line, r.col};
    out.Args.emplace_back();
    out.Args.back().Key = "String";
    out.Args.back().Val = text;
    rs->getSerializer().emit(out);
  }
}

struct RecordPass : llvm::PassInfoMixin<RecordPass> {
  std::shared_ptr<Pending> pending;
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &) {
    emit(m, *pending);
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

} // namespace

void record_remarks(clang::CompilerInstance &ci,
                    std::vector<RecordedRemark> remarks) {
  if (remarks.empty())
    return;
  auto pending = std::make_shared<Pending>();
  pending->remarks = std::move(remarks);
  ci.getCodeGenOpts().PassBuilderCallbacks.push_back(
      [pending](llvm::PassBuilder &pb) {
        pb.registerPipelineStartEPCallback(
            [pending](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
              mpm.addPass(RecordPass{{}, pending});
            });
      });
}

} // namespace kiln::plugin
