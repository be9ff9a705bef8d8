// The guards explain.json lists (and the remarks print) are the checks the
// generated host code makes, message for message, for pointwise and
// reduction kernels, `where` conditions, scalars, and several fast paths.
// RUN: rm -rf %t.dir
// RUN: %kiln_cxx -fsyntax-only -fplugin-arg-kiln-cuda=off -fplugin-arg-kiln-debug-dir=%t.dir %s
// RUN: python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/pointwise | FileCheck %s --check-prefix=POINTWISE
// RUN: python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/norm | FileCheck %s --check-prefix=NORM
// RUN: python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/centred | FileCheck %s --check-prefix=CENTRED
// RUN: python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/two_regions | FileCheck %s --check-prefix=REGIONS
// RUN: python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/aliased | FileCheck %s --check-prefix=ALIASED
// RUN: python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/pinned | FileCheck %s --check-prefix=PINNED
// RUN: FileCheck %s --check-prefix=ALIASED-HOST < %t.dir/guards-match-host.cpp/aliased/host.cpp
// RUN: FileCheck %s --check-prefix=ALIASED-LOWERED < %t.dir/guards-match-host.cpp/aliased/lowered.txt
// With CUDA on (kernels generated, nvcc not run under -fsyntax-only).
// RUN: %if nvcc %{ rm -rf %t.cuda %}
// RUN: %if nvcc %{ %kiln_cxx -fsyntax-only -fplugin-arg-kiln-debug-dir=%t.cuda %s %}
// RUN: %if nvcc %{ python3 %S/Inputs/guards_match_host.py %t.cuda/guards-match-host.cpp/norm | FileCheck %s --check-prefix=NORM %}
// The checker itself fails on a guard the host code does not make.
// RUN: python3 -c "import json,sys; p=sys.argv[1]; j=json.load(open(p)); j['guards'][0]['message']='made up'; json.dump(j, open(p,'w'))" %t.dir/guards-match-host.cpp/pointwise/explain.json
// RUN: not python3 %S/Inputs/guards_match_host.py %t.dir/guards-match-host.cpp/pointwise | FileCheck %s --check-prefix=BROKEN
#include <kiln/kiln.h>

using kiln::Tensor;

void log_tensor(const Tensor &);

// POINTWISE: pointwise: 14 guard messages match
// BROKEN: pointwise: in host.cpp only: 'c' is an undefined tensor
// BROKEN: pointwise: in explain.json only: made up
[[kiln::compile]] Tensor pointwise(const Tensor &c, const Tensor &x,
                                   const Tensor &y, double s) {
  return kiln::where(c, x * s, y);
}

// A parameter of its own dtypes: the entry picks the variant by both.
// PINNED: pinned: {{[0-9]+}} guard messages match
[[kiln::compile]] Tensor pinned(const Tensor &x,
                                [[kiln::dtype("i64", "b8")]] const Tensor &m) {
  return x * m + 1;
}

// One specialisation per definedness of the optional weight and bias.
// NORM-COUNT-4: norm (region 1, specialisation {{[1-4]}}): {{[0-9]+}} guard messages match
[[kiln::compile]] Tensor norm(const Tensor &x, const Tensor &w,
                              const Tensor &b) {
  return kiln::layer_norm(x, w, b) + kiln::argmax(x, -1, true);
}

// CENTRED: centred: {{[0-9]+}} guard messages match
[[kiln::compile("dtypes=f32,f64")]] Tensor centred(const Tensor &x,
                                                   const Tensor &y) {
  return (x - kiln::mean(x, 0, true)) * y + kiln::var(y, 0, true);
}

// REGIONS: two_regions (region 1): {{[0-9]+}} guard messages match
// REGIONS: two_regions (region 2): {{[0-9]+}} guard messages match
[[kiln::compile]] Tensor two_regions(const Tensor &x) {
  Tensor y = kiln::softmax(x, 0);
  log_tensor(y);
  return kiln::sum(y * x, -1);
}

// What only the caller can check (the names it sees) is a guard like any
// other: in the lowered program, the host code and explain.json alike.
// ALIASED: aliased: {{[0-9]+}} guard messages match
// ALIASED-HOST: bool [[S:kiln_aliased_[0-9a-f]+]]_aliased(bool held0, {{.*}}, bool held5) __asm__("[[S]]_aliased");
// ALIASED-HOST-NEXT: bool [[S]]_aliased(bool held0, {{.*}}, bool held5) {
// ALIASED-HOST-NEXT:   constexpr const char *kFn = "aliased";
// ALIASED-HOST-NEXT:   if (!held0)
// ALIASED-HOST-NEXT:     return kiln::rt::guard_failed(kFn, "'y' and 'x' are one object");
// ALIASED-HOST:        if (!held4)
// ALIASED-HOST-NEXT:     return kiln::rt::guard_failed(kFn, "'s' and 'c' are one object");
// ALIASED-HOST-NEXT:   if (!held5)
// ALIASED-HOST-NEXT:     return kiln::rt::guard_failed(kFn, "'y' is updated in place and shares storage with 'x'");
// ALIASED-HOST-NEXT:   return true;
// ALIASED-LOWERED: caller checks (kiln_aliased_{{[0-9a-f]+}}_aliased, 6 held flags):
// ALIASED-LOWERED-NEXT: constexpr const char *kFn = "aliased"
// ALIASED-LOWERED-NEXT: guard 'y' and 'x' are different objects
// ALIASED-LOWERED-NEXT:   fails when !held0, logs "'y' and 'x' are one object"
// ALIASED-LOWERED:      guard 'y', updated in place, shares no storage with 'x'
// ALIASED-LOWERED-NEXT:   fails when !held5, logs "'y' is updated in place and shares storage with 'x'"
[[kiln::compile]] void aliased(Tensor &y, const Tensor &x, Tensor &s,
                               Tensor &c) {
  y += x * 2;
  s = kiln::sin(x);
  c = kiln::cos(x);
}
