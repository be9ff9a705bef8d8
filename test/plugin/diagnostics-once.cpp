// Diagnostics are printed once whatever the output mode (the AST is
// rewritten in place, never re-parsed), and generated code adds none,
// even under -Werror and strict warning flags.
// RUN: %kiln_cxx -c %s -o %t.o 2>&1 | FileCheck %s
// RUN: %kiln_cxx -S %s -o %t.s 2>&1 | FileCheck %s
// RUN: %kiln_cxx -fsyntax-only %s 2>&1 | FileCheck %s
// RUN: %kiln_cxx -c -Werror -Wall -Wextra -Wshadow -Wreserved-identifier -DCLEAN %s -o %t.clean.o 2>&1 | count 0
#include <kiln/kiln.h>

void log_tensor(const kiln::Tensor &);

#ifndef CLEAN
// CHECK: diagnostics-once.cpp:[[@LINE+3]]:3: warning: kiln: cannot compile 'eager_only': call to 'log_tensor' is not supported yet (no body to inline); 'eager_only' runs eagerly
// CHECK-NOT: warning:
[[kiln::compile]] kiln::Tensor eager_only(const kiln::Tensor &x) {
  log_tensor(x);
  return x;
}
#endif

[[kiln::compile]] kiln::Tensor clean(const kiln::Tensor &x, double a, long n) {
  kiln::Tensor y = kiln::where(x > a, x, a);
  return kiln::clamp(y, -n, n) * 0.5;
}
