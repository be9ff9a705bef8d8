// plugin/Diag.h - Kiln's diagnostics, reported through clang's engine so
// that -verify and the usual formatting apply; warnings in groups that
// -Werror, -w and the Kiln group options apply to (Warnings.h).
#pragma once

#include "Warnings.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticFrontend.h>
#include <clang/Basic/SourceManager.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/CrashRecoveryContext.h>

#include <exception>
#include <string>
#include <vector>

namespace kiln::plugin {

// A remark as -fsave-optimization-record keeps it.
struct RecordedRemark {
  std::string function, file, message;
  unsigned line = 0, col = 0;
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

class Diag {
public:
  // Without a policy, every group has its default level.
  explicit Diag(clang::DiagnosticsEngine &engine,
                const WarningPolicy *policy = nullptr)
      : engine_(engine), policy_(policy) {}
  void error(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Error, loc, msg);
  }
  // A warning of Kiln group `g`, its text ending in the group's flag. As
  // clang's -Wbackend-plugin warning unless the group's own setting made
  // it an error or exempted it from -Werror.
  void warning(WarningGroup g, clang::SourceLocation loc, llvm::StringRef msg) {
    std::string text =
        msg.str() + " [-W" + warning_group_name(g) + "]";
    switch (level(g)) {
    case WarningPolicy::Level::Ignored:
      return;
    case WarningPolicy::Level::Error:
      return report(clang::DiagnosticsEngine::Error, loc, text);
    case WarningPolicy::Level::WarningNotError:
      if (!engine_.getIgnoreAllWarnings()) // -w
        report(clang::DiagnosticsEngine::Warning, loc, text);
      return;
    case WarningPolicy::Level::Warning:
      engine_.Report(loc, clang::diag::warn_fe_backend_plugin) << text;
      return;
    }
  }
  // Whether a warning of group `g` would be shown (-w aside).
  bool shows(WarningGroup g) const {
    return level(g) != WarningPolicy::Level::Ignored;
  }
  // Remarks are printed unless `print` is false, and kept in `record` when
  // given (-fsave-optimization-record: Remarks.h).
  void route_remarks(bool print, std::vector<RecordedRemark> *record) {
    print_remarks_ = print;
    record_ = record;
  }
  // `function`: whose remark it is, for the record.
  void remark(clang::SourceLocation loc, llvm::StringRef msg,
              llvm::StringRef function = "") {
    if (record_)
      record_->push_back(recorded(loc, msg, function));
    if (print_remarks_)
      report(clang::DiagnosticsEngine::Remark, loc, msg);
  }
  // A remark printed whatever -Rpass says: what a long step is doing.
  void progress(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Remark, loc, msg);
  }
  void note(clang::SourceLocation loc, llvm::StringRef msg) {
    report(clang::DiagnosticsEngine::Note, loc, msg);
  }
  clang::DiagnosticsEngine &engine() { return engine_; }

private:
  RecordedRemark recorded(clang::SourceLocation loc, llvm::StringRef msg,
                          llvm::StringRef function) const {
    RecordedRemark r;
    r.function = function.str();
    r.message = msg.str();
    if (loc.isValid() && engine_.hasSourceManager()) {
      clang::PresumedLoc p = engine_.getSourceManager().getPresumedLoc(loc);
      if (p.isValid()) {
        r.file = p.getFilename();
        r.line = p.getLine();
        r.col = p.getColumn();
      }
    }
    return r;
  }
  WarningPolicy::Level level(WarningGroup g) const {
    return policy_ ? policy_->level(g) : WarningPolicy().level(g);
  }
  void report(clang::DiagnosticsEngine::Level level, clang::SourceLocation loc,
              llvm::StringRef msg) {
    // The text goes in as an argument so that a '%' in it stays literal.
    unsigned id = engine_.getCustomDiagID(level, "%0");
    engine_.Report(loc, id) << msg;
  }
  clang::DiagnosticsEngine &engine_;
  const WarningPolicy *policy_;
  bool print_remarks_ = true;
  std::vector<RecordedRemark> *record_ = nullptr;
};

} // namespace kiln::plugin
