// plugin/Warnings.h - Kiln's warnings, in groups the user can turn off,
// on, or into errors.
//
// A clang 19 plugin cannot add -W groups of its own: custom diagnostic IDs
// belong to no group, and ignore -Werror, -w and #pragma clang diagnostic
// (clang 20 lifts that). So:
//   - a Kiln warning is reported as clang's own -Wbackend-plugin warning,
//     which every standard control applies to: -Werror, -w, -Wno-error,
//     -Werror=backend-plugin, -Wno-backend-plugin, #pragma clang diagnostic;
//   - each also belongs to a Kiln group (below), shown in its text, that
//     the plugin turns off, on or into an error itself, from plugin
//     arguments (-fplugin-arg-kiln-Wno-eager-fallback,
//     -fplugin-arg-kiln-Werror=graph-break) or from the same -W spellings on
//     the command line (-Wno-kiln-eager-fallback, -Werror=kiln): clang
//     warns that it does not know those (-Wunknown-warning-option), so the
//     plugin-argument form is the one to use with -Werror.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <array>
#include <string>
#include <vector>

namespace kiln::plugin {

enum class WarningGroup {
  EagerFallback, // a [[kiln::compile]] function or region left eager
  GraphBreak,    // a statement in a compiled function runs eagerly (off by
                 // default: a remark; -Werror=kiln-graph-break is
                 // "fullgraph" for every function)
  NoCuda,        // nvcc not found: CPU code only
  Attribute,     // [[kiln::compile]] where it does nothing
  Config,        // a bad setting, a debug dump that cannot be written
};
inline constexpr int kNumWarningGroups = 5;

// "kiln-eager-fallback", ...
const char *warning_group_name(WarningGroup g);

class WarningPolicy {
public:
  enum class Level { Ignored, Warning, WarningNotError, Error };

  // Applies one -W option as clang spells it without the "-W"
  // ("no-kiln-graph-break", "error=kiln", "kiln-eager-fallback", ...);
  // options that name no Kiln group are ignored. With `short_names` (plugin
  // arguments) the "kiln-" prefix is optional. Returns false when a Kiln
  // group is named but unknown.
  bool apply(llvm::StringRef option, bool short_names = false);

  // The level of a warning of group `g`, before clang's own -Werror and -w,
  // which apply to Level::Warning only (Diag.h applies -w to the others).
  Level level(WarningGroup g) const;

private:
  enum class State { Unset, Off, On, Error, NoError };
  struct Setting {
    State enabled = State::Unset; // Off / On
    State error = State::Unset;   // Error / NoError
  };
  Setting all_;
  std::array<Setting, kNumWarningGroups> groups_{};
};

} // namespace kiln::plugin
