// plugin/VectorMath.h - vector math for the generated CPU loops: the nested
// compile's loop vectoriser learns that libkiln_rt's kiln_vm_* functions
// (SLEEF, 1.0 ULP; kiln/vecmath.def) are the vector forms of sin, exp, pow
// and the other libm functions the loops call, so a loop of sinf becomes a
// loop of kiln_vm_sin_f32x4 (x8 with AVX, x16 with AVX-512) instead of
// staying scalar.
#pragma once

namespace clang {
class CodeGenOptions;
} // namespace clang
namespace llvm {
class Module;
class Triple;
} // namespace llvm

namespace kiln::plugin {

// Adds the vectoriser's knowledge to a nested compile's pipeline (x86-64
// targets only; elsewhere nothing changes). The libm calls must be pure to
// be vectorised: the nested compile sets -fno-math-errno too.
void add_vector_math(clang::CodeGenOptions &cg, const llvm::Triple &target);

// After the nested pipeline: the call attributes that named the vector
// forms, and the forms no loop ended up calling, are removed, so the module
// linked into the TU says only what it calls.
void tidy_vector_math(llvm::Module &m);

} // namespace kiln::plugin
