// The dtype profile on the CPU (test/Inputs/dtype_profile_cases.h): a first
// build's mixed-dtype calls fall back and a run records them; the second
// build, reading the profile, compiles a variant for each and the same
// calls run their kernels. Both against eager. The runs that record and
// read the profile need real guards, so they run so even when the suite
// makes every guard fail (scripts/test-forced-fallback.sh).
// RUN: rm -f %t.prof
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-dtype-profile=%t.prof %s -o %t.1.o
// RUN: %kiln_cxx_eager %t.1.o %kiln_link -o %t.1
// RUN: env -u KILN_FORCE_GUARD_FAILURE KILN_DTYPE_PROFILE=%t.prof %t.1 1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PROFILE --input-file=%t.prof
// A second run adds nothing: the file holds its combinations already.
// RUN: env -u KILN_FORCE_GUARD_FAILURE KILN_DTYPE_PROFILE=%t.prof %t.1 1 | FileCheck %s
// RUN: sort %t.prof | uniq -d > %t.dups
// RUN: not test -s %t.dups
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-dtype-profile=%t.prof -Rpass=kiln -MD -MF %t.d %s -o %t.2.o 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=DEPS --input-file=%t.d
// RUN: %kiln_cxx_eager %t.2.o %kiln_link -o %t.2
// RUN: rm -f %t.prof2
// RUN: env -u KILN_FORCE_GUARD_FAILURE KILN_DTYPE_PROFILE=%t.prof2 %t.2 2 | FileCheck %s
// Only what no variant takes is recorded again: the in-place update
// whose variant was not compiled (eager raises there).
// RUN: FileCheck %s --check-prefix=AGAIN --input-file=%t.prof2
// RUN: not grep -E 'scale_idx|int_only|mask_mul|rms_mixed|softmax_counts|sgd_master|accumulate' %t.prof2
// With every guard made to fail, the eager bodies alone.
// RUN: env KILN_FORCE_GUARD_FAILURE=1 %t.2 1 | FileCheck %s
// A line that is not a profile's: a warning, and the rest is read.
// RUN: printf 'no-equals-sign here\nkiln_x_0 a=f32 b=nosuchdtype\n' > %t.bad
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-dtype-profile=%t.bad %s 2>&1 | FileCheck %s --check-prefix=BAD
// A profile that does not exist yet: nothing added, nothing said.
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-dtype-profile=%t.none -Werror %s
//
// CHECK-NOT: MISMATCH
// CHECK: {{[0-9]+}} cases, 0 mismatches
//
// PROFILE-DAG: {{^}}kiln_scale_idx_{{[0-9a-f]+}} x=f32 idx=i64 # scale_idx{{$}}
// PROFILE-DAG: {{^}}kiln_scale_idx_{{[0-9a-f]+}} x=f32 idx=i32 # scale_idx{{$}}
// PROFILE-DAG: {{^}}kiln_scale_idx_{{[0-9a-f]+}} x=bf16 idx=i64 # scale_idx{{$}}
// PROFILE-DAG: {{^}}kiln_int_only_{{[0-9a-f]+}} a=i32 b=i32 # int_only{{$}}
// PROFILE-DAG: {{^}}kiln_int_only_{{[0-9a-f]+}} a=i64 b=i64 # int_only{{$}}
// PROFILE-DAG: {{^}}kiln_mask_mul_{{[0-9a-f]+}} x=bf16 keep=b8 # mask_mul{{$}}
// PROFILE-DAG: {{^}}kiln_rms_mixed_{{[0-9a-f]+}} x=bf16 w=f32 # rms_mixed{{$}}
// PROFILE-DAG: {{^}}kiln_softmax_counts_{{[0-9a-f]+}} x=f32 counts=i64 # softmax_counts{{$}}
// PROFILE-DAG: {{^}}kiln_sgd_master_{{[0-9a-f]+}} p=f32 grad=bf16 # sgd_master{{$}}
// PROFILE-DAG: {{^}}kiln_count_up_{{[0-9a-f]+}} c=i64 x=f32 # count_up{{$}}
// PROFILE-DAG: {{^}}kiln_accumulate_{{[0-9a-f]+}} acc=bf16 v=f32 # accumulate{{$}}
// PROFILE-DAG: {{^}}kiln_accumulate_read_{{[0-9a-f]+}} acc=bf16 v=f32 # accumulate_read{{$}}
// PROFILE-NOT: x=f32 idx=f32
// PROFILE-NOT: x=bf16 idx=bf16
//
// AGAIN-DAG: c=i64 x=f32 # count_up
//
// REMARK-DAG: remark: kiln: compiled 'scale_idx': {{.*}}(f32, f16, bf16, f64, ('x': f32, 'idx': i64) from the dtype profile, ('x': f32, 'idx': i32) from the dtype profile, ('x': bf16, 'idx': i64) from the dtype profile, ('x': bf16, 'idx': i32) from the dtype profile; CPU only)
// REMARK-DAG: remark: kiln: compiled 'int_only': {{.*}}('a': i32, 'b': i32) from the dtype profile, ('a': i64, 'b': i64) from the dtype profile; CPU only)
// REMARK-DAG: remark: kiln: compiled 'rms_mixed': {{.*}}, ('x': bf16, 'w': f32) from the dtype profile; CPU only)
// REMARK-DAG: remark: kiln: compiled 'sgd_master': {{.*}}, ('p': f32, 'grad': bf16) from the dtype profile; CPU only)
// REMARK-DAG: remark: kiln: not compiled for ('c': i64, 'x': f32) from the dtype profile: an in-place update of {{.*}}i64{{.*}} by a result of dtype f32 raises in eager
// REMARK-DAG: remark: kiln: compiled 'accumulate': {{.*}}, ('acc': bf16, 'v': f32) from the dtype profile; CPU only)
// REMARK-DAG: remark: kiln: compiled 'accumulate_read': {{.*}}, ('acc': bf16, 'v': f32) from the dtype profile; CPU only)
//
// DEPS: .o: \
// DEPS-NEXT: exec-dtype-profile.cpp.tmp.prof \
//
// BAD: warning: kiln: 2 lines of the dtype profile '{{.*}}.bad' are not '<symbol> <name>=<dtype>...': ignored
#include "dtype_profile_cases.h"

#include <cstdlib>

int main(int argc, char **argv) {
  return run_dtype_profile(argc > 1 ? std::atoi(argv[1]) : 2,
                           kiln::Device::cpu());
}
