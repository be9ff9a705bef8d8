// kiln/export.h - what libkiln_rt exports.
//
// The library is built with hidden visibility (runtime/CMakeLists.txt): a
// symbol is exported only when it is declared between KILN_API_BEGIN and
// KILN_API_END, which bracket the public headers (tensor.h, ops.h, stats.h,
// timing.h, interop.h, and rt.h for generated code). Everything else, the
// runtime's internals included, stays inside the library.
#pragma once

#define KILN_API_BEGIN _Pragma("GCC visibility push(default)")
#define KILN_API_END _Pragma("GCC visibility pop")
