// Linking the generated host module into the TU's module, from the
// backend's pass pipeline.
#include "HostCompile.h"

#include "Diag.h"
#include "Files.h"

#include <clang/Basic/CodeGenOptions.h>
#include <clang/Frontend/CompilerInstance.h>

#include <llvm/ADT/StringSet.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
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
  std::vector<uint8_t> placeholder, fatbin;
  DiagnosticsEngine *diags = nullptr;
  bool done = false;
};

// The constant holding `placeholder` (as the generated code embeds its
// fatbin: a char array, perhaps with a terminating NUL) gets the fatbin's
// bytes, keeping its name, linkage, alignment and debug info.
bool put_fatbin(llvm::Module &m, const LinkState &st) {
  llvm::StringRef want(reinterpret_cast<const char *>(st.placeholder.data()),
                       st.placeholder.size());
  for (llvm::GlobalVariable &old : m.globals()) {
    const auto *data = llvm::dyn_cast_or_null<llvm::ConstantDataSequential>(
        old.hasInitializer() ? old.getInitializer() : nullptr);
    if (!data || !data->getElementType()->isIntegerTy(8))
      continue;
    llvm::StringRef raw = data->getRawDataValues();
    if (raw.ends_with(llvm::StringRef("\0", 1)))
      raw = raw.drop_back();
    if (raw != want)
      continue;
    llvm::Constant *bytes = llvm::ConstantDataArray::get(
        m.getContext(), llvm::ArrayRef<uint8_t>(st.fatbin));
    auto *gv = new llvm::GlobalVariable(
        m, bytes->getType(), /*isConstant=*/true, old.getLinkage(), bytes, "",
        &old, old.getThreadLocalMode(), old.getAddressSpace());
    gv->copyAttributesFrom(&old);
    gv->copyMetadata(&old, 0);
    gv->takeName(&old);
    old.replaceAllUsesWith(gv);
    old.eraseFromParent();
    return true;
  }
  return false;
}

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
  if (!st.placeholder.empty() && !put_fatbin(**src, st)) {
    diag.error({}, "kiln: internal error (a Kiln bug, please report it): the "
                   "generated host code of " + st.label + " does not embed "
                   "its fatbin where Kiln looks for it");
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

std::vector<uint8_t> fatbin_placeholder(const std::vector<uint8_t> &fatbin) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(fatbin.data()),
                        fatbin.size());
  std::string text = "kiln: the " + std::to_string(fatbin.size()) +
                     " bytes of fatbin " + Hasher().add(bytes).hex(32) +
                     " go here when this code is linked into its TU";
  return std::vector<uint8_t>(text.begin(), text.end());
}

void link_into_tu(CompilerInstance &outer,
                  std::shared_ptr<const std::string> bitcode,
                  std::string label, std::vector<uint8_t> placeholder,
                  std::vector<uint8_t> fatbin) {
  auto st = std::make_shared<LinkState>();
  st->bitcode = std::move(bitcode);
  st->label = std::move(label);
  st->placeholder = std::move(placeholder);
  st->fatbin = std::move(fatbin);
  st->diags = &outer.getDiagnostics();
  CodeGenOptions &cg = outer.getCodeGenOpts();
  bool no_pipeline = cg.DisableLLVMPasses;
  // Without a pipeline no extension point fires; a forced verifier pass
  // then is the first pass, and the module is linked just before it.
  if (no_pipeline)
    cg.VerifyModule = true;
  // The generated code was optimised by its own compile (O2, vectorised):
  // linked at the end of the TU's pipeline it goes straight to codegen
  // instead of through the optimiser again (most of a warm build's cost).
  // An LTO pre-link pipeline may not end that way: there it is linked at
  // the start, as before (the pass is a no-op once linked).
  bool lto = cg.PrepareForLTO || cg.PrepareForThinLTO;
  cg.PassBuilderCallbacks.push_back([st, no_pipeline, lto](llvm::PassBuilder &pb) {
    if (lto)
      pb.registerPipelineStartEPCallback(
          [st](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
            mpm.addPass(LinkPass{{}, st});
          });
    pb.registerOptimizerLastEPCallback(
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
