// The nested compile of a TU's generated host code, and the PCH of its
// #includes.
#include "HostCompile.h"

#include "Cache.h"
#include "Files.h"
#include "VectorMath.h"

#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/LangStandard.h>
#include <clang/Basic/Version.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <clang/Lex/HeaderSearchOptions.h>
#include <clang/Lex/PreprocessorOptions.h>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

using namespace clang;

namespace kiln::plugin {

static thread_local int g_nesting = 0;

bool in_nested_compile() { return g_nesting > 0; }

namespace {
struct NestingGuard {
  NestingGuard() { ++g_nesting; }
  ~NestingGuard() { --g_nesting; }
};
} // namespace

// A preprocessed input (-save-temps compiles the .ii) comes without include
// paths; the generated code gets the ones the driver would give a C++ file.
static void use_driver_header_search(CompilerInvocation &inv) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      "clang", reinterpret_cast<void *>(&use_driver_header_search));
  std::string std_flag =
      std::string("-std=") +
      LangStandard::getLangStandardForKind(inv.getLangOpts().LangStd).getName();
  std::string target = "--target=" + inv.getTargetOpts().Triple;
  const char *args[] = {exe.c_str(),      "-fsyntax-only", "-x", "c++",
                        std_flag.c_str(), target.c_str(),  "kiln-generated.cpp"};
  CreateInvocationOptions opts;
  opts.Diags = CompilerInstance::createDiagnostics(new DiagnosticOptions,
                                                   new IgnoringDiagConsumer);
  opts.RecoverOnError = true;
  std::unique_ptr<CompilerInvocation> fresh = createInvocation(args, opts);
  if (!fresh)
    return;
  const HeaderSearchOptions &src = fresh->getHeaderSearchOpts();
  HeaderSearchOptions &dst = inv.getHeaderSearchOpts();
  dst.UserEntries = src.UserEntries;
  dst.SystemHeaderPrefixes = src.SystemHeaderPrefixes;
  dst.ResourceDir = src.ResourceDir;
  dst.Sysroot = src.Sysroot;
  dst.UseBuiltinIncludes = src.UseBuiltinIncludes;
  dst.UseStandardSystemIncludes = src.UseStandardSystemIncludes;
  dst.UseStandardCXXIncludes = src.UseStandardCXXIncludes;
  dst.UseLibcxx = src.UseLibcxx;
}

// Everything of the outer invocation that would write files, load things
// or report differently is turned off; what shapes the code (target, -D,
// include paths, language, -g, sanitizers) is kept.
static std::shared_ptr<CompilerInvocation>
nested_invocation(CompilerInstance &outer, llvm::StringRef path,
                  llvm::StringRef text, llvm::StringRef fallback_include) {
  auto inv = std::make_shared<CompilerInvocation>(outer.getInvocation());

  FrontendOptions &fo = inv->getFrontendOpts();
  fo.Inputs.clear();
  fo.Inputs.emplace_back(path, InputKind(Language::CXX));
  fo.OutputFile.clear();
  fo.ProgramAction = frontend::EmitLLVMOnly;
  fo.Plugins.clear();
  fo.PluginArgs.clear();
  fo.AddPluginActions.clear();
  fo.ActionName.clear();
  fo.ASTMergeFiles.clear();
  fo.ShowStats = false;
  fo.StatsFile.clear();
  fo.TimeTracePath.clear();
  fo.DisableFree = false;
  fo.FixWhatYouCan = false;

  inv->getDependencyOutputOpts() = DependencyOutputOptions();

  PreprocessorOptions &po = inv->getPreprocessorOpts();
  po.ImplicitPCHInclude.clear();
  po.Includes.clear();
  po.MacroIncludes.clear();
  po.clearRemappedFiles();
  po.RetainRemappedFileBuffers = false; // see add_source()

  if (!outer.getFrontendOpts().Inputs.empty() &&
      outer.getFrontendOpts().Inputs[0].getKind().isPreprocessed())
    use_driver_header_search(*inv);
  // The fallback goes last among the -I folders, and only when no -I folder
  // has the kiln headers: a folder named twice, once as a system folder,
  // would turn the user's kiln headers into system headers.
  HeaderSearchOptions &hs = inv->getHeaderSearchOpts();
  bool have_kiln = false;
  for (const HeaderSearchOptions::Entry &e : hs.UserEntries)
    have_kiln |= llvm::sys::fs::exists(e.Path + "/kiln/scalar.h");
  if (!have_kiln && !fallback_include.empty())
    hs.AddPath(fallback_include, frontend::Angled, /*IsFramework=*/false,
               /*IgnoreSysRoot=*/true);

  CodeGenOptions &cg = inv->getCodeGenOpts();
  cg.PassBuilderCallbacks.clear();
  add_vector_math(cg, llvm::Triple(inv->getTargetOpts().Triple));
  cg.LinkBitcodeFiles.clear();
  cg.OptRecordFile.clear();
  cg.MainFileName = path.str();
  cg.CoverageDataFile.clear();
  cg.CoverageNotesFile.clear();
  cg.CoverageMapping = false;
  cg.setProfileInstr(CodeGenOptions::ProfileNone);
  cg.SplitDwarfFile.clear();
  cg.SplitDwarfOutput.clear();
  cg.StackUsageOutput.clear();
  cg.TimePasses = false;
  cg.ThinLTOIndexFile.clear();
  cg.PrepareForLTO = cg.PrepareForThinLTO = false;
  // The generated loops must be fast in a debug build too.
  cg.DisableLLVMPasses = false;
  cg.OptimizationLevel = 2;
  cg.OptimizeSize = 0;
  cg.setInlining(CodeGenOptions::NormalInlining);
  cg.VectorizeLoop = cg.VectorizeSLP = cg.UnrollLoops = true;

  LangOptions &lo = inv->getLangOpts();
  // Sanitizers instrument the TU's module after the generated code is
  // linked in; instrumenting it here too would instrument it twice. The
  // generated code is left uninstrumented, like a library built without.
  lo.Sanitize.clear();
  lo.Optimize = true;
  lo.OptimizeSize = false;
  lo.NoInlineDefine = false;
  // The generated code never reads errno: libm calls are pure, and pure
  // calls vectorise (VectorMath.h).
  lo.MathErrno = false;
  if (!lo.OpenMP) { // `#pragma omp simd` only, as -fopenmp-simd does
    lo.OpenMP = 51;
    lo.OpenMPSimd = true;
  }

  DiagnosticOptions &dgo = inv->getDiagnosticOpts();
  dgo.VerifyDiagnostics = false;
  dgo.IgnoreWarnings = true; // generated code; users may build with -Werror
  dgo.Warnings.clear();
  dgo.Remarks.clear();
  dgo.DiagnosticSerializationFile.clear();
  dgo.ShowColors = false;
  return inv;
}

// The loop hints of the generated code (`#pragma omp simd`) did their work
// in the nested O2 pipeline. Left in, the TU's own pipeline would report
// "loop not vectorized" for remainder loops, a warning the user cannot act
// on (and an error under -Werror).
static void drop_loop_hints(llvm::Module &m) {
  static const llvm::StringRef prefixes[] = {
      "llvm.loop.vectorize.", "llvm.loop.interleave.", "llvm.loop.unroll.",
      "llvm.loop.distribute.", "llvm.loop.unroll_and_jam."};
  for (llvm::Function &f : m)
    for (llvm::Instruction &i : llvm::instructions(f))
      if (llvm::MDNode *loop = i.getMetadata(llvm::LLVMContext::MD_loop))
        i.setMetadata(llvm::LLVMContext::MD_loop,
                      llvm::makePostTransformationMetadata(
                          m.getContext(), loop, prefixes, {}));
}

// The generated text as a remapped file. Each compile owns (and frees) its
// buffer, so every attempt gets its own copy.
static void add_source(CompilerInvocation &inv, llvm::StringRef path,
                       llvm::StringRef text) {
  inv.getPreprocessorOpts().addRemappedFile(
      path, llvm::MemoryBuffer::getMemBufferCopy(text, path).release());
}

// Runs `action` on a CompilerInstance for `inv` that shares the outer file
// manager (saves looking up every header again); diagnostics go to `diags`,
// the files it reads to `deps` when given.
static bool run_nested(CompilerInstance &outer,
                       std::shared_ptr<CompilerInvocation> inv,
                       FrontendAction &action, std::string &diags,
                       std::shared_ptr<DependencyCollector> deps = nullptr) {
  llvm::raw_string_ostream os(diags); // outlives `nested`, which writes to it
  CompilerInstance nested(outer.getPCHContainerOperations());
  nested.setInvocation(inv);
  if (deps)
    nested.addDependencyCollector(deps);
  nested.createDiagnostics(
      new TextDiagnosticPrinter(os, &inv->getDiagnosticOpts()),
      /*ShouldOwnClient=*/true);
  nested.setFileManager(&outer.getFileManager());
  // "N errors generated." belongs with the other nested diagnostics.
  nested.setVerboseOutputStream(os);
  bool ok = nested.ExecuteAction(action) &&
            !nested.getDiagnostics().hasErrorOccurred();
  os.flush();
  return ok;
}

// The #include lines the generated text starts with (after comments).
static std::string prelude_of(llvm::StringRef text) {
  std::string prelude;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    llvm::StringRef t = line.trim();
    if (t.starts_with("#include"))
      prelude += t.str() + "\n";
    else if (!t.empty() && !t.starts_with("//"))
      break;
    text = rest;
  }
  return prelude;
}

// A PCH of the generated code's #includes, built once per set of options
// and headers: parsing <kiln/rt.h> and the standard headers is most of the
// nested compile. Its name hashes every option of the nested invocation;
// clang checks the headers' sizes and times when it loads it. "" when it
// cannot be had.
static std::string prelude_pch(CompilerInstance &outer,
                               const CompilerInvocation &inv,
                               llvm::StringRef prelude, llvm::StringRef pch_dir,
                               bool &built) {
  if (prelude.empty() || pch_dir.empty())
    return "";
  CompilerInvocation keyed(inv);
  keyed.getFrontendOpts().Inputs.clear();
  keyed.getFrontendOpts().OutputFile.clear();
  keyed.getPreprocessorOpts().clearRemappedFiles();
  keyed.getCodeGenOpts().MainFileName.clear();
  Hasher h;
  h.add("kiln-prelude-pch-v1").add(getClangFullVersion()).add(prelude);
  keyed.generateCC1CommandLine([&](const llvm::Twine &arg) { h.add(arg.str()); });
  std::string key = h.hex(32);
  std::string pch = (pch_dir + "/prelude-" + key + ".pch").str();
  std::string header = (pch_dir + "/prelude-" + key + ".h").str();
  if (llvm::sys::fs::exists(pch)) {
    touch_cache_file(pch); // recently used: evicted last
    touch_cache_file(header);
    return pch;
  }

  if (llvm::sys::fs::create_directories(pch_dir))
    return "";
  auto gen = std::make_shared<CompilerInvocation>(inv);
  gen->getFrontendOpts().Inputs.clear();
  gen->getFrontendOpts().Inputs.emplace_back(
      header, InputKind(Language::CXX).getHeader());
  gen->getFrontendOpts().ProgramAction = frontend::GeneratePCH;
  gen->getFrontendOpts().OutputFile = pch; // written to a temporary, renamed
  // On disk, not remapped: loading the PCH checks the file it was made of.
  gen->getPreprocessorOpts().clearRemappedFiles();
  if (!write_atomically(header, prelude).empty())
    return "";
  GeneratePCHAction action;
  std::string diags;
  built = true;
  if (!run_nested(outer, gen, action, diags) || !llvm::sys::fs::exists(pch))
    return "";
  return pch;
}

// ---- the nested compile's bitcode, cached ----
//
// <key>.bc under the cache's host/ folder, the key hashing the text, clang's
// version and every option of the nested invocation; beside it <key>.deps
// lists each file the compile read (the PCH and its headers included) with
// its size and time, and a hit wants them all unchanged, as clang does of
// a PCH's headers. Paths are kept as the compile saw them, so a relative
// -I is looked up again from where the next build runs.

namespace {
struct EveryDependency : DependencyCollector {
  bool needSystemDependencies() override { return true; }
};

// "<size> <mtime>" of a file, "" when it is not there.
std::string file_stamp(llvm::StringRef path) {
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st) ||
      st.type() != llvm::sys::fs::file_type::regular_file)
    return "";
  return std::to_string(st.getSize()) + " " +
         std::to_string(
             st.getLastModificationTime().time_since_epoch().count());
}

std::string bitcode_key(const CompilerInvocation &inv, llvm::StringRef text) {
  CompilerInvocation keyed(inv);
  keyed.getPreprocessorOpts().clearRemappedFiles();
  Hasher h;
  h.add("kiln-host-bitcode-v1").add(getClangFullVersion()).add(text);
  h.add(plugin_identity()); // what the plugin does to the module after
  keyed.generateCC1CommandLine([&](const llvm::Twine &arg) { h.add(arg.str()); });
  return h.hex(32);
}

bool cached_bitcode(const std::string &base, std::string &bitcode) {
  std::string deps;
  if (!read_file(base + ".deps", deps))
    return false;
  llvm::SmallVector<llvm::StringRef, 256> lines;
  llvm::StringRef(deps).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    // <size> <mtime> <path>
    auto [size, rest] = line.split(' ');
    auto [mtime, file] = rest.split(' ');
    if (file_stamp(file) != (size + " " + mtime).str())
      return false;
  }
  if (!read_file(base + ".bc", bitcode) || bitcode.empty())
    return false;
  touch_cache_file(base + ".bc"); // recently used: evicted last
  touch_cache_file(base + ".deps");
  return true;
}

// Keeps `bitcode` unless a file it was made of cannot be stamped. The
// .deps goes last: a reader that finds it finds the .bc complete.
bool keep_bitcode(const std::string &base, const std::string &bitcode,
                  llvm::ArrayRef<std::string> deps, llvm::StringRef self) {
  std::string list;
  for (const std::string &d : deps) {
    if (d == self)
      continue; // the text itself, which the key holds
    std::string stamp = file_stamp(d);
    if (stamp.empty())
      return false;
    list += stamp + " " + d + "\n";
  }
  return write_atomically(base + ".bc", bitcode).empty() &&
         write_atomically(base + ".deps", list).empty();
}
} // namespace

HostModule compile_host(CompilerInstance &outer, llvm::StringRef path,
                        llvm::StringRef text, llvm::StringRef fallback_include,
                        llvm::StringRef pch_dir, llvm::StringRef bitcode_dir) {
  HostModule result;
  NestingGuard guard;
  std::shared_ptr<CompilerInvocation> inv =
      nested_invocation(outer, path, text, fallback_include);
  std::string base;
  if (!bitcode_dir.empty() && !llvm::sys::fs::create_directories(bitcode_dir)) {
    base = (bitcode_dir + "/" + bitcode_key(*inv, text)).str();
    if ((result.cache_hit = cached_bitcode(base, result.bitcode)))
      return result;
  }
  std::string pch = prelude_pch(outer, *inv, prelude_of(text), pch_dir,
                                result.wrote_cache);

  for (bool use_pch : {true, false}) {
    if (use_pch && pch.empty())
      continue;
    auto attempt = std::make_shared<CompilerInvocation>(*inv);
    add_source(*attempt, path, text);
    if (use_pch)
      attempt->getPreprocessorOpts().ImplicitPCHInclude = pch;
    EmitLLVMOnlyAction action;
    std::string diags;
    auto deps = std::make_shared<EveryDependency>();
    bool ok = run_nested(outer, attempt, action, diags, deps);
    std::unique_ptr<llvm::Module> module = action.takeModule();
    if (!ok || !module) {
      // A stale PCH (its headers changed) fails to load: rebuild next time.
      if (use_pch) {
        llvm::sys::fs::remove(pch);
        continue;
      }
      result.error = diags.empty() ? "the nested compile failed" : diags;
      return result;
    }
    drop_loop_hints(*module);
    tidy_vector_math(*module);
    llvm::raw_string_ostream bc(result.bitcode);
    llvm::WriteBitcodeToFile(*module, bc);
    bc.flush();
    if (!base.empty())
      result.wrote_cache |=
          keep_bitcode(base, result.bitcode, deps->getDependencies(), path);
    return result;
  }
  return result;
}

} // namespace kiln::plugin
