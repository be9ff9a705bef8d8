// -fplugin-arg-kiln-debug-dir: per annotated function a folder with the
// captured graph, the graph after each pass, the graph each variant ends
// with (kernels as clusters), the plan, the generated code and explain.json.
// RUN: rm -rf %t.dir
// RUN: %kiln_cxx -c -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s -o %t.o
// RUN: FileCheck %s --check-prefix=INDEX < %t.dir/dump-files.cpp/index.txt
// RUN: FileCheck %s --check-prefix=CAPTURED < %t.dir/dump-files.cpp/twice_sin/captured.kir
// RUN: FileCheck %s --check-prefix=CAPTURED-DOT < %t.dir/dump-files.cpp/twice_sin/captured.dot
// RUN: FileCheck %s --check-prefix=BEFORE-CSE < %t.dir/dump-files.cpp/twice_sin/passes/f32/06-simplify.kir
// RUN: FileCheck %s --check-prefix=AFTER-CSE < %t.dir/dump-files.cpp/twice_sin/passes/f32/07-cse.kir
// RUN: FileCheck %s --check-prefix=AFTER-CSE-DOT < %t.dir/dump-files.cpp/twice_sin/passes/f32/07-cse.dot
// RUN: FileCheck %s --check-prefix=F16 < %t.dir/dump-files.cpp/twice_sin/passes/f16/01-infer-types.kir
// RUN: FileCheck %s --check-prefix=PLAN < %t.dir/dump-files.cpp/twice_sin/plan.txt
// RUN: FileCheck %s --check-prefix=HOST < %t.dir/dump-files.cpp/twice_sin/host.cpp
// RUN: FileCheck %s --check-prefix=LOWERED < %t.dir/dump-files.cpp/twice_sin/lowered.txt
// RUN: FileCheck %s --check-prefix=NO-CUDA < %t.dir/dump-files.cpp/twice_sin/kernels.cu
// RUN: python3 %S/Inputs/flatjson.py %t.dir/dump-files.cpp/twice_sin/explain.json | FileCheck %s --check-prefix=JSON
// RUN: FileCheck %s --check-prefix=SOFT-PLAN < %t.dir/dump-files.cpp/soft/plan.txt
// RUN: FileCheck %s --check-prefix=SOFT-FINAL < %t.dir/dump-files.cpp/soft/final/f32.dot
// RUN: python3 %S/Inputs/flatjson.py %t.dir/dump-files.cpp/soft/explain.json | FileCheck %s --check-prefix=SOFT-JSON
// Only the variants asked for, and what the nested compile was given.
// RUN: not ls %t.dir/dump-files.cpp/soft/passes/f16
// RUN: FileCheck %s --check-prefix=TU < %t.dir/dump-files.cpp/tu.host.cpp
// RUN: not ls %t.dir/dump-files.cpp/tu.cu
#include <kiln/kiln.h>

using kiln::Tensor;

// The lowered program: the guards the host code checks, then the loops.
// LOWERED: lowered @twice_sin (
// LOWERED: guard 'x' is a defined tensor
// LOWERED-NEXT: fails when !a0.defined(), logs "'x' is an undefined tensor"
// LOWERED: variant f32 (
// LOWERED: kernel 0 cpu
// LOWERED: function {{.*}}_contig (contig):
// LOWERED: = sin(
// LOWERED: store out0[i] =

// INDEX: # Kiln debug dump of {{.*}}dump-files.cpp
// INDEX: compiled  twice_sin  twice_sin/
// INDEX: compiled  soft       soft/

// CAPTURED:      graph @twice_sin(%x: f32[*] loc("{{.*}}dump-files.cpp":{{[0-9]+:[0-9]+}}), %y: f32[*] loc("{{.*}}dump-files.cpp":{{[0-9]+:[0-9]+}})) {
// CAPTURED-NEXT:   %a: f32[*] = sin %x{{ +}}loc("{{.*}}dump-files.cpp":[[@LINE+14]]:14)
// CAPTURED-NEXT:   %b: f32[*] = sin %x{{ +}}loc("{{.*}}dump-files.cpp":[[@LINE+14]]:14)
// CAPTURED-NEXT:   %4: f32[*] = add %a, %b{{ +}}loc("{{.*}}dump-files.cpp":[[@LINE+14]]:13)
// CAPTURED-NEXT:   %5: f32[*] = mul %4, %y{{ +}}loc("{{.*}}dump-files.cpp":[[@LINE+13]]:18)
// CAPTURED-NEXT:   return %5
// CAPTURED-DOT: digraph "twice_sin" {
// CAPTURED-DOT: n2 [label="%b = sin : f32[*]"];
// BEFORE-CSE: %b: f32[*] = sin %x
// BEFORE-CSE: add %a, %b
// AFTER-CSE-NOT: %b
// AFTER-CSE: add %a, %a
// AFTER-CSE-DOT: label="%3 = add : f32[*]"
// F16: graph @twice_sin(%x: f16[*] loc("{{.*}}dump-files.cpp":{{[0-9]+:[0-9]+}}), %y: f16[*] loc("{{.*}}dump-files.cpp":{{[0-9]+:[0-9]+}})) {
[[kiln::compile]] Tensor twice_sin(const Tensor &x, const Tensor &y) {
  Tensor a = kiln::sin(x);
  Tensor b = kiln::sin(x); // the same value: CSE merges it into a
  return (a + b) * y;
}

// PLAN:      [f32] plan for @twice_sin: 1 kernel
// PLAN-NEXT: kernel 0: pointwise, 3 ops fused; per element reads 8 B (2 tensors), writes 4 B
// PLAN:        %a = sin %x    ({{.*}}dump-files.cpp:[[@LINE-7]]:14)
// PLAN:      [f64] plan for @twice_sin: 1 kernel
// PLAN-NEXT: kernel 0: pointwise, 3 ops fused; per element reads 16 B (2 tensors), writes 8 B

// The generated code says which source expression each line computes.
// HOST: // Kiln: the fast path of 'twice_sin' (dump-files.cpp:[[@LINE-13]]): guards, kernel
// HOST: // @twice_sin, kernel 0 (3 ops), f32 variant, CPU
// HOST: kiln::scalar::op_sin(v0); // a = sin(x)  at dump-files.cpp:[[@LINE-14]]:14
// HOST: kiln::scalar::op_mul(v2, v3); // mul(%2, y)  at dump-files.cpp:[[@LINE-13]]:18
// HOST: guard_failed(kFn, "'y' is not f32 like 'x'")
// HOST: guard_failed(kFn, "the shapes of 'x', 'y' do not broadcast")
// NO-CUDA: // Kiln: the CUDA kernels of 'twice_sin' (dump-files.cpp:[[@LINE-19]]).
// NO-CUDA-NEXT: // None were generated: CUDA is off (-fplugin-arg-kiln-cuda=off).

// JSON:      keys = function, location, status, options, captured_graph, graphs, graph_breaks, fast_paths, kernels, guards, remarks
// JSON-NEXT: function = "twice_sin"
// JSON:      location.line = [[@LINE-24]]
// JSON:      status = "compiled"
// JSON:      options.backend = "kiln"
// JSON:      options.cuda = false
// JSON:      captured_graph = "graph @twice_sin(%x: f32[*] loc({{.*}}), %y: f32[*] loc({{.*}})) {" (7 lines)
// JSON:      graphs.keys = f32, f16, bf16, f64
// JSON:      graphs.f32 = "graph @twice_sin(%x: f32[*] loc({{.*}}), %y: f32[*] loc({{.*}})) {" (6 lines)
// JSON:      graph_breaks.size = 0
// JSON:      fast_paths[0].folder = "."
// JSON-NEXT: fast_paths[0].backward.keys = status, gradients, saves, saves_also, assumes
// JSON-NEXT: fast_paths[0].backward.status = "off"
// JSON:      kernels.size = 4
// JSON:      kernels[0].dtype = "f32"
// JSON-NEXT: kernels[0].kind = "pointwise"
// JSON-NEXT: kernels[0].ops.size = 3
// JSON:      kernels[0].ops[0].op = "sin"
// JSON-NEXT: kernels[0].ops[0].value = "%a"
// JSON:      kernels[0].ops[0].location.line = [[@LINE-40]]
// JSON:      kernels[0].ops[1].op = "add"
// JSON:      kernels[0].ops[2].op = "mul"
// JSON:      kernels[0].ops[2].location.line = [[@LINE-41]]
// JSON:      kernels[0].reads_bytes_per_element = 8
// JSON-NEXT: kernels[0].writes_bytes_per_element = 4
// JSON-NEXT: kernels[0].passes = 1
// JSON-NEXT: kernels[0].runs = "always"
// JSON-NEXT: kernels[0].cuda_kernels.size = 0
// JSON:      kernels[1].dtype = "f16"
// JSON:      kernels[1].reads_bytes_per_element = 4
// JSON:      guards[0].check = "'x' is a defined tensor"
// JSON-NEXT: guards[0].message = "'x' is an undefined tensor"
// JSON-NEXT: guards[0].variants.size = 0
// JSON:      guards[2].check = "'y' is on the device of 'x'"
// JSON:      guards[3].message = "an argument ('x', 'y') requires grad while autograd records: the original body runs, its eager ops record"
// JSON:      guards[4].message = "'x' has a dtype this function was not compiled for (compiled for f32, f16, bf16, f64)"
// JSON:      guards[5].message = "'y' is not f32 like 'x'"
// JSON-NEXT: guards[5].variants.size = 1
// JSON-NEXT: guards[5].variants[0] = "f32"
// JSON:      guards[6].message = "the shapes of 'x', 'y' do not broadcast"
// JSON-NEXT: guards[6].variants.size = 0
// JSON:      remarks[0].message = "compiled 'twice_sin': 4 ops captured, 3 ops after decomposition and simplification, fused into 1 kernel (f32, f16, bf16, f64; CPU only)"
// JSON:      remarks[1].message = "guard: 'x' is a defined tensor"

// A reduction: one kernel over the rows, in three passes.
// SOFT-PLAN:      [f32] plan for @soft: 1 kernel
// SOFT-PLAN-NEXT: kernel 0: reduction, 5 ops fused; per element reads 4 B (1 tensor), writes 4 B
// SOFT-PLAN-NEXT:   reduces dims=[-1] in 3 passes over the rows
// SOFT-PLAN-NOT: [f16]
// SOFT-FINAL:      subgraph cluster_0 {
// SOFT-FINAL-NEXT:   label="kernel 0";
// SOFT-FINAL-NEXT:   n1 [label="%1 = amax {dims=[-1], keepdim=true} : f32[*]"];
// SOFT-JSON: options.dtypes.size = 1
// SOFT-JSON: kernels.size = 1
// SOFT-JSON: kernels[0].kind = "reduction"
// SOFT-JSON: kernels[0].ops.size = 5
// SOFT-JSON: kernels[0].passes = 3
// SOFT-JSON: guards[1].check = "no tensor argument requires grad while autograd records"
// SOFT-JSON: guards[3].check = "kernel 0: the shapes of 'x' broadcast together"
// SOFT-JSON: guards[4].check = "kernel 0: the reduced dims [-1] are in range and adjacent"
// SOFT-JSON: guards[5].message = "amax, amin and argmax of an empty dimension are errors"
// SOFT-JSON: message = "'x' has a layout the reduction cannot walk along the reduced dims (or the dims after them)"
[[kiln::compile("dtypes=f32")]] Tensor soft(const Tensor &x) {
  return kiln::softmax(x, -1);
}

// TU: // Generated by Kiln for dump_files_{{[0-9a-f]+}}: guards, launches, fused CPU loops.
// TU: fast path of 'twice_sin'
// TU: fast path of 'soft'
