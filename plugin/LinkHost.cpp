// Linking the generated host module into the TU's module, from the
// backend's pass pipeline.
#include "HostCompile.h"

#include "Diag.h"

#include <clang/Basic/CodeGenOptions.h>
#include <clang/Frontend/CompilerInstance.h>

#include <llvm/ADT/StringSet.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/Internalize.h>

using namespace clang;

namespace kiln::plugin {

namespace {

struct LinkState {
  std::shared_ptr<const std::string> bitcode;
  std::string label;
  DiagnosticsEngine *diags = nullptr;
  bool done = false;
};

void link_now(llvm::Module &dest, LinkState &st) {
  if (st.done)
    return;
  st.done = true;
  Diag diag(*st.diags);
  auto buf = llvm::MemoryBuffer::getMemBuffer(*st.bitcode, st.label,
                                              /*RequiresNullTerminator=*/false);
  llvm::Expected<std::unique_ptr<llvm::Module>> src =
      llvm::parseBitcodeFile(buf->getMemBufferRef(), dest.getContext());
  if (!src) {
    diag.error({}, "kiln: cannot read the generated host code of " +
                       st.label + ": " + llvm::toString(src.takeError()));
    return;
  }
  // Only what the TU uses (the fast paths of emitted functions) comes in;
  // it becomes internal, so the same function compiled in two TUs links.
  bool failed = llvm::Linker::linkModules(
      dest, std::move(*src), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module &m, const llvm::StringSet<> &linked) {
        llvm::internalizeModule(m, [&linked](const llvm::GlobalValue &gv) {
          return !gv.hasName() || !linked.count(gv.getName());
        });
      });
  if (failed)
    diag.error({}, "kiln: cannot link the generated host code of " + st.label +
                       " into the module");
}

struct LinkPass : llvm::PassInfoMixin<LinkPass> {
  std::shared_ptr<LinkState> st;
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &) {
    bool was_done = st->done;
    link_now(m, *st);
    return was_done ? llvm::PreservedAnalyses::all()
                    : llvm::PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

} // namespace

void link_into_tu(CompilerInstance &outer,
                  std::shared_ptr<const std::string> bitcode,
                  std::string label) {
  auto st = std::make_shared<LinkState>();
  st->bitcode = std::move(bitcode);
  st->label = std::move(label);
  st->diags = &outer.getDiagnostics();
  CodeGenOptions &cg = outer.getCodeGenOpts();
  bool no_pipeline = cg.DisableLLVMPasses;
  // Without a pipeline no extension point fires; a forced verifier pass
  // then is the first pass, and the module is linked just before it.
  if (no_pipeline)
    cg.VerifyModule = true;
  cg.PassBuilderCallbacks.push_back([st, no_pipeline](llvm::PassBuilder &pb) {
    pb.registerPipelineStartEPCallback(
        [st](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
          mpm.addPass(LinkPass{{}, st});
        });
    if (!no_pipeline)
      return;
    if (llvm::PassInstrumentationCallbacks *pic =
            pb.getPassInstrumentationCallbacks())
      pic->registerBeforeNonSkippedPassCallback(
          [st](llvm::StringRef, llvm::Any ir) {
            if (st->done)
              return;
            if (const auto *m = llvm::any_cast<const llvm::Module *>(&ir))
              link_now(const_cast<llvm::Module &>(**m), *st);
          });
  });
}

} // namespace kiln::plugin
