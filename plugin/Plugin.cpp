// The plugin action "kiln" and its AST consumer.
//
// The consumer runs before CodeGen's (AddBeforeMainAction). Each
// [[kiln::compile]] function is captured, compiled (codegen.h) and has its
// body rewritten through Sema as soon as clang hands it over, so CodeGen
// only ever sees the rewritten body. At the end of the TU, for actions that
// emit code, the TU's CUDA goes through nvcc and its host code through a
// nested compile whose module is linked into this TU's.
#include "Cache.h"
#include "Capture.h"
#include "CompileRegions.h"
#include "DebugDump.h"
#include "Diag.h"
#include "Files.h"
#include "HostCompile.h"
#include "Nvcc.h"
#include "Options.h"
#include "Remarks.h"
#include "Rewrite.h"

#include <kiln/passes/codegen.h>
#include <kiln/passes/text.h>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/Mangle.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendPluginRegistry.h>
#include <clang/Lex/HeaderSearchOptions.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Serialization/ASTDeserializationListener.h>

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

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

// The lambdas whose call operator is marked [[kiln::compile]], in the order
// a traversal meets them (an enclosing lambda before those inside it).
struct MarkedLambdas : RecursiveASTVisitor<MarkedLambdas> {
  bool instantiations = false; // also inside template instantiations
  std::vector<CXXMethodDecl *> found;
  bool shouldVisitTemplateInstantiations() const { return instantiations; }
  bool VisitLambdaExpr(LambdaExpr *e) {
    if (CXXMethodDecl *op = e->getCallOperator(); op && op->hasAttrs())
      found.push_back(op);
    return true;
  }
};

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

class KilnConsumer : public ASTConsumer {
public:
  KilnConsumer(CompilerInstance &ci, PluginArgs args)
      : ci_(ci), args_(std::move(args)),
        diag_(ci.getDiagnostics(), &args_.warnings) {
    complete_plugin_args(ci, args_);
    // -fsave-optimization-record: remarks are made for the record whether
    // or not they are printed.
    bool record = !ci.getCodeGenOpts().OptRecordFile.empty();
    diag_.route_remarks(args_.remarks, record ? &recorded_ : nullptr);
    args_.remarks |= record;
    if (args_.cuda)
      nvcc_ = find_nvcc(args_.nvcc, nvcc_searched_);
    if (!args_.debug_dir->empty())
      dump_ = std::make_unique<DebugDump>(*args_.debug_dir);
    if (!args_.dtype_profile.empty())
      read_dtype_profile();
  }

  // -fplugin-arg-kiln-dtype-profile=<file>. A file that is not there yet
  // (no run has recorded anything) adds nothing, silently: a build can
  // always name it.
  void read_dtype_profile() {
    const std::string &path = args_.dtype_profile;
    if (!llvm::sys::fs::exists(path))
      return;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
        llvm::MemoryBuffer::getFile(path);
    if (!buf) {
      diag_.warning(WarningGroup::Config, {},
                    "kiln: cannot read the dtype profile '" + path + "' (" +
                        buf.getError().message() +
                        "): no variants come from it");
      return;
    }
    profile_ = codegen::parse_dtype_profile((*buf)->getBuffer().str());
    // What is compiled depends on the profile, so with -MD the object
    // depends on it too: a build tool rebuilds when a run adds to it. The
    // dependency file's generator exists by now (plugins start after the
    // preprocessor), so it hears of the file as of a __has_include that
    // found it.
    if (clang::PPCallbacks *cb = ci_.hasPreprocessor()
                                     ? ci_.getPreprocessor().getPPCallbacks()
                                     : nullptr)
      cb->HasInclude({}, path, /*IsAngled=*/false,
                     ci_.getFileManager().getOptionalFileRef(path),
                     clang::SrcMgr::C_User);
    if (profile_.bad)
      diag_.warning(WarningGroup::Config, {},
                    "kiln: " + std::to_string(profile_.bad) +
                        (profile_.bad == 1 ? " line" : " lines") +
                        " of the dtype profile '" + path +
                        "' are not '<symbol> <name>=<dtype>...': ignored");
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

  void HandleInlineFunctionDefinition(FunctionDecl *fd) override {
    handle_lambdas(fd);
    handle(fd);
  }

  ASTDeserializationListener *GetASTDeserializationListener() override {
    return &deserialized_;
  }

  void HandleTranslationUnit(ASTContext &) override {
    auto write_dump = llvm::make_scope_exit([&] { write_debug_dump(); });
    auto write_record = llvm::make_scope_exit([&] {
      if (is_codegen_action(ci_))
        record_remarks(ci_, std::move(recorded_));
    });
    // By index: handling one may deserialize more.
    for (size_t i = 0; i < deserialized_.functions.size(); ++i)
      handle(const_cast<FunctionDecl *>(deserialized_.functions[i]));
    report_bodiless();
    report_uninstantiated();
    report_unreached_lambdas();
    if (fns_.empty() || !is_codegen_action(ci_) ||
        ci_.getDiagnostics().hasErrorOccurred())
      return;
    if (std::string err = guarded([&] { finish(); }); !err.empty())
      diag_.error(first_loc_, "kiln: internal error (a Kiln bug, please report "
                              "it): " + err);
  }

private:
  void visit(Decl *d) {
    if (auto *fd = dyn_cast<FunctionDecl>(d)) {
      handle_lambdas(fd);
      handle(fd);
    } else if (auto *ftd = dyn_cast<FunctionTemplateDecl>(d))
      handle(ftd->getTemplatedDecl());
    else if (auto *vd = dyn_cast<VarDecl>(d))
      handle_lambdas(vd);
    else if (auto *rd = dyn_cast<CXXRecordDecl>(d)) {
      for (Decl *x : rd->decls()) // default member initialisers, nested classes
        if (isa<FieldDecl, CXXRecordDecl>(x))
          visit(x);
    } else if (auto *field = dyn_cast<FieldDecl>(d))
      handle_lambdas(field);
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
  void handle_one(FunctionDecl *fd);
  void handle_lambdas(Decl *d);
  void report_bodiless();
  void report_uninstantiated();
  void report_unreached_lambdas();
  SourceLocation source_loc(const ir::Loc &loc, SourceLocation fallback) const;
  std::string unsupported_kind(const FunctionDecl *fd) const;
  std::string mangled_name(const FunctionDecl *fd);
  std::string display_name(const FunctionDecl *fd) const;
  std::string symbol_for(const FunctionDecl *fd, llvm::StringRef fingerprint);
  std::string main_file_path() const;
  void finish();
  DumpedFunction *start_record(const FunctionDecl *fd, const CompileOptions &opts);
  void record_capture(DumpedFunction *rec, const CompileResult &res) const;
  void record_eager(DumpedFunction *rec, SourceLocation loc,
                    const std::string &why) const;
  void write_debug_dump();

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
  std::unique_ptr<DebugDump> dump_; // null unless a debug dir was given
  CompileMemory memory_; // what rewritten functions were before
  codegen::DtypeProfile profile_; // -fplugin-arg-kiln-dtype-profile
  std::vector<const FunctionDecl *> bodiless_; // annotated, seen without body
  std::vector<const FunctionDecl *> patterns_;     // annotated templates
  llvm::DenseSet<const FunctionDecl *> instantiated_; // their patterns
  bool handling_ = false;                     // inside handle()
  std::vector<FunctionDecl *> deferred_;      // reached it meanwhile
  std::vector<RecordedRemark> recorded_; // for -fsave-optimization-record
};

std::string KilnConsumer::unsupported_kind(const FunctionDecl *fd) const {
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

// The name diagnostics and symbols use: qualified, with a template's
// arguments ("scale<2>", "Block<float>::f"); a lambda is "<lambda>" in the
// function or variable it is written in ("M::go::<lambda>").
std::string KilnConsumer::display_name(const FunctionDecl *fd) const {
  if (const auto *md = dyn_cast<CXXMethodDecl>(fd);
      md && md->getParent()->isLambda()) {
    const CXXRecordDecl *closure = md->getParent();
    std::string outer;
    if (const auto *f = dyn_cast<FunctionDecl>(closure->getDeclContext()))
      outer = display_name(f);
    else if (const auto *nd =
                 dyn_cast_or_null<NamedDecl>(closure->getLambdaContextDecl()))
      outer = nd->getQualifiedNameAsString();
    return outer.empty() ? "<lambda>" : outer + "::<lambda>";
  }
  std::string name;
  llvm::raw_string_ostream os(name);
  fd->getNameForDiagnostic(os, ctx_->getPrintingPolicy(), /*Qualified=*/true);
  return name;
}

std::string KilnConsumer::mangled_name(const FunctionDecl *fd) {
  std::string mangled;
  llvm::raw_string_ostream os(mangled);
  if (mangle_->shouldMangleDeclName(fd))
    mangle_->mangleName(GlobalDecl(fd), os);
  else
    os << fd->getName();
  return mangled;
}

// "kiln_" + the function's name + "_" + a hash of (mangled name, graph):
// readable in a profiler (its kernels are <symbol>_k0_f32_vec, ...),
// distinct within the TU (overloads, regions), and a function of the
// source alone. No path goes in: the same source built in another checkout
// or folder gives the same names, hence the same .cu (an nvcc cache hit)
// and the same object. TUs never collide: the generated definitions become
// internal when linked into the TU (LinkHost.cpp), each TU loads its own
// fatbin.
std::string KilnConsumer::symbol_for(const FunctionDecl *fd,
                                     llvm::StringRef fingerprint) {
  std::string readable;
  for (char c : display_name(fd)) {
    bool keep = llvm::isAlnum(c);
    if (keep || (!readable.empty() && readable.back() != '_'))
      readable += keep ? c : '_';
    if (readable.size() >= 48)
      break;
  }
  while (!readable.empty() && readable.back() == '_')
    readable.pop_back();
  std::string hash = Hasher().add(mangled_name(fd)).add(fingerprint).hex(8);
  return "kiln_" + readable + "_" + hash;
}

void KilnConsumer::handle(FunctionDecl *fd) {
  // Capturing a function may instantiate a template it calls, and clang
  // hands the instantiation to this consumer at once: it waits until the
  // function being compiled is done (which inlines its original body).
  if (handling_) {
    deferred_.push_back(fd);
    return;
  }
  handling_ = true;
  auto done = llvm::make_scope_exit([&] { handling_ = false; });
  handle_one(fd);
  for (size_t i = 0; i < deferred_.size(); ++i) // grows while handled
    handle_one(deferred_[i]);
  deferred_.clear();
}

void KilnConsumer::handle_one(FunctionDecl *fd) {
  if (fd && fd->hasAttrs() && !fd->doesThisDeclarationHaveABody())
    bodiless_.push_back(fd); // see report_bodiless()
  if (!fd || !fd->hasAttrs() || !fd->doesThisDeclarationHaveABody() ||
      fd->isInvalidDecl())
    return;
  SourceLocation attr_loc;
  std::optional<CompileOptions> opts = compile_options_of(fd, &attr_loc);
  if (!opts || !seen_.insert(fd).second)
    return;
  // A template's pattern is not code: each instantiation reaches the
  // consumer with its body once clang instantiates it, and compiles then.
  if (fd->isTemplated()) {
    patterns_.push_back(fd);
    return;
  }
  if (const FunctionDecl *p = fd->getTemplateInstantiationPattern())
    instantiated_.insert(p->getCanonicalDecl());
  DumpedFunction *rec = start_record(fd, *opts);
  if (opts->disable)
    return record_eager(rec, attr_loc, "disabled with \"disable\"");
  std::string name = display_name(fd);
  // "backward=x,w" names parameters (a specialisation may leave one out of
  // its graph, so the names are checked here, against the declaration).
  for (const std::string &arg : opts->backward_args)
    if (llvm::none_of(fd->parameters(), [&](const ParmVarDecl *p) {
          return p->getName() == arg;
        })) {
      diag_.error(attr_loc, "kiln: 'backward=' names '" + arg +
                                "', which is no parameter of '" + name + "'");
      return record_eager(rec, attr_loc, "'backward=' names no parameter");
    }
  auto problem = [&](SourceLocation loc, const std::string &why) {
    if (loc.isInvalid())
      loc = attr_loc;
    record_eager(rec, loc, why);
    if (opts->fullgraph)
      diag_.error(loc, "kiln: cannot compile '" + name + "' with \"fullgraph\": " +
                           why);
    else
      diag_.warning(WarningGroup::EagerFallback, loc,
                    "kiln: cannot compile '" + name + "': " + why + "; '" +
                        name + "' runs eagerly");
  };

  if (std::string why = unsupported_kind(fd); !why.empty())
    return problem(attr_loc, why);
  // Regions, fast paths, the rewrite, remarks: CompileRegions.cpp.
  CompileRequest req{*ctx_,
                     ci_.getSema(),
                     diag_,
                     fd,
                     name,
                     *opts,
                     args_,
                     args_.cuda && !nvcc_.empty(),
                     problem,
                     [&](llvm::StringRef fp) { return symbol_for(fd, fp); },
                     [&](const ir::Loc &l, SourceLocation fallback) {
                       return source_loc(l, fallback);
                     },
                     &profile_};
  CompileResult res = compile_regions(req, memory_);
  record_capture(rec, res);
  if (res.codes.empty())
    return;
  if (fns_.empty()) {
    first_loc_ = fd->getLocation();
    tensor_header_ = res.tensor_header;
  }
  for (codegen::FunctionCode &code : res.codes)
    fns_.push_back(std::move(code));
}

// [[kiln::compile]] on a lambda (`[] [[kiln::compile]] (const Tensor &x)
// {...}`, the C++23 position, which names the call operator) marks its call
// operator. Clang hands a lambda to no consumer on its own: it is found in
// the body, default argument or initialiser that holds it, and compiled
// before that code is (so before CodeGen emits either). A generic lambda's
// call operator is a template; its instantiations reach HandleTopLevelDecl
// like any other.
void KilnConsumer::handle_lambdas(Decl *d) {
  if (!annotated_lambda_seen())
    return;
  MarkedLambdas finder;
  if (auto *fd = dyn_cast<FunctionDecl>(d)) {
    if (fd->isTemplated())
      return;
    for (ParmVarDecl *p : fd->parameters())
      if (p->hasDefaultArg() && !p->hasUninstantiatedDefaultArg() &&
          !p->hasUnparsedDefaultArg())
        finder.TraverseStmt(p->getDefaultArg());
    if (fd->doesThisDeclarationHaveABody())
      finder.TraverseStmt(fd->getBody());
    if (auto *ctor = dyn_cast<CXXConstructorDecl>(fd))
      for (CXXCtorInitializer *init : ctor->inits())
        finder.TraverseStmt(init->getInit());
  } else if (auto *vd = dyn_cast<VarDecl>(d)) {
    if (vd->isTemplated() || !vd->getInit())
      return;
    finder.TraverseStmt(vd->getInit());
  } else if (auto *field = dyn_cast<FieldDecl>(d)) {
    if (field->isTemplated() || !field->hasInClassInitializer())
      return;
    finder.TraverseStmt(field->getInClassInitializer());
  }
  // Innermost first: a lambda inside another is compiled before the outer
  // one reads it (post-order is the reverse of the finder's pre-order).
  for (CXXMethodDecl *op : llvm::reverse(finder.found))
    handle(op);
}

// A [[kiln::compile]] declaration whose function this TU does not define
// compiles nothing here (a remark: another TU may define it); on a deleted
// function the attribute is a mistake (a warning).
void KilnConsumer::report_bodiless() {
  llvm::DenseSet<const FunctionDecl *> done;
  for (const FunctionDecl *fd : bodiless_) {
    SourceLocation attr_loc;
    if (!compile_options_of(fd, &attr_loc) || fd->isInvalidDecl() ||
        !done.insert(fd->getCanonicalDecl()).second)
      continue;
    const FunctionDecl *def = fd->getDefinition();
    std::string name = display_name(fd);
    if (def && def->isDeleted())
      diag_.warning(WarningGroup::Attribute, attr_loc,
                    "kiln: '" + name + "' is marked [[kiln::compile]] but "
                    "deleted; nothing is compiled");
    else if (!def && args_.remarks)
      diag_.remark(attr_loc,
                   "kiln: '" + name + "' is not defined in this file; "
                   "[[kiln::compile]] takes effect where it is defined",
                   name);
  }
}

// An annotated template this TU never instantiates compiles nothing here
// (a remark: the attribute takes effect per instantiation).
void KilnConsumer::report_uninstantiated() {
  if (!args_.remarks)
    return;
  for (const FunctionDecl *fd : patterns_)
    if (!instantiated_.count(fd->getCanonicalDecl()) && !fd->isInvalidDecl()) {
      SourceLocation attr_loc;
      compile_options_of(fd, &attr_loc);
      std::string name = display_name(fd);
      diag_.remark(attr_loc,
                   "kiln: '" + name + "' is a template this file does not "
                   "instantiate; each instantiation is compiled where it is "
                   "instantiated",
                   name);
    }
}

// A marked lambda somewhere handle_lambdas does not look (a default
// argument, a template argument, ...) is never silently eager: a warning at
// its attribute.
void KilnConsumer::report_unreached_lambdas() {
  if (!annotated_lambda_seen())
    return;
  MarkedLambdas finder;
  finder.instantiations = true;
  finder.TraverseDecl(ctx_->getTranslationUnitDecl());
  for (const CXXMethodDecl *op : finder.found) {
    SourceLocation attr_loc;
    if (seen_.count(op) || op->isTemplated() || op->isInvalidDecl() ||
        !compile_options_of(op, &attr_loc))
      continue;
    diag_.warning(WarningGroup::EagerFallback, attr_loc,
                  "kiln: this lambda is not compiled: Kiln finds marked "
                  "lambdas in function bodies, default arguments, variable "
                  "initialisers and default member initialisers of classes "
                  "that are not templates; it runs eagerly");
  }
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
  // Whatever this build added to the cache, the cache ends within its limit.
  bool wrote_cache = false;
  auto bound_cache = llvm::make_scope_exit([&] {
    std::string err;
    uint64_t limit = cache_limit(args_.cache_size, err);
    if (!err.empty())
      diag_.warning(WarningGroup::Config, first_loc_, "kiln: " + err);
    if (wrote_cache)
      evict_cache(cache, limit);
  });
  std::string include_dir = kiln_include_dir(ci_, tensor_header_);
  std::string main = main_file_path();

  // The file's name (for logs) and a hash of its functions' symbols, which
  // depend on the source only (symbol_for), never on where it is.
  std::string stem = llvm::sys::path::stem(main).str();
  for (char &c : stem)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  Hasher id_hash;
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
    diag_.warning(WarningGroup::NoCuda, first_loc_,
                  "kiln: nvcc not found; CUDA kernels not built, "
                              "compiled functions run their CPU path only "
                              "(searched " + nvcc_searched_ + ")");
    no_cuda_reason = "nvcc was not found when this file was compiled";
  } else if (any_kernels) {
    std::string cu = codegen::cuda_translation_unit(fns_);
    if (dump_)
      dump_->set_tu_cuda(cu);
    if (args_.dump)
      llvm::errs() << "// kiln-dump: cuda " << main << "\n" << cu << "\n";
    std::string arch_key, arch_error;
    std::vector<std::string> arch =
        cuda_arch_flags(args_.arch, arch_key, arch_error);
    if (!arch_error.empty()) {
      diag_.error(first_loc_, "kiln: " + arch_error);
      return;
    }
    size_t kernels = 0;
    for (const codegen::FunctionCode &f : fns_)
      kernels += f.kernel_names.size();
    // A cold build of the kernels takes seconds: say so while it runs.
    auto progress = [&] {
      diag_.progress(first_loc_,
                   "kiln: compiling " + std::to_string(kernels) +
                       " CUDA kernels of this file with nvcc for " + arch_key +
                       "; later builds take them from the cache (" + cache +
                       ")");
    };
    FatbinResult fb = build_fatbin(nvcc_, cu, include_dir, cache, arch,
                                   arch_key, progress);
    wrote_cache |= !fb.cache_hit;
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
  }
  // No kernel for nvcc (a file whose compiled functions run only library
  // calls on CUDA: GEMMs, attention): CUDA runs with no module, and
  // no_cuda_reason stays empty (host_translation_unit's "CUDA ready").

  // (b) Host code: compiled in-process, linked into this TU's module. It
  // embeds a stand-in for the fatbin, swapped for the bytes when linked.
  std::vector<uint8_t> placeholder;
  if (!fatbin.empty())
    placeholder = fatbin_placeholder(fatbin);
  std::string host = codegen::host_translation_unit(fns_, placeholder,
                                                    module_id, no_cuda_reason);
  if (args_.dump)
    llvm::errs() << "// kiln-dump: host " << main << "\n" << host << "\n";
  if (dump_)
    dump_->set_tu_host(host);
  llvm::SmallString<256> src_dir(cache);
  llvm::sys::path::append(src_dir, "src");
  llvm::sys::fs::create_directories(src_dir);
  std::string path = (src_dir + "/" + stem + "-" + Hasher().add(host).hex(16) +
                      ".kiln.cpp")
                         .str();
  if (llvm::sys::fs::exists(path))
    touch_cache_file(path);
  else if (write_atomically(path, host).empty()) // for debuggers; compiled from memory
    wrote_cache = true;
  llvm::SmallString<256> pch_dir(cache);
  llvm::sys::path::append(pch_dir, "pch");
  llvm::SmallString<256> bitcode_dir(cache);
  llvm::sys::path::append(bitcode_dir, "host");
  HostModule hm = compile_host(ci_, path, host, include_dir, pch_dir, bitcode_dir);
  wrote_cache |= hm.wrote_cache;
  if (args_.remarks && hm.error.empty())
    diag_.remark(first_loc_, hm.cache_hit ? "kiln: host code cache hit"
                                          : "kiln: host code compiled; cached");
  if (!hm.error.empty()) {
    diag_.error(first_loc_, "kiln: the generated host code of this file did "
                            "not compile (a Kiln bug, please report it); "
                            "source: " + path + "\n" + hm.error);
    return;
  }
  link_into_tu(ci_, std::make_shared<const std::string>(std::move(hm.bitcode)),
               path, std::move(placeholder), std::move(fatbin));
}

// ---- the debug dump (DebugDump.h) ----

DumpedFunction *KilnConsumer::start_record(const FunctionDecl *fd,
                                           const CompileOptions &opts) {
  if (!dump_)
    return nullptr;
  DumpedFunction &rec = dump_->add();
  rec.name = display_name(fd);
  rec.loc = to_ir_loc(*ctx_, fd->getLocation());
  rec.mangled = mangled_name(fd);
  rec.options = opts;
  rec.cuda = args_.cuda && !nvcc_.empty();
  rec.no_cuda_reason = !args_.cuda ? "CUDA is off (-fplugin-arg-kiln-cuda=off)"
                                   : "nvcc was not found (searched " +
                                         nvcc_searched_ + ")";
  return &rec;
}

void KilnConsumer::record_capture(DumpedFunction *rec,
                                  const CompileResult &res) const {
  if (!rec)
    return;
  for (size_t i = 0; i < res.codes.size() && i < res.graphs.size(); ++i)
    rec->paths.push_back({res.graphs[i], res.codes[i]});
  for (const CompileResult::Break &b : res.breaks)
    rec->breaks.push_back({to_ir_loc(*ctx_, b.loc), b.reason});
  if (!res.codes.empty())
    rec->compiled = true;
  else if (rec->reason.empty())
    rec->reason = "no fast path: nothing to compile, or clang reported "
                  "errors in the body";
}

void KilnConsumer::record_eager(DumpedFunction *rec, SourceLocation loc,
                                const std::string &why) const {
  if (!rec || !rec->reason.empty()) // the first reason is the one to fix
    return;
  rec->compiled = false;
  rec->reason = why;
  rec->reason_loc = to_ir_loc(*ctx_, loc);
}

// An I/O failure is one warning: the dump must never break the build.
void KilnConsumer::write_debug_dump() {
  if (!dump_)
    return;
  std::string err;
  if (std::string crash = guarded([&] { err = dump_->write(main_file_path()); });
      !crash.empty())
    err = "internal error (a Kiln bug, please report it): " + crash;
  if (!err.empty())
    diag_.warning(WarningGroup::Config, {},
                  "kiln: cannot write the debug dump to '" +
                          *args_.debug_dir + "': " + err);
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
