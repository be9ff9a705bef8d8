#include "Warnings.h"

#include <optional>

namespace kiln::plugin {

const char *warning_group_name(WarningGroup g) {
  switch (g) {
  case WarningGroup::EagerFallback:
    return "kiln-eager-fallback";
  case WarningGroup::GraphBreak:
    return "kiln-graph-break";
  case WarningGroup::NoCuda:
    return "kiln-no-cuda";
  case WarningGroup::Attribute:
    return "kiln-attribute";
  case WarningGroup::Config:
    return "kiln-config";
  }
  return "kiln";
}

bool WarningPolicy::apply(llvm::StringRef spelled, bool short_names) {
  bool negated = spelled.consume_front("no-");
  std::optional<State> error;
  if (spelled.consume_front("error=")) // -Werror=x, -Wno-error=x
    error = negated ? State::NoError : State::Error;
  std::string option = spelled.str();
  if (short_names && option != "kiln" && !spelled.starts_with("kiln-"))
    option = "kiln-" + option;
  if (option != "kiln" && !llvm::StringRef(option).starts_with("kiln-"))
    return true; // not ours: clang's own, which clang applies
  Setting *s = nullptr;
  if (option == "kiln") {
    s = &all_;
  } else {
    for (int i = 0; i < kNumWarningGroups; ++i)
      if (option == warning_group_name(WarningGroup(i)))
        s = &groups_[i];
    if (!s)
      return false;
  }
  if (error) {
    s->error = *error;
    if (*error == State::Error)
      s->enabled = State::On; // -Werror=x turns x on, as in clang
  } else {
    s->enabled = negated ? State::Off : State::On;
  }
  return true;
}

WarningPolicy::Level WarningPolicy::level(WarningGroup g) const {
  const Setting &s = groups_[int(g)];
  State enabled = s.enabled != State::Unset ? s.enabled : all_.enabled;
  State error = s.error != State::Unset ? s.error : all_.error;
  bool on = enabled == State::Unset ? g != WarningGroup::GraphBreak
                                    : enabled == State::On;
  if (!on)
    return Level::Ignored;
  if (error == State::Error)
    return Level::Error;
  if (error == State::NoError)
    return Level::WarningNotError;
  return Level::Warning;
}

} // namespace kiln::plugin
