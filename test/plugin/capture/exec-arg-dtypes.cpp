// Tensor arguments of their own dtype ([[kiln::dtype]]) compiled against
// eager on the CPU: the cases of test/Inputs/arg_dtypes_cases.h, each one
// fused loop with the kiln backend; a combination compiled for none falls
// back. The remark names the variants; a bad use of the attribute is in
// test/plugin/verify/attributes.cpp.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-remarks %s -o %t.o 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t && %t | FileCheck %s
// The same with every fast path running the captured graph op by op.
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -DBACKEND='"backend=eager"' %s -o %t.eager.o
// RUN: %kiln_cxx_eager %t.eager.o %kiln_link -o %t.eager && %t.eager | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
// REMARK: remark: kiln: compiled 'rms_f32_weight': {{.*}} (f32 ('w': f32), f16 ('w': f32), bf16 ('w': f32), f64 ('w': f32); CPU only)
// REMARK: remark: kiln: compiled 'by_label': {{.*}} (f32 ('labels': i64), f32 ('labels': i32), f16 ('labels': i64), f16 ('labels': i32), bf16 ('labels': i64), bf16 ('labels': i32), f64 ('labels': i64), f64 ('labels': i32); CPU only)
// REMARK: remark: kiln: compiled 'int_math': {{.*}} (('ids': i64, 'offs': i64), ('ids': i64, 'offs': i32); CPU only)
#include "arg_dtypes_cases.h"

int main() { return run_arg_dtypes(kiln::Device::cpu()); }
