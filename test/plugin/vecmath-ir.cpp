// The generated CPU loops call libkiln_rt's SLEEF forms (kiln/vecmath.def)
// at the widest register width the target has: tanh and erf too, which
// LLVM's own vector-library tables lack; f64 as well as f32. Where the
// table says glibc's scalar function is faster at a width (pow at 128 bits,
// log and erf of f64 at any), the loop keeps calling it. No glibc vector
// names and no vectoriser attributes are left in the object.
// exec-vecmath*.cpp check the numbers.
// REQUIRES: x86_64
// RUN: %kiln_cxx -S -emit-llvm -o %t.sse.ll %s
// RUN: FileCheck %s --check-prefix=SSE < %t.sse.ll
// RUN: %kiln_cxx -mavx2 -mfma -S -emit-llvm -o %t.avx2.ll %s
// RUN: FileCheck %s --check-prefix=AVX2 < %t.avx2.ll
// RUN: %kiln_cxx -mavx512f -mprefer-vector-width=512 -S -emit-llvm -o %t.avx512.ll %s
// RUN: FileCheck %s --check-prefix=AVX512 < %t.avx512.ll
// RUN: not grep -E "_ZGV[bcde]N|vector-function-abi-variant" %t.sse.ll %t.avx2.ll %t.avx512.ll
#include <kiln/kiln.h>

using kiln::Tensor;

// SSE-DAG: call <4 x float> @kiln_vm_sin_f32x4(
// SSE-DAG: call <4 x float> @kiln_vm_cos_f32x4(
// SSE-DAG: call <4 x float> @kiln_vm_tanh_f32x4(
// SSE-DAG: call <4 x float> @kiln_vm_erf_f32x4(
// SSE-DAG: call <4 x float> @kiln_vm_exp_f32x4(
// SSE-DAG: call <4 x float> @kiln_vm_log_f32x4(
// SSE-DAG: call <2 x double> @kiln_vm_tan_f64x2(
// AVX2-DAG: call <8 x float> @kiln_vm_sin_f32x8(
// AVX2-DAG: call <8 x float> @kiln_vm_tanh_f32x8(
// AVX2-DAG: call <8 x float> @kiln_vm_erf_f32x8(
// AVX2-DAG: call <8 x float> @kiln_vm_pow_f32x8(
// AVX2-DAG: call <4 x double> @kiln_vm_tan_f64x4(
// AVX512-DAG: call <16 x float> @kiln_vm_sin_f32x16(
// AVX512-DAG: call <16 x float> @kiln_vm_tanh_f32x16(
// AVX512-DAG: call <8 x double> @kiln_vm_tan_f64x8(
// RUN: not grep -E "kiln_vm_(pow_|tanh_f64|log_f64|erf_f64)" %t.sse.ll
// RUN: not grep -E "kiln_vm_(log_f64|erf_f64)" %t.avx2.ll %t.avx512.ll
[[kiln::compile]] Tensor mix(const Tensor &x, const Tensor &y) {
  return kiln::sin(x) + kiln::cos(y) * kiln::tanh(x) + kiln::erf(y) +
         kiln::exp(x) * kiln::log(y) + kiln::pow(x, y) + kiln::tan(x);
}

// f64 loops vectorise where every call in them has a vector form.
[[kiln::compile]] Tensor trig(const Tensor &x) { return kiln::sin(x) * kiln::tan(x); }
