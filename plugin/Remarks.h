// plugin/Remarks.h - Kiln's remarks in the optimisation record
// (-fsave-optimization-record), beside LLVM's own.
#pragma once

#include "Diag.h"

#include <vector>

namespace clang {
class CompilerInstance;
} // namespace clang

namespace kiln::plugin {

// Writes `remarks` (pass "kiln") to the TU's optimisation record when the
// backend runs: clang opens the record there, after the plugin's consumer
// has seen the TU. A remark that says "compiled" is a Passed remark, a
// graph break or a fallback a Missed one, any other an Analysis one.
void record_remarks(clang::CompilerInstance &ci,
                    std::vector<RecordedRemark> remarks);

} // namespace kiln::plugin
