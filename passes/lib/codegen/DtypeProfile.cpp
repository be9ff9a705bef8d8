// The dtype profile's text: what kiln::rt::note_dtypes appends when a
// compiled function's dtype guard fails, read back at build time.
#include <kiln/passes/codegen.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringRef.h>

namespace kiln::codegen {

DtypeProfile parse_dtype_profile(const std::string &text) {
  DtypeProfile p;
  llvm::StringRef rest = text;
  while (!rest.empty()) {
    llvm::StringRef line;
    std::tie(line, rest) = rest.split('\n');
    line = line.split('#').first.trim();
    if (line.empty())
      continue;
    llvm::SmallVector<llvm::StringRef, 8> words;
    line.split(words, ' ', -1, /*KeepEmpty=*/false);
    std::vector<std::pair<std::string, DType>> combo;
    bool ok = words.size() >= 2;
    for (llvm::StringRef w : llvm::drop_begin(words)) {
      auto [name, dt] = w.trim().split('=');
      std::optional<DType> t = ir::dtype_from_name(dt);
      if (name.empty() || !t ||
          llvm::any_of(combo, [&](const auto &c) { return c.first == name; })) {
        ok = false;
        break;
      }
      combo.push_back({name.str(), *t});
    }
    if (!ok) {
      ++p.bad;
      continue;
    }
    auto &seen = p.by_symbol[words[0].str()];
    if (!llvm::is_contained(seen, combo))
      seen.push_back(std::move(combo));
  }
  return p;
}

} // namespace kiln::codegen
