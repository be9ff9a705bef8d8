// A function left eager gets an explain.json too: why, and where. The
// reason stays a warning at the construct (an error with "fullgraph").
// RUN: rm -rf %t.dir %t.full
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s 2>&1 | FileCheck %s --check-prefix=DIAG
// RUN: FileCheck %s --check-prefix=INDEX < %t.dir/eager.cpp/index.txt
// RUN: python3 %S/Inputs/flatjson.py %t.dir/eager.cpp/only_call/explain.json | FileCheck %s --check-prefix=CALL
// RUN: python3 %S/Inputs/flatjson.py %t.dir/eager.cpp/uses_goto/explain.json | FileCheck %s --check-prefix=GOTO
// RUN: python3 %S/Inputs/flatjson.py %t.dir/eager.cpp/disabled/explain.json | FileCheck %s --check-prefix=DISABLED
// RUN: not ls %t.dir/eager.cpp/only_call/plan.txt
// RUN: not ls %t.dir/eager.cpp/disabled/captured.kir
// With "fullgraph" the break is an error, and the dump is still written.
// RUN: not %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -DFULLGRAPH -fplugin-arg-kiln-debug-dir=%t.full %s 2>&1 | FileCheck %s --check-prefix=FULL-DIAG
// RUN: python3 %S/Inputs/flatjson.py %t.full/eager.cpp/strict/explain.json | FileCheck %s --check-prefix=FULL
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);

// INDEX: eager     only_call  only_call/  (call to 'log_tensor' is not supported yet{{.*}})
// INDEX: eager     uses_goto  uses_goto/  ('goto' is not supported yet)
// INDEX: eager     disabled   disabled/   (disabled with "disable")

// DIAG: eager.cpp:[[@LINE+12]]:3: warning: kiln: cannot compile 'only_call': call to 'log_tensor' is not supported yet
// CALL:      function = "only_call"
// CALL:      status = "eager"
// CALL-NEXT: reason = "call to 'log_tensor' is not supported yet{{.*}}"
// CALL:      reason_location.line = [[@LINE+8]]
// CALL-NEXT: reason_location.column = 3
// CALL:      graph_breaks.size = 1
// CALL:      graph_breaks[0].location.line = [[@LINE+5]]
// CALL:      graph_breaks[0].reason = "call to 'log_tensor' is not supported yet{{.*}}"
// CALL:      fast_paths.size = 0
// CALL-NEXT: kernels.size = 0
[[kiln::compile]] Tensor only_call(const Tensor &x) {
  log_tensor(x);
  return x;
}

// DIAG: eager.cpp:[[@LINE+5]]:3: warning: kiln: cannot compile 'uses_goto': 'goto' is not supported yet
// GOTO: status = "eager"
// GOTO: reason = "'goto' is not supported yet"
// GOTO: reason_location.line = [[@LINE+2]]
[[kiln::compile]] Tensor uses_goto(const Tensor &x) {
  goto end;
end:
  return kiln::exp(x);
}

// DISABLED: status = "eager"
// DISABLED: reason = "disabled with \"disable\""
// DISABLED: options.disable = true
[[kiln::compile("disable")]] Tensor disabled(const Tensor &x) {
  return kiln::exp(x);
}

#ifdef FULLGRAPH
// FULL-DIAG: eager.cpp:[[@LINE+8]]:3: error: kiln: cannot compile 'strict' with "fullgraph": call to 'log_tensor' is not supported yet
// FULL: status = "eager"
// FULL: reason = "call to 'log_tensor' is not supported yet{{.*}}"
// FULL: reason_location.line = [[@LINE+5]]
// FULL: options.fullgraph = true
// FULL: graph_breaks.size = 1
[[kiln::compile("fullgraph")]] Tensor strict(const Tensor &x) {
  Tensor y = kiln::exp(x);
  log_tensor(y);
  return y;
}
#endif
