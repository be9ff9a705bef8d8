// Layout ops in remarks: the function's count of views the host makes, a
// remark at each one's line, and the constructs that still break the graph
// (an in-place update of a view or of its base, a shape not in braces).
// RUN: %kiln_cxx -fsyntax-only %kiln_remarks %s 2>&1 | FileCheck %s
#include <kiln/kiln.h>

using kiln::Tensor;

// CHECK: remarks-views.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'heads': 3 ops captured, 7 ops after decomposition and simplification, fused into 1 kernel ({{.*}}), 2 layout ops made on the host
[[kiln::compile]] Tensor heads(const Tensor &x, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1);
  // CHECK: remarks-views.cpp:[[@LINE+2]]:16: remark: kiln: view of 'x' is a view the host makes (no copy); kernels read it through its strides
  // CHECK: remarks-views.cpp:[[@LINE+1]]:36: remark: kiln: transpose of %{{[0-9]+}} (line [[@LINE+1]]) is a view the host makes (no copy); kernels read it through its strides
  Tensor q = x.view({B, T, H, -1}).transpose(1, 2);
  return kiln::softmax(q, -1);
}

// CHECK: remarks-views.cpp:[[@LINE+1]]:26: remark: kiln: compiled 'flat': 2 ops captured, fused into 1 kernel ({{.*}}), 1 layout op made on the host
[[kiln::compile]] Tensor flat(const Tensor &x) {
  // CHECK: remarks-views.cpp:[[@LINE+1]]:22: remark: kiln: reshape of 'x' is made on the host: a view where the strides allow (else a copy, as eager); kernels read it through its strides
  return kiln::exp(x.reshape({-1}));
}

[[kiln::compile]] Tensor inplace_on_view(const Tensor &x) {
  Tensor e = kiln::exp(x);
  Tensor t = e.transpose(0, 1);
  // CHECK: remarks-views.cpp:[[@LINE+1]]:5: remark: kiln: 'inplace_on_view' is compiled as two regions from here: in-place operator '+=' on 't', which shares its elements with a view (or is one), is not supported yet
  t += 1.0;
  return t;
}

// A shape held in a variable: the function stays eager, said where.
[[kiln::compile]] Tensor shape_variable(const Tensor &x) {
  // CHECK: remarks-views.cpp:[[@LINE+1]]:14: warning: kiln: cannot compile 'shape_variable': local 'shape' of type 'kiln::Dims' is not supported yet; 'shape_variable' runs eagerly
  kiln::Dims shape{-1};
  return kiln::exp(x.view(shape));
}

// A shape from a call: the view breaks the graph, the rest compiles.
[[kiln::compile]] Tensor shape_call(const Tensor &x) {
  // CHECK: remarks-views.cpp:[[@LINE+1]]:21: remark: kiln: graph break in 'shape_call': the shape or order of 'view' must be written in braces ({B, T, -1}) in a compiled function
  Tensor v = x.view(x.sizes());
  return kiln::exp(v);
}
