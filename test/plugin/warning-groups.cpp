// Kiln's warnings obey clang's controls and Kiln's own groups (Warnings.h):
// each is clang's -Wbackend-plugin warning (so -Werror, -w, -Wno-error,
// -Wno-backend-plugin and #pragma clang diagnostic apply) and belongs to a
// Kiln group that plugin arguments turn off, on, or into an error.
// RUN: %kiln_cxx -fsyntax-only %s 2>&1 | FileCheck --check-prefix=DEFAULT %s
// DEFAULT: warning: kiln: cannot compile 'eager_only': call to 'opaque' is not supported yet (no body to inline); 'eager_only' runs eagerly [-Wkiln-eager-fallback] [-Wbackend-plugin]
// DEFAULT-NOT: graph break
// DEFAULT: 1 warning generated.
//
// RUN: not %kiln_cxx -fsyntax-only -Werror %s 2>&1 | FileCheck --check-prefix=WERROR %s
// WERROR: error: kiln: cannot compile 'eager_only': {{.*}} [-Wkiln-eager-fallback] [-Werror,-Wbackend-plugin]
// RUN: %kiln_cxx -fsyntax-only -w %s 2>&1 | count 0
// RUN: %kiln_cxx -fsyntax-only -Werror -Wno-backend-plugin %s 2>&1 | count 0
// RUN: %kiln_cxx -fsyntax-only -Werror -Wno-error=backend-plugin %s 2>&1 | FileCheck --check-prefix=DEFAULT %s
// RUN: %kiln_cxx -fsyntax-only -DPRAGMA %s 2>&1 | count 0
//
// Kiln's groups, from plugin arguments.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-Wno-eager-fallback %s 2>&1 | count 0
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-Wno-kiln %s 2>&1 | count 0
// RUN: %kiln_cxx -fsyntax-only -Werror -fplugin-arg-kiln-Wno-error=eager-fallback %s 2>&1 | FileCheck --check-prefix=NOERROR %s
// NOERROR: warning: kiln: cannot compile 'eager_only': {{.*}} runs eagerly [-Wkiln-eager-fallback]{{$}}
// RUN: not %kiln_cxx -fsyntax-only -fplugin-arg-kiln-Werror=eager-fallback %s 2>&1 | FileCheck --check-prefix=ERROR %s
// ERROR: error: kiln: cannot compile 'eager_only': {{.*}} runs eagerly [-Wkiln-eager-fallback]{{$}}
//
// Graph breaks are remarks unless asked for as warnings; as errors they are
// "fullgraph" for every function of the file.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-Wno-eager-fallback -fplugin-arg-kiln-Wgraph-break %s 2>&1 | FileCheck --check-prefix=BREAK %s
// BREAK: warning: kiln: graph break in 'with_break': call to 'opaque' is not supported yet (no body to inline); it runs eagerly between compiled regions [-Wkiln-graph-break] [-Wbackend-plugin]
// RUN: not %kiln_cxx -fsyntax-only -fplugin-arg-kiln-Werror=graph-break %s 2>&1 | FileCheck --check-prefix=BREAKERR %s
// BREAKERR: error: kiln: graph break in 'with_break': {{.*}} [-Wkiln-graph-break]
//
// The same groups as -W options: they work, and clang says it does not know
// them (hence the plugin-argument form for builds with -Werror).
// RUN: %kiln_cxx -fsyntax-only -Wno-kiln-eager-fallback %s 2>&1 | FileCheck --check-prefix=WSPELL %s
// WSPELL: warning: unknown warning option '-Wno-kiln-eager-fallback'
// WSPELL-NOT: cannot compile
// An unknown group in a plugin argument is an error.
// RUN: not %kiln_cxx -fsyntax-only -fplugin-arg-kiln-Wno-typo %s 2>&1 | FileCheck --check-prefix=TYPO %s
// TYPO: error: kiln: unknown warning group in 'Wno-typo'
#include <kiln/kiln.h>

void opaque(const kiln::Tensor &);

#ifdef PRAGMA
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wbackend-plugin"
#endif
[[kiln::compile]] kiln::Tensor eager_only(const kiln::Tensor &x) {
  opaque(x);
  return x;
}
#ifdef PRAGMA
#pragma clang diagnostic pop
#endif

[[kiln::compile]] kiln::Tensor with_break(const kiln::Tensor &x) {
  kiln::Tensor y = kiln::sin(x);
  opaque(y);
  return kiln::cos(y);
}
