// The C++ API of kiln_passes, as the plugin and codegen use it: building
// graphs, verify, printing what is not from text, the pipeline's callback,
// PassError, Graphviz clusters.
// RUN: %kiln_passes_cxx %s %kiln_passes_libs -o %t
// RUN: %t | FileCheck %s
#include <kiln/passes/dot.h>
#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

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

// One field of ir::Node differs from another's: doubles by their bits.
template <class T> static bool differs(const T &a, const T &b) {
  return !(a == b);
}
static bool differs(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) != 0;
}
// Every field of a node, value_fields then origin_fields.
static auto all_fields(const Node &n) {
  return std::tuple_cat(n.value_fields(), n.origin_fields());
}
constexpr size_t kNodeFields = std::tuple_size_v<decltype(all_fields(Node()))>;
// For each field, whether it differs between a and b.
static std::array<bool, kNodeFields> field_differences(const Node &a,
                                                       const Node &b) {
  std::array<bool, kNodeFields> out{};
  auto fa = all_fields(a), fb = all_fields(b);
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((out[I] = differs(std::get<I>(fa), std::get<I>(fb))), ...);
  }(std::make_index_sequence<kNodeFields>());
  return out;
}

// KIR is the one serialisation of a graph (the plugin's PCH payload, its
// fingerprints, kiln-opt): every field of ir::Node must survive print ->
// parse. This graph gives every field a value other than its default in
// some node; a field no node sets, or one the text loses, fails here. (A
// field outside value_fields/origin_fields fails to compile, ir.h.)
static void node_fields_round_trip() {
  // CHECK-LABEL: node fields:
  // CHECK-NEXT:  graph @"fields of a node"(%0: f16[s1, 7] loc("dir/a \"b\".cpp":4:9) name("p.first"), %n: i64 loc("a.cpp":5:1)) {
  // CHECK-NEXT:    %k: f64 = const -2.5                  loc("a.cpp":6:2)
  // CHECK-NEXT:    %3: f16[s1, 1] = sum %0 {dims=[-1], keepdim=true} loc("a.cpp":7:3) name("s")
  // CHECK-NEXT:    %4: f16[s1, 1] = mul %3, %k           name("s")
  // CHECK-NEXT:    %5: f16[s1, 1] = add %4, %n           name("9lives")
  // CHECK-NEXT:    %6: bf16[s1, 1] = to %5 {dtype=bf16}
  // CHECK-NEXT:    return %6
  // CHECK-NEXT:  }
  // CHECK-NEXT:  every field set: yes
  // CHECK-NEXT:  every field round-trips: yes
  GraphBuilder b("fields of a node");
  NodeId x = b.input(0,
                     Type::tensor(DType::f16,
                                  Shape::ranked_dims({SymDim::sym(1),
                                                      SymDim::constant(7)})),
                     "p.first", Loc{"dir/a \"b\".cpp", 4, 9});
  NodeId n = b.scalar_input(1, DType::i64, "n", Loc{"a.cpp", 5, 1});
  NodeId k = b.constant(-2.5, DType::f64, Loc{"a.cpp", 6, 2});
  b.graph().nodes[k].name = "k";
  Node sum;
  sum.op = Op::Sum;
  sum.operands = {x};
  sum.dims = {-1};
  sum.keepdim = true;
  sum.name = "s"; // twice: neither value can be %s
  sum.loc = Loc{"a.cpp", 7, 3};
  NodeId s = b.add(sum);
  NodeId m = b.op(Op::Mul, {s, k}, Loc{}, "s");
  NodeId c = b.op(Op::Cast, {b.op(Op::Add, {m, n}, Loc{}, "9lives")});
  b.graph().nodes[c].cast_to = DType::bf16;
  b.output(c);
  Graph g = *passes::infer_types(b.take(), {});
  std::string text = print(g);
  std::printf("node fields:\n%s", text.c_str());

  std::array<bool, kNodeFields> set{};
  for (const Node &node : g.nodes) {
    std::array<bool, kNodeFields> d = field_differences(node, Node());
    for (size_t i = 0; i < kNodeFields; ++i)
      set[i] = set[i] || d[i];
  }
  std::string unset;
  for (size_t i = 0; i < kNodeFields; ++i)
    if (!set[i])
      unset += " " + std::to_string(i);
  std::printf("every field set: %s\n",
              unset.empty() ? "yes" : ("no, not field" + unset).c_str());

  auto parsed = parse_kir(text, "<fields>");
  if (!parsed) {
    std::printf("PARSE FAILED: %s\n",
                llvm::toString(parsed.takeError()).c_str());
    return;
  }
  const Graph &back = (*parsed)[0].graph;
  std::string lost;
  if (back.nodes.size() != g.nodes.size() || back.outputs != g.outputs ||
      back.name != g.name)
    lost = " (the graph)";
  for (size_t id = 0; lost.empty() && id < g.nodes.size(); ++id) {
    std::array<bool, kNodeFields> d =
        field_differences(g.nodes[id], back.nodes[id]);
    for (size_t i = 0; i < kNodeFields; ++i)
      if (d[i])
        lost += " field " + std::to_string(i) + " of node " +
                std::to_string(id);
    if (!(g.nodes[id] == back.nodes[id]) && lost.empty())
      lost = " (operator== disagrees)";
  }
  std::printf("every field round-trips: %s\n",
              lost.empty() ? "yes" : ("no," + lost).c_str());

  // Without locations and names: what the graph computes (the plugin's
  // fingerprint of a region, which names its symbol).
  // CHECK-NEXT:  graph @"fields of a node"(%0: f16[s1, 7], %1: i64) {
  // CHECK-NEXT:    %2: f64 = const -2.5
  // CHECK-NEXT:    %3: f16[s1, 1] = sum %0 {dims=[-1], keepdim=true}
  // CHECK-NEXT:    %4: f16[s1, 1] = mul %3, %2
  // CHECK-NEXT:    %5: f16[s1, 1] = add %4, %1
  // CHECK-NEXT:    %6: bf16[s1, 1] = to %5 {dtype=bf16}
  // CHECK-NEXT:    return %6
  PrintOptions computes;
  computes.locations = false;
  computes.names = false;
  std::printf("%s", print(g, computes).c_str());
}

// What kiln/ops.def's columns say, as the passes read them.
static void op_table_properties() {
  // CHECK-LABEL: op table:
  // CHECK-NEXT:  commutative: add mul eq ne
  // CHECK-NEXT:  expensive: div trunc_div pow fmod sin cos tan tanh atan2 exp log log1p expm1 log2 log10 sqrt rsqrt erf reciprocal sigmoid silu gelu gelu_tanh
  // CHECK-NEXT:  not on b8: sub trunc_div neg floor ceil trunc round fmod
  // CHECK-NEXT:  identities: add -0 sub 0 mul 1 div 1 pow 1
  // CHECK-NEXT:  operators: add + sub - mul * div / neg - gt > lt < ge >= le <= eq == ne !=
  // CHECK-NEXT:  by operator: + add, - sub, - neg, == eq, % none
  // CHECK-NEXT:  index reductions: argmax
  // CHECK-NEXT:  forms: mean REDUCE(x) var REDUCE(x, correction) logsumexp REDUCE(x) softmax ROWWISE(x) log_softmax ROWWISE(x) layer_norm NORM(x, weight, bias, eps) rms_norm NORM(x, weight, eps)
  // CHECK-NEXT:  operand names match arities: yes
  std::printf("op table:\n");
  std::string comm, costly, no_b8, ids, ops, index, forms;
  bool arities = true;
  for (int i = 0; i <= static_cast<int>(Op::ReduceSize); ++i) {
    Op op = static_cast<Op>(i);
    const OpInfo &info = op_info(op);
    std::string name = info.name;
    if (is_commutative(op))
      comm += " " + name;
    if (is_expensive(op))
      costly += " " + name;
    if (rejects_b8(op))
      no_b8 += " " + name;
    if (std::optional<double> e = identity_element(op)) {
      char v[32];
      std::snprintf(v, sizeof v, "%g", *e);
      ids += " " + name + " " + v;
    }
    if (*info.cxx)
      ops += " " + name + " " + info.cxx;
    if (reduces_to_index(op))
      index += " " + name;
    if (is_composite(op)) {
      const char *form = info.form == CompositeForm::REDUCE    ? "REDUCE"
                         : info.form == CompositeForm::ROWWISE ? "ROWWISE"
                         : info.form == CompositeForm::NORM    ? "NORM"
                                                               : "?";
      forms += " " + name + " " + form + "(" + info.operands + ")";
      arities &= (int)operand_names(op).size() == info.arity;
    }
  }
  std::printf("commutative:%s\nexpensive:%s\nnot on b8:%s\nidentities:%s\n"
              "operators:%s\n",
              comm.c_str(), costly.c_str(), no_b8.c_str(), ids.c_str(),
              ops.c_str());
  auto by_op = [](const char *spelling, int arity) {
    std::optional<Op> op = op_from_operator(spelling, arity);
    return std::string(spelling) + " " + (op ? op_info(*op).name : "none");
  };
  std::printf("by operator: %s, %s, %s, %s, %s\n", by_op("+", 2).c_str(),
              by_op("-", 2).c_str(), by_op("-", 1).c_str(),
              by_op("==", 2).c_str(), by_op("%", 2).c_str());
  std::printf("index reductions:%s\nforms:%s\n", index.c_str(), forms.c_str());
  std::printf("operand names match arities: %s\n", arities ? "yes" : "no");
}

int main() {
  node_fields_round_trip();
  op_table_properties();

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
  // CHECK-NEXT: passes: infer-types fuse-attention decompose infer-types fold-constants simplify cse sink-views sink-cat fold-constants simplify cse welford cse infer-types dce
  std::string names;
  auto optimised = passes::run_pipeline(
      *typed, {}, [&](llvm::StringRef pass, const Graph &) {
        names += " " + pass.str();
      });
  std::printf("passes:%s\n", names.c_str());
  // CHECK-NEXT: default: infer-types,fuse-attention,decompose,infer-types,(fold-constants,simplify,cse),sink-views,sink-cat,(fold-constants,simplify,cse),welford,cse,infer-types,dce
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

  // Every op, reductions and composites included, is in the table and
  // found by its mnemonic; reduce_size is the last.
  // CHECK:      ops by name: all
  // CHECK-NEXT: sum arity 1 reduction SUM
  // CHECK-NEXT: argmax arity 1 reduction INDEX
  // CHECK-NEXT: layer_norm arity 4 composite has-decomposition 1
  // CHECK-NEXT: var arity 2 composite has-decomposition 1
  // CHECK-NEXT: reduce_size arity 1 shape
  bool all = true;
  for (int i = 0; i <= static_cast<int>(Op::ReduceSize); ++i) {
    std::optional<Op> found = op_from_name(op_info(static_cast<Op>(i)).name);
    if (!found || *found != static_cast<Op>(i)) {
      std::printf("op %d (%s) is not found by name\n", i,
                  op_info(static_cast<Op>(i)).name);
      all = false;
    }
  }
  std::printf("ops by name: %s\n", all ? "all" : "NOT ALL");
  for (const char *name : {"sum", "argmax", "layer_norm", "var", "reduce_size"}) {
    const OpInfo &info = op_info(*op_from_name(name));
    std::printf("%s arity %d %s", info.name, info.arity,
                info.kind == OpKind::Reduction   ? "reduction"
                : info.kind == OpKind::Composite ? "composite"
                : info.kind == OpKind::Shape     ? "shape"
                                                 : "?");
    if (info.kind == OpKind::Reduction)
      std::printf(" %s", info.rule == TypeRule::SUM     ? "SUM"
                         : info.rule == TypeRule::INDEX ? "INDEX"
                                                        : "SAME");
    if (info.kind == OpKind::Composite)
      std::printf(" has-decomposition %d", *info.decomposition != 0);
    std::printf("\n");
  }

  // A reduction built through the API: dims and keepdim on the node.
  // CHECK-NEXT: graph @reduce(%x: f32[s0, 3]) {
  // CHECK-NEXT:   %s: f32[s0, 1] = sum %x {dims=[-1], keepdim=true} loc("r.cpp":2:3)
  // CHECK-NEXT:   %m: i64[3] = argmax %x {dims=[0], keepdim=false}
  // CHECK-NEXT:   return %s, %m
  // CHECK-NEXT: }
  // CHECK-NEXT: ROUNDTRIP OK
  GraphBuilder r("reduce");
  NodeId rx = r.input(0, Type::tensor(DType::f32,
                                      Shape::ranked_dims({SymDim::sym(0),
                                                          SymDim::constant(3)})),
                      "x");
  Node sum;
  sum.op = Op::Sum;
  sum.operands = {rx};
  sum.dims = {-1};
  sum.keepdim = true;
  sum.name = "s";
  sum.loc = Loc{"r.cpp", 2, 3};
  NodeId rs = r.add(sum);
  Node am;
  am.op = Op::Argmax;
  am.operands = {rx};
  am.dims = {0};
  am.name = "m";
  NodeId ra = r.add(am);
  r.output(rs);
  r.output(ra);
  Graph reduce = r.take();
  auto reduce_typed = passes::infer_types(reduce, {});
  roundtrip(*reduce_typed);

  // verify() rejects attributes on ops that have none.
  // CHECK-NEXT: broken: node %1: 'sum' takes 1 operands, has 2
  // CHECK-NEXT: broken: node %1: 'exp' has no dims/keepdim attributes
  Graph bad_reduce = *reduce_typed;
  bad_reduce.nodes[rs].operands.push_back(rx);
  std::printf("broken: %s\n", verify(bad_reduce).c_str());
  GraphBuilder e("exp");
  NodeId ex = e.input(0, Type::tensor(DType::f32), "x");
  Node exp_node;
  exp_node.op = Op::Exp;
  exp_node.operands = {ex};
  exp_node.keepdim = true;
  e.output(e.add(exp_node));
  std::printf("broken: %s\n", verify(e.take()).c_str());

  // A bad dim found by infer_types is a PassError at the node's location.
  // CHECK-NEXT: PassError node 1 at r.cpp:2:3: dim 2 is out of range for rank 2
  Graph out_of_range = reduce;
  out_of_range.nodes[rs].dims = {2};
  auto not_typed = passes::infer_types(out_of_range, {});
  llvm::handleAllErrors(not_typed.takeError(), [&](const passes::PassError &e) {
    std::printf("PassError node %d at %s:%u:%u: %s\n", e.node,
                e.loc.file.c_str(), e.loc.line, e.loc.col, e.message.c_str());
  });

  // The pipeline decomposes composites built through the API.
  // CHECK-NEXT: graph @lse(%x: f64[8]) {
  // CHECK:        %l: f64[] = add
  // CHECK-NEXT:   return %l
  // CHECK-NOT:    logsumexp
  GraphBuilder l("lse");
  NodeId lx = l.input(0, Type::tensor(DType::f64,
                                      Shape::ranked_dims({SymDim::constant(8)})),
                      "x");
  Node lse;
  lse.op = Op::Logsumexp;
  lse.operands = {lx};
  lse.name = "l";
  l.output(l.add(lse));
  auto lse_done = passes::run_pipeline(l.take(), {});
  std::printf("%s", print(*lse_done).c_str());
  return 0;
}
