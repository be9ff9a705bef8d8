// The plugin action "kiln" and its AST consumer.
//
// The consumer runs before CodeGen's (AddBeforeMainAction). Each
// [[kiln::compile]] function is captured, compiled (codegen.h) and has its
// body rewritten through Sema as soon as clang hands it over, so CodeGen
// only ever sees the rewritten body. At the end of the TU, for actions that
// emit code, the TU's CUDA goes through nvcc and its host code through a
// nested compile whose module is linked into this TU's.
#include "Capture.h"
#include "Diag.h"
#include "Files.h"
#include "HostCompile.h"
#include "Nvcc.h"
#include "Options.h"
#include "Rewrite.h"

#include <kiln/passes/codegen.h>
#include <kiln/passes/text.h>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/Mangle.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendPluginRegistry.h>
#include <clang/Lex/HeaderSearchOptions.h>
#include <clang/Serialization/ASTDeserializationListener.h>

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <exception>

#ifndef KILN_RUNTIME_INCLUDE_DIR
#define KILN_RUNTIME_INCLUDE_DIR ""
#endif

using namespace clang;

namespace kiln::plugin {
namespace {

bool is_codegen_action(const CompilerInstance &ci) {
  switch (ci.getFrontendOpts().ProgramAction) {
  case frontend::EmitAssembly:
  case frontend::EmitBC:
  case frontend::EmitLLVM:
  case frontend::EmitLLVMOnly:
  case frontend::EmitCodeGenOnly:
  case frontend::EmitObj:
    return true;
  default:
    return false;
  }
}

// The include folder holding <kiln/scalar.h>: the user's -I that has it,
// else the folder the TU's <kiln/tensor.h> came from (a preprocessed input
// has no -I), else the runtime headers of the source tree this plugin was
// built from.
std::string kiln_include_dir(const CompilerInstance &ci,
                             llvm::StringRef tensor_header) {
  for (const HeaderSearchOptions::Entry &e :
       ci.getHeaderSearchOpts().UserEntries) {
    llvm::SmallString<256> p(e.Path);
    llvm::sys::fs::make_absolute(p);
    llvm::SmallString<256> probe(p);
    llvm::sys::path::append(probe, "kiln", "scalar.h");
    if (llvm::sys::fs::exists(probe))
      return std::string(p);
  }
  if (!tensor_header.empty()) {
    llvm::SmallString<256> dir = llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(tensor_header));
    llvm::SmallString<256> probe(dir);
    llvm::sys::path::append(probe, "kiln", "scalar.h");
    if (!dir.empty() && llvm::sys::fs::exists(probe)) {
      llvm::sys::fs::make_absolute(dir);
      return std::string(dir);
    }
  }
  return KILN_RUNTIME_INCLUDE_DIR;
}

// Functions read from a PCH or module are not handed to the consumer when
// they are inline; they are noted here and compiled at the end of the TU.
class DeserializedFunctions : public ASTDeserializationListener {
public:
  std::vector<const FunctionDecl *> functions;
  void DeclRead(GlobalDeclID, const Decl *d) override {
    if (const auto *fd = dyn_cast<FunctionDecl>(d); fd && fd->hasAttrs())
      functions.push_back(fd);
  }
};

// Runs `fn`, turning an exception or a crash (where clang runs with crash
// recovery, as the driver does) into a message: a Kiln bug must not take
// clang down. "" when `fn` finished.
template <class F> std::string guarded(F &&fn) {
  std::string err;
  llvm::CrashRecoveryContext crc;
  bool finished = crc.RunSafely([&] {
    try {
      fn();
    } catch (const std::exception &e) {
      err = e.what();
    } catch (...) {
      err = "unknown exception";
    }
  });
  if (!finished)
    err = "crashed";
  return err;
}

class KilnConsumer : public ASTConsumer {
public:
  KilnConsumer(CompilerInstance &ci, PluginArgs args)
      : ci_(ci), args_(std::move(args)), diag_(ci.getDiagnostics()) {
    if (args_.cuda)
      nvcc_ = find_nvcc(args_.nvcc, nvcc_searched_);
  }

  void Initialize(ASTContext &ctx) override {
    ctx_ = &ctx;
    mangle_.reset(ctx.createMangleContext());
  }

  bool HandleTopLevelDecl(DeclGroupRef dg) override {
    for (Decl *d : dg)
      visit(d);
    return true;
  }

  void HandleInlineFunctionDefinition(FunctionDecl *fd) override { handle(fd); }

  ASTDeserializationListener *GetASTDeserializationListener() override {
    return &deserialized_;
  }

  void HandleTranslationUnit(ASTContext &) override {
    // By index: handling one may deserialize more.
    for (size_t i = 0; i < deserialized_.functions.size(); ++i)
      handle(const_cast<FunctionDecl *>(deserialized_.functions[i]));
    if (fns_.empty() || !is_codegen_action(ci_) ||
        ci_.getDiagnostics().hasErrorOccurred())
      return;
    if (std::string err = guarded([&] { finish(); }); !err.empty())
      diag_.error(first_loc_, "kiln: internal error (a Kiln bug, please report "
                              "it): " + err);
  }

private:
  void visit(Decl *d) {
    if (auto *fd = dyn_cast<FunctionDecl>(d))
      handle(fd);
    else if (auto *ftd = dyn_cast<FunctionTemplateDecl>(d))
      handle(ftd->getTemplatedDecl());
    else if (auto *dc = dyn_cast<NamespaceDecl>(d))
      for (Decl *x : dc->decls())
        visit(x);
    else if (auto *dc = dyn_cast<LinkageSpecDecl>(d))
      for (Decl *x : dc->decls())
        visit(x);
    else if (auto *dc = dyn_cast<ExportDecl>(d))
      for (Decl *x : dc->decls())
        visit(x);
  }

  void handle(FunctionDecl *fd);
  SourceLocation source_loc(const ir::Loc &loc, SourceLocation fallback) const;
  std::string unsupported_kind(const FunctionDecl *fd) const;
  std::string symbol_for(const FunctionDecl *fd, const Capture &cap);
  std::string main_file_path() const;
  void finish();

  CompilerInstance &ci_;
  PluginArgs args_;
  Diag diag_;
  ASTContext *ctx_ = nullptr;
  std::unique_ptr<MangleContext> mangle_;
  std::string nvcc_, nvcc_searched_;
  DeserializedFunctions deserialized_;
  llvm::DenseSet<const FunctionDecl *> seen_;
  std::vector<codegen::FunctionCode> fns_;
  SourceLocation first_loc_;
  std::string tensor_header_; // where kiln::Tensor was declared
};

std::string KilnConsumer::unsupported_kind(const FunctionDecl *fd) const {
  if (fd->isTemplated() || fd->isTemplateInstantiation() ||
      fd->getTemplateSpecializationKind() != TSK_Undeclared)
    return "function templates and members of class templates are not "
           "supported yet";
  if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && md->isVirtual())
    return "virtual functions are not supported yet";
  if (isa_and_nonnull<CoroutineBodyStmt>(fd->getBody()))
    return "coroutines are not supported yet";
  if (fd->isVariadic())
    return "variadic functions are not supported yet";
  return "";
}

SourceLocation KilnConsumer::source_loc(const ir::Loc &loc,
                                        SourceLocation fallback) const {
  if (!loc.valid())
    return fallback;
  const SourceManager &sm = ctx_->getSourceManager();
  auto fe = sm.getFileManager().getOptionalFileRef(loc.file);
  if (!fe)
    return fallback;
  SourceLocation l = sm.translateFileLineCol(*fe, loc.line, loc.col);
  return l.isValid() ? l : fallback;
}

std::string KilnConsumer::main_file_path() const {
  const SourceManager &sm = ctx_->getSourceManager();
  OptionalFileEntryRef fe = sm.getFileEntryRefForID(sm.getMainFileID());
  if (!fe)
    return "<stdin>";
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(fe->getName(), real))
    return std::string(real);
  return fe->getName().str();
}

// "__kiln_" + mangled name + "_" + a hash of (main file, graph): stable
// across rebuilds, distinct across TUs.
std::string KilnConsumer::symbol_for(const FunctionDecl *fd,
                                     const Capture &cap) {
  std::string mangled;
  llvm::raw_string_ostream os(mangled);
  if (mangle_->shouldMangleDeclName(fd))
    mangle_->mangleName(GlobalDecl(fd), os);
  else
    os << fd->getName();
  os.flush();
  std::string hash = Hasher().add(main_file_path()).add(cap.fingerprint).hex(8);
  return "__kiln_" + mangled + "_" + hash;
}

void KilnConsumer::handle(FunctionDecl *fd) {
  if (!fd || !fd->hasAttrs() || !fd->doesThisDeclarationHaveABody() ||
      fd->isInvalidDecl())
    return;
  SourceLocation attr_loc;
  std::optional<CompileOptions> opts = compile_options_of(fd, &attr_loc);
  if (!opts || opts->disable || !seen_.insert(fd).second)
    return;
  std::string name = fd->getQualifiedNameAsString();
  auto problem = [&](SourceLocation loc, const std::string &why) {
    if (loc.isInvalid())
      loc = attr_loc;
    if (opts->fullgraph)
      diag_.error(loc, "kiln: cannot compile '" + name + "' with \"fullgraph\": " +
                           why);
    else
      diag_.warning(loc, "kiln: cannot compile '" + name + "': " + why + "; '" +
                             name + "' runs eagerly");
  };

  if (std::string why = unsupported_kind(fd); !why.empty())
    return problem(attr_loc, why);
  if (opts->eager_backend) {
    if (args_.remarks)
      diag_.remark(fd->getLocation(),
                   "kiln: '" + name + "' left eager: backend=eager");
    return;
  }

  // A body rewritten already (a PCH built with the plugin) is not rewritten
  // again; its original part is captured for the same fast path.
  RewrittenBody done = find_rewritten(fd);
  const Stmt *body = done.original ? done.original : fd->getBody();
  Capture cap = capture_function(*ctx_, fd, body);
  if (!cap.ok) {
    if (!cap.silent)
      problem(cap.fail_loc, cap.fail_reason);
    return;
  }

  codegen::FunctionSpec spec;
  spec.args = cap.args;
  spec.user_name = name;
  spec.symbol = done.original ? done.symbol : symbol_for(fd, cap);
  spec.loc = to_ir_loc(*ctx_, fd->getLocation());
  std::string graph_text = args_.dump ? ir::print(cap.graph) : "";
  spec.graph = std::move(cap.graph);
  codegen::Options copts;
  if (!opts->dtypes.empty())
    copts.dtypes = opts->dtypes;
  copts.unsafe_math = opts->unsafe_math;
  copts.cuda = args_.cuda && !nvcc_.empty();

  codegen::FunctionCode code;
  if (std::string err = guarded([&] { code = codegen::compile_function(spec, copts); });
      !err.empty())
    return problem(fd->getLocation(),
                   "internal error in code generation (a Kiln bug, please "
                   "report it): " + err);

  if (!code.error.empty()) {
    llvm::StringRef why = code.error;
    why.consume_front("cannot compile '" + spec.user_name + "': ");
    return problem(source_loc(code.error_loc, fd->getLocation()), why.str());
  }

  if (!done.original) {
    std::string err =
        rewrite_body(ci_.getSema(), fd, spec.symbol, cap.params, cap.args);
    if (!err.empty())
      return problem(fd->getLocation(), "internal error in the rewrite: " + err);
  }

  if (args_.dump) {
    llvm::errs() << "// kiln-dump: rewrite " << name << "\n";
    fd->print(llvm::errs(), ctx_->getPrintingPolicy());
    llvm::errs() << "\n// kiln-dump: graph " << name << "\n"
                 << graph_text << "// kiln-dump: plan " << name
                 << "\n"
                 << code.plan << "\n";
  }
  if (args_.remarks) {
    for (const codegen::Remark &r : code.remarks)
      diag_.remark(source_loc(r.loc, fd->getLocation()), "kiln: " + r.message);
  }
  if (fns_.empty()) {
    first_loc_ = fd->getLocation();
    if (const auto *rd = fd->getReturnType()->getAsCXXRecordDecl())
      tensor_header_ = to_ir_loc(*ctx_, rd->getLocation()).file;
  }
  fns_.push_back(std::move(code));
}

void KilnConsumer::finish() {
  std::string cache = cache_dir(args_.cache_dir);
  if (cache.empty()) {
    llvm::SmallString<256> tmp;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
    llvm::sys::path::append(tmp, "kiln");
    llvm::sys::fs::create_directories(tmp);
    cache = std::string(tmp);
  }
  std::string include_dir = kiln_include_dir(ci_, tensor_header_);
  std::string main = main_file_path();

  // The file's name (for logs) and a hash of it and its functions.
  std::string stem = llvm::sys::path::stem(main).str();
  for (char &c : stem)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  Hasher id_hash;
  id_hash.add(main);
  for (const codegen::FunctionCode &f : fns_)
    id_hash.add(f.symbol);
  std::string module_id = stem + "_" + id_hash.hex(12);

  // (a) CUDA kernels.
  std::vector<uint8_t> fatbin;
  std::string no_cuda_reason;
  bool any_kernels = false;
  for (const codegen::FunctionCode &f : fns_)
    any_kernels |= f.has_cuda_kernels;
  if (!args_.cuda) {
    no_cuda_reason = "CUDA was turned off with -fplugin-arg-kiln-cuda=off "
                     "when this file was compiled";
  } else if (nvcc_.empty()) {
    diag_.warning(first_loc_, "kiln: nvcc not found; CUDA kernels not built, "
                              "compiled functions run their CPU path only "
                              "(searched " + nvcc_searched_ + ")");
    no_cuda_reason = "nvcc was not found when this file was compiled";
  } else if (any_kernels) {
    std::string cu = codegen::cuda_translation_unit(fns_);
    if (args_.dump)
      llvm::errs() << "// kiln-dump: cuda " << main << "\n" << cu << "\n";
    FatbinResult fb = build_fatbin(nvcc_, cu, include_dir, cache);
    if (!fb.ok) {
      diag_.error(first_loc_,
                  "kiln: nvcc failed on the generated CUDA code of this file "
                  "(a Kiln bug, please report it); source: " +
                      fb.cu_path + "\n" + fb.error);
      return;
    }
    if (args_.remarks)
      diag_.remark(first_loc_, fb.cache_hit ? "kiln: nvcc cache hit"
                                            : "kiln: nvcc ran; fatbin cached");
    fatbin = std::move(fb.fatbin);
  } else {
    no_cuda_reason = "no CUDA kernels were generated for this function";
  }

  // (b) Host code: compiled in-process, linked into this TU's module.
  std::string host = codegen::host_translation_unit(fns_, fatbin, module_id,
                                                    no_cuda_reason);
  if (args_.dump)
    llvm::errs() << "// kiln-dump: host " << main << "\n" << host << "\n";
  llvm::SmallString<256> src_dir(cache);
  llvm::sys::path::append(src_dir, "src");
  llvm::sys::fs::create_directories(src_dir);
  std::string path = (src_dir + "/" + stem + "-" + Hasher().add(host).hex(16) +
                      ".kiln.cpp")
                         .str();
  if (!llvm::sys::fs::exists(path))
    (void)write_atomically(path, host); // for debuggers; compiled from memory
  llvm::SmallString<256> pch_dir(cache);
  llvm::sys::path::append(pch_dir, "pch");
  HostModule hm = compile_host(ci_, path, host, include_dir, pch_dir);
  if (!hm.error.empty()) {
    diag_.error(first_loc_, "kiln: the generated host code of this file did "
                            "not compile (a Kiln bug, please report it); "
                            "source: " + path + "\n" + hm.error);
    return;
  }
  link_into_tu(ci_, std::make_shared<const std::string>(std::move(hm.bitcode)),
               path);
}

class KilnAction : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci,
                                                 llvm::StringRef) override {
    return std::make_unique<KilnConsumer>(ci, args_);
  }

  bool ParseArgs(const CompilerInstance &ci,
                 const std::vector<std::string> &args) override {
    // The nested compile of generated code instantiates this action too.
    if (in_nested_compile())
      return false;
    for (const std::string &a : args) {
      std::string err = parse_plugin_arg(a, args_);
      if (!err.empty()) {
        Diag(ci.getDiagnostics()).error({}, "kiln: " + err);
        return false;
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

private:
  PluginArgs args_;
};

} // namespace
} // namespace kiln::plugin

static clang::FrontendPluginRegistry::Add<kiln::plugin::KilnAction>
    X("kiln", "compile [[kiln::compile]] tensor functions with Kiln");
