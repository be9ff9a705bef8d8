// The compile cache stays under its size limit, dropping the least recently
// used files first; a cache hit makes a file recently used. The generated
// host code kept there for debuggers holds a stand-in for the fatbin, not
// megabytes of escaped bytes; the object gets the real bytes. A stand-in
// nvcc writes a 1 MB fatbin.
// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo fake 1.0; exit 0; fi\nwhile [ $# -gt 1 ]; do if [ "$1" = -o ]; then yes x | head -c 1000000 > "$2"; fi; shift; done\n' > %t/nvcc && chmod +x %t/nvcc
// RUN: %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o
// RUN: find %t/a.o -size +900k | count 1
// RUN: find %t/cache/cuda -name '*.fatbin' -size +900k | count 1
// RUN: find %t/cache/src -name '*.kiln.cpp' -size -200k | count 1
//
// Two big, old files: the limit leaves room for the newest of them only.
// RUN: truncate -s 60M %t/cache/cuda/older.fatbin && touch -d 2000-01-01 %t/cache/cuda/older.fatbin
// RUN: truncate -s 60M %t/cache/cuda/old.fatbin && touch -d 2001-01-01 %t/cache/cuda/old.fatbin
// RUN: %kiln_cxx -DOTHER -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -fplugin-arg-kiln-cache-size=100M -c %s -o %t/b.o
// RUN: not ls %t/cache/cuda/older.fatbin
// RUN: ls %t/cache/cuda/old.fatbin
// RUN: find %t/cache/cuda -name '*.fatbin' -size +900k -size -2000k | count 2
// KILN_CACHE_SIZE sets the limit when no plugin argument does.
// RUN: env KILN_CACHE_SIZE=70MB %kiln_cxx -DTHIRD -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/c.o
// RUN: not ls %t/cache/cuda/old.fatbin
//
// A hit refreshes a file: after an unchanged rebuild, the first fatbin is
// newer than a date it was set back to.
// RUN: touch -d 2002-01-01 %t/cache/cuda/*.fatbin
// RUN: %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o
// RUN: find %t/cache/cuda -name '*.fatbin' -newermt 2010-01-01 | count 1
//
// A limit that is not a size is a warning, and the default (2G) applies.
// RUN: env KILN_CACHE_SIZE=lots %kiln_cxx -fplugin-arg-kiln-nvcc=%t/nvcc -fplugin-arg-kiln-cache-dir=%t/cache -c %s -o %t/a.o 2>&1 | FileCheck --check-prefix=BAD %s
// BAD: warning: kiln: KILN_CACHE_SIZE='lots' is not a size (e.g. 2G, 500M, 0 for no limit); using the default, 2G
#include <kiln/kiln.h>

[[kiln::compile]] kiln::Tensor f(const kiln::Tensor &x) {
#if defined(OTHER)
  return kiln::exp(x) * 2.0;
#elif defined(THIRD)
  return kiln::tanh(x) + 1.0;
#else
  return kiln::log(x) - 1.0;
#endif
}
