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
// On an explicit instantiation of a public template in the library's
// sources: GCC gives an instantiation the visibility in force where it is
// made (hidden there), whatever the template's declaration says.
#define KILN_EXPORT __attribute__((visibility("default")))
