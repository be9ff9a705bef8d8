// The C++ API of kiln_passes, as the plugin and codegen use it: building
// graphs, verify, printing what is not from text, the pipeline's callback,
// PassError, Graphviz clusters.
// RUN: %kiln_passes_cxx %s %kiln_passes_libs -o %t
// RUN: %t | FileCheck %s
#include <kiln/passes/dot.h>
#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include <cstdio>
#include <string>

using namespace kiln;
using namespace kiln::ir;

static void roundtrip(const Graph &g) {
  std::string first = print(g);
  auto parsed = parse_kir(first, "<api>");
  if (!parsed) {
    std::printf("PARSE FAILED: %s\n", llvm::toString(parsed.takeError()).c_str());
    return;
  }
  std::string second = print((*parsed)[0].graph);
  std::printf("%s%s\n", first.c_str(),
              first == second ? "ROUNDTRIP OK" : "ROUNDTRIP DIFFERS");
}

int main() {
  // The op table comes from kiln/ops.def.
  // CHECK: gelu_tanh arity 1 FLOAT has-decomposition 1
  // CHECK-NEXT: where arity 3 WHERE
  // CHECK-NEXT: input is an argument, frobnicate unknown
  const OpInfo &gt = op_info(*op_from_name("gelu_tanh"));
  std::printf("%s arity %d %s has-decomposition %d\n", gt.name, gt.arity,
              gt.rule == TypeRule::FLOAT ? "FLOAT" : "?", *gt.decomposition != 0);
  const OpInfo &wh = op_info(Op::Where);
  std::printf("%s arity %d %s\n", wh.name, wh.arity,
              wh.rule == TypeRule::WHERE ? "WHERE" : "?");
  std::printf("input is %s, frobnicate %s\n",
              op_info(*op_from_name("input")).kind == OpKind::Argument
                  ? "an argument" : "?",
              op_from_name("frobnicate") ? "known" : "unknown");

  // A graph as capture builds it, with an argument after other nodes and
  // unnamed values: the text numbers values so that it reads back the same
  // (an unranked operand makes the product unranked).
  // CHECK-NEXT: verify: ''
  // CHECK-LABEL: graph @captured(%x: f32[*], %1: f32[2, s0]) {
  // CHECK-NEXT:    %2: f32[*] = sin %x loc("cap.cpp":3:7)
  // CHECK-NEXT:    %3: f64 = const 0.5
  // CHECK-NEXT:    %4: f32[*] = mul %2, %1
  // CHECK-NEXT:    %5: f32[*] = mul %4, %3
  // CHECK-NEXT:    return %5
  // CHECK-NEXT:  }
  // CHECK-NEXT:  ROUNDTRIP OK
  GraphBuilder b("captured");
  NodeId x = b.input(0, Type::tensor(DType::f32), "x");
  NodeId s = b.op(Op::Sin, {x}, Loc{"cap.cpp", 3, 7});
  NodeId half = b.constant(0.5);
  NodeId y = b.input(1, Type::tensor(DType::f32, Shape::ranked_dims(
                                                     {SymDim::constant(2),
                                                      SymDim::sym(0)})));
  NodeId m = b.op(Op::Mul, {s, y});
  b.output(b.op(Op::Mul, {m, half}));
  Graph captured = b.take();
  std::printf("verify: '%s'\n", verify(captured).c_str());
  auto typed = passes::infer_types(captured, {});
  roundtrip(*typed);

  // verify() finds broken invariants.
  // CHECK-NEXT: broken: node %1: operand %5 is not an earlier node
  // CHECK-NEXT: broken: node %3: argument number 0 appears twice
  Graph bad = *typed;
  bad.nodes[s].operands[0] = 5;
  std::printf("broken: %s\n", verify(bad).c_str());
  bad = *typed;
  bad.nodes[y].arg_index = 0;
  std::printf("broken: %s\n", verify(bad).c_str());

  // The pipeline calls back after every pass, in order.
  // CHECK-NEXT: passes: infer-types decompose infer-types fold-constants simplify cse dce
  std::string names;
  auto optimised = passes::run_pipeline(
      *typed, {}, [&](llvm::StringRef pass, const Graph &) {
        names += " " + pass.str();
      });
  std::printf("passes:%s\n", names.c_str());
  // CHECK-NEXT: default: infer-types,decompose,infer-types,(fold-constants,simplify,cse),dce
  std::printf("default: %s\n", passes::default_pipeline().str().c_str());

  // A failing pass gives a PassError with the node and its location.
  // CHECK-NEXT: PassError node 2 at app.cpp:9:4 value %2: shapes [3] and [4] do not broadcast
  // CHECK-NEXT: as text: app.cpp:9:4: shapes [3] and [4] do not broadcast
  GraphBuilder c("mismatch");
  NodeId p = c.input(0, Type::tensor(DType::f32, Shape::ranked_dims({SymDim::constant(3)})));
  NodeId q = c.input(1, Type::tensor(DType::f32, Shape::ranked_dims({SymDim::constant(4)})));
  c.output(c.op(Op::Add, {p, q}, Loc{"app.cpp", 9, 4}));
  auto failed = passes::run_pipeline(c.take(), {});
  std::string as_text;
  llvm::handleAllErrors(failed.takeError(), [&](const passes::PassError &e) {
    std::printf("PassError node %d at %s:%u:%u value %s: %s\n", e.node,
                e.loc.file.c_str(), e.loc.line, e.loc.col, e.value.c_str(),
                e.message.c_str());
    as_text = llvm::toString(llvm::make_error<passes::PassError>(e));
  });
  std::printf("as text: %s\n", as_text.c_str());

  // Clusters per group id (e.g. kernels); -1 is outside any.
  // CHECK-NEXT: digraph "captured" {
  // CHECK:        n0 [label="%x = input #0 : f32[*]", shape=ellipse];
  // CHECK:      subgraph cluster_0 {
  // CHECK-NEXT:   label="group 0";
  // CHECK-NEXT:   n1 [label="%2 = sin : f32[*]"];
  // CHECK-NEXT: }
  // CHECK-NEXT: subgraph cluster_7 {
  // CHECK-NEXT:   label="group 7";
  // CHECK-NEXT:   n4 [label="%4 = mul : f32[*]"];
  // CHECK-NEXT:   n5 [label="%5 = mul : f32[*]"];
  // CHECK-NEXT: }
  // CHECK:      n1 -> n4;
  // CHECK:      n5 -> out0;
  std::printf("%s", to_dot(*typed, {-1, 0, -1, -1, 7, 7}).c_str());
  return 0;
}
