// plugin/Diag.h - Kiln's diagnostics, reported through clang's engine so
// that -verify, -Werror, -w and the usual formatting apply.
#pragma once

#include <clang/Basic/Diagnostic.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/CrashRecoveryContext.h>

#include <exception>
#include <string>

namespace kiln::plugin {

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

class Diag {
public:
  explicit Diag(clang::DiagnosticsEngine &engine) : engine_(engine) {}
  void error(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Error, loc, msg);
  }
  void warning(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Warning, loc, msg);
  }
  void remark(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Remark, loc, msg);
  }
  void note(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Note, loc, msg);
  }
  // An error when `as_error`, else a warning.
  void problem(bool as_error, clang::SourceLocation loc, llvm::StringRef msg) {
    report(as_error ? clang::DiagnosticsEngine::Error
                    : clang::DiagnosticsEngine::Warning,
           loc, msg);
  }
  clang::DiagnosticsEngine &engine() { return engine_; }

private:
  void report(clang::DiagnosticsEngine::Level level, clang::SourceLocation loc,
              llvm::StringRef msg) {
    // The text goes in as an argument so that a '%' in it stays literal.
    unsigned id = engine_.getCustomDiagID(level, "%0");
    engine_.Report(loc, id) << msg;
  }
  clang::DiagnosticsEngine &engine_;
};

} // namespace kiln::plugin
