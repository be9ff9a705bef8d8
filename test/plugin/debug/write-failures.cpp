// Writing the dump never breaks the build: a folder that cannot be made is
// one warning, and the object still works (the compiled path runs). A
// folder in the way that Kiln did not write is left alone (one warning); a
// dump Kiln wrote before is replaced whole, leaving no temporary folder.
// RUN: rm -rf %t.dir %t.mine && mkdir -p %t.dir
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%s/sub %s -o %t.o 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%s/sub %s -o %t.o 2>&1 | grep -c warning: | FileCheck %s --check-prefix=ONE
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s --allow-unused-prefixes --check-prefixes=EXEC,%compiled
// Someone else's folder where the dump would go.
// RUN: mkdir -p %t.mine/write-failures.cpp && echo mine > %t.mine/write-failures.cpp/notes.txt
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.mine %s 2>&1 | FileCheck %s --check-prefix=NOT-OURS
// RUN: FileCheck %s --check-prefix=KEPT < %t.mine/write-failures.cpp/notes.txt
// RUN: ls %t.mine | count 1
// A previous dump, with a function since removed: replaced, nothing stale.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -DOLD -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: ls %t.dir/write-failures.cpp/old_function/explain.json
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: not ls %t.dir/write-failures.cpp/old_function
// RUN: ls %t.dir/write-failures.cpp/f/explain.json
// RUN: ls -a %t.dir | count 3
// A file without annotated functions leaves nothing behind.
// RUN: rm -rf %t.none && echo "int plain;" > %t.plain.cpp
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-debug-dir=%t.none %t.plain.cpp
// RUN: not ls %t.none
#include "kiln_check.h"

// UNWRITABLE: warning: kiln: cannot write the debug dump to '{{.*}}write-failures.cpp/sub': cannot create '{{.*}}write-failures.cpp/sub': Not a directory
// UNWRITABLE-NOT: warning:
// ONE: {{^1$}}
// NOT-OURS: warning: kiln: cannot write the debug dump to '{{.*}}': '{{.*}}write-failures.cpp' exists and is not a Kiln debug dump; not replaced
// KEPT: mine
// EXEC: values: 1.0000 2.0000 5.0000
// COMPILED-NEXT: compiled=1 fallback=0
// FORCED-NEXT: compiled=0 fallback=1
[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) { return kiln::pow(x, 2.0) + 1; }

#ifdef OLD
[[kiln::compile]] kiln::Tensor old_function(const kiln::Tensor &x) {
  return x + 1;
}
#endif

int main() {
  kiln_check::print("values", f(kiln::arange(3)));
  kiln_check::print_stats();
}
