// Unknown plugin arguments are errors.
// RUN: not %kiln_cxx -fsyntax-only -fplugin-arg-kiln-dumpp %s 2>&1 | FileCheck %s
// CHECK: error: kiln: unknown argument 'dumpp' (expected dump, remarks, cuda=off, nvcc=<path>, arch=<list>, cache-dir=<dir>, cache-size=<size>, debug-dir=<dir>, dtype-profile=<file>, W[no-][error=]<group>)
int x;
