// Vector math for the generated CPU loops (VectorMath.h).
//
// LLVM's loop vectoriser widens a call when the call names a vector form of
// its callee in the "vector-function-abi-variant" attribute (the vector
// function ABI's mangling: _ZGV_LLVM_N4v_sinf(kiln_vm_sin_f32x4) says "4
// lanes, unmasked, one vector argument"); -fveclib does this for the
// functions of a library it knows. Its libmvec table lacks tanh and erf and
// its names would bind to whichever libmvec the process has, so Kiln names
// its own: a function pass at the vectoriser's start annotates each pure
// call of a row of kiln/vecmath.def (the libm function, or the LLVM
// intrinsic clang emits for it without errno) and declares the forms for
// the register widths the calling function's target has, from the row's
// measured narrowest width up.
#include "VectorMath.h"

#include <clang/Basic/CodeGenOptions.h>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/TargetParser/Triple.h>

#include <string>

namespace kiln::plugin {
namespace {

constexpr llvm::StringLiteral kVariantAttr = "vector-function-abi-variant";
constexpr llvm::StringLiteral kPrefix = "kiln_vm_";

struct Row {
  const char *name;
  unsigned arity;
  const char *f32;
  const char *f64;
  unsigned f32_bits, f64_bits; // narrowest width worth it; 0: none
};
constexpr Row kRows[] = {
#define KILN_VECMATH(name, arity, f32, f64, f32_bits, f64_bits)                \
  {#name, arity, #f32, #f64, f32_bits, f64_bits},
#include "kiln/vecmath.def"
#undef KILN_VECMATH
};

// The row of a call's callee: its libm name (sinf, sin) or the intrinsic
// clang emits for it (llvm.sin.f32).
const Row *row_of(llvm::StringRef callee, bool is_double) {
  for (const Row &r : kRows) {
    if (callee == (is_double ? r.f64 : r.f32))
      return &r;
    if (callee == (llvm::Twine("llvm.") + r.name + (is_double ? ".f64" : ".f32")).str())
      return &r;
  }
  return nullptr;
}

// Register widths (bits) whose vector forms the function may call.
llvm::SmallVector<unsigned, 3> widths_of(const llvm::Function &f) {
  llvm::SmallVector<llvm::StringRef, 64> features;
  f.getFnAttribute("target-features").getValueAsString().split(features, ',');
  bool avx = false, avx512 = false;
  for (llvm::StringRef x : features) {
    avx |= x == "+avx";
    avx512 |= x == "+avx512f";
  }
  llvm::SmallVector<unsigned, 3> widths{128}; // SSE2: the x86-64 baseline
  if (avx)
    widths.push_back(256);
  if (avx && avx512)
    widths.push_back(512);
  return widths;
}

struct VectorMathPass : llvm::PassInfoMixin<VectorMathPass> {
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &) {
    llvm::SmallVector<unsigned, 3> widths;
    bool changed = false;
    for (llvm::Instruction &i : llvm::instructions(f)) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(&i);
      llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
      if (!callee || !call->doesNotAccessMemory() || call->isNoBuiltin())
        continue;
      llvm::Type *t = call->getType();
      if (!t->isFloatTy() && !t->isDoubleTy())
        continue;
      const Row *row = row_of(callee->getName(), t->isDoubleTy());
      if (!row || call->arg_size() != row->arity)
        continue;
      if (widths.empty())
        widths = widths_of(f);
      add_variants(*call, *row, widths);
      changed = true;
    }
    return changed ? llvm::PreservedAnalyses::none()
                   : llvm::PreservedAnalyses::all();
  }

  static void add_variants(llvm::CallInst &call, const Row &row,
                           llvm::ArrayRef<unsigned> widths) {
    llvm::Module &m = *call.getModule();
    llvm::Type *t = call.getType();
    unsigned bits = t->getPrimitiveSizeInBits();
    llvm::SmallVector<std::string, 4> variants;
    if (call.hasFnAttr(kVariantAttr))
      variants.push_back(call.getFnAttr(kVariantAttr).getValueAsString().str());
    const unsigned from = bits == 64 ? row.f64_bits : row.f32_bits;
    for (unsigned w : widths) {
      if (from == 0 || w < from)
        continue; // glibc's scalar function is faster at this width
      unsigned lanes = w / bits;
      std::string vector_name = (kPrefix + row.name + (bits == 64 ? "_f64x" : "_f32x") +
                                 llvm::Twine(lanes)).str();
      auto *vt = llvm::FixedVectorType::get(t, lanes);
      llvm::SmallVector<llvm::Type *, 2> params(row.arity, vt);
      llvm::FunctionCallee decl = m.getOrInsertFunction(
          vector_name, llvm::FunctionType::get(vt, params, false));
      if (auto *vf = llvm::dyn_cast<llvm::Function>(decl.getCallee())) {
        vf->setDoesNotAccessMemory();
        vf->setDoesNotThrow();
        vf->setWillReturn();
      }
      variants.push_back(("_ZGV_LLVM_N" + llvm::Twine(lanes) +
                          std::string(row.arity, 'v') + "_" +
                          call.getCalledFunction()->getName() + "(" +
                          vector_name + ")")
                             .str());
    }
    if (!variants.empty())
      call.addFnAttr(llvm::Attribute::get(call.getContext(), kVariantAttr,
                                          llvm::join(variants, ",")));
  }
};

} // namespace

void add_vector_math(clang::CodeGenOptions &cg, const llvm::Triple &target) {
  if (target.getArch() != llvm::Triple::x86_64)
    return;
  cg.PassBuilderCallbacks.push_back([](llvm::PassBuilder &pb) {
    pb.registerVectorizerStartEPCallback(
        [](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) {
          fpm.addPass(VectorMathPass());
        });
  });
}

void tidy_vector_math(llvm::Module &m) {
  for (llvm::Function &f : m)
    for (llvm::Instruction &i : llvm::instructions(f))
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&i))
        call->removeFnAttr(kVariantAttr);
  for (llvm::Function &f : llvm::make_early_inc_range(m))
    if (f.isDeclaration() && f.use_empty() && f.getName().starts_with(kPrefix))
      f.eraseFromParent();
}

} // namespace kiln::plugin
