// The scheduler.
//
// Pointwise graphs: every pointwise output is a function of the tensor
// arguments it reads, and its shape is the broadcast of theirs. Outputs
// that read the same set of tensor arguments therefore share one iteration
// space and fuse into one kernel; a kernel recomputes whatever pointwise
// producers its outputs need (cheaper than a round trip to memory).
// Outputs that read different sets usually have one shape too (an Adam
// step's m, v and p): one kernel over the broadcast of all their inputs
// writes them all, and the per-set kernels are what runs when the shapes
// turn out to differ (a check, not a guard: both paths are compiled).
//
// Graphs with reductions: one kernel over [outer, R, inner] with full and
// reduced values and passes (see schedule.h). What it cannot run yet is an
// error naming the node, and the function stays eager.
#include <kiln/passes/passes.h>
#include <kiln/passes/schedule.h>
#include <kiln/passes/text.h>

#include <kiln/kernel_abi.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <optional>
#include <set>

namespace kiln::sched {

using ir::NodeId;
using ir::Op;

bool is_host_scalar(const ir::Graph &g, NodeId id) {
  const ir::Node &n = g.node(id);
  if (n.op == Op::Size) // read from a shape the host computed
    return true;
  if (!n.type.scalar || !ir::is_pointwise(n.op))
    return false;
  for (NodeId o : n.operands) {
    Op op = g.node(o).op;
    if (op != Op::Constant && op != Op::ScalarInput && !is_host_scalar(g, o))
      return false;
  }
  return true;
}

// Values another kernel of the call wrote to memory, which a kernel reads
// instead of computing them.
using Leaves = std::set<NodeId>;

// Nodes needed to compute `root` in a kernel (ascending ids: topological
// order); a host scalar is computed before the launch, a leaf read.
static std::set<NodeId> closure(const ir::Graph &g, NodeId root,
                                const Leaves &leaves = {}) {
  std::set<NodeId> seen;
  std::vector<NodeId> work{root};
  while (!work.empty()) {
    NodeId n = work.back();
    work.pop_back();
    if (!seen.insert(n).second || is_host_scalar(g, n) ||
        (leaves.count(n) && n != root))
      continue;
    for (NodeId o : g.node(n).operands)
      work.push_back(o);
  }
  return seen;
}

// The `size` nodes that node id's host-scalar operands read (through the
// host scalars they are computed from).
static std::vector<NodeId> host_sizes(const ir::Graph &g, NodeId id) {
  std::vector<NodeId> found, work(g.node(id).operands.begin(),
                                  g.node(id).operands.end());
  std::set<NodeId> seen;
  while (!work.empty()) {
    NodeId n = work.back();
    work.pop_back();
    if (!seen.insert(n).second || !is_host_scalar(g, n))
      continue;
    if (g.node(n).op == Op::Size) {
      found.push_back(n);
      continue;
    }
    for (NodeId o : g.node(n).operands)
      work.push_back(o);
  }
  return found;
}

static llvm::Error unsupported(const ir::Graph &g, NodeId id,
                               const std::string &why) {
  std::vector<std::string> names = ir::value_names(g);
  return llvm::make_error<passes::PassError>(id, g.node(id).loc, names[id],
                                             why);
}

static void sort_members(const ir::Graph &g, const std::set<NodeId> &members,
                         Kernel &k, const Leaves &leaves) {
  for (NodeId m : members) {
    const ir::Node &n = g.node(m);
    if (n.op == Op::Input || leaves.count(m))
      k.inputs.push_back(m);
    else if (n.op == Op::ScalarInput || is_host_scalar(g, m))
      k.scalars.push_back(m);
    else if (n.op != Op::Constant)
      k.nodes.push_back(m);
  }
}

// Whether two values' shapes are equal, as far as their types say: true or
// false when known at compile time, nullopt when only a run-time check
// can tell.
static std::optional<bool> same_shape(const ir::Shape &a, const ir::Shape &b) {
  if (!a.ranked || !b.ranked)
    return std::nullopt;
  if (a.dims.size() != b.dims.size())
    return false;
  bool known = true;
  for (auto [x, y] : llvm::zip(a.dims, b.dims)) {
    if (!x.is_symbolic() && !y.is_symbolic() && x.value != y.value)
      return false;
    known &= x == y;
  }
  return known ? std::optional<bool>(true) : std::nullopt;
}

// Pointwise kernels computing `roots`, reading tensor arguments and
// `leaves`.
static llvm::Expected<KernelPlan>
schedule_pointwise(const ir::Graph &g, const std::vector<NodeId> &roots,
                   const Leaves &leaves = {}) {
  KernelPlan plan;
  plan.kernel_of_node.assign(g.nodes.size(), -1);
  std::map<std::set<NodeId>, int> kernel_of_inputs;
  std::vector<std::set<NodeId>> members;

  for (NodeId out : roots) {
    if (!ir::is_pointwise(g.node(out).op) || leaves.count(out)) {
      plan.passthrough.push_back(out);
      continue;
    }
    std::set<NodeId> need = closure(g, out, leaves);
    std::set<NodeId> inputs;
    for (NodeId m : need) {
      const ir::Node &n = g.node(m);
      if (n.op == Op::Input || leaves.count(m))
        inputs.insert(m);
      else if (!ir::is_pointwise(n.op) && n.op != Op::Constant &&
               n.op != Op::ScalarInput && n.op != Op::Size)
        return unsupported(g, m,
                           std::string("'") + ir::op_info(n.op).name +
                               "' in a kernel without a reduction over its "
                               "dims is not supported yet");
    }
    auto [it, fresh] =
        kernel_of_inputs.try_emplace(inputs, int(plan.kernels.size()));
    if (fresh) {
      plan.kernels.emplace_back();
      members.emplace_back();
    }
    Kernel &k = plan.kernels[it->second];
    if (!llvm::is_contained(k.outputs, out))
      k.outputs.push_back(out);
    members[it->second].insert(need.begin(), need.end());
  }
  // Multi-output fusion: when the outputs read different sets of inputs,
  // one more kernel computes them all over the broadcast of every input,
  // each node once. It is the first kernel; the per-input-set kernels run
  // instead when an output's shape is not that broadcast.
  // Known shapes decide at compile time: all one shape, one kernel; two
  // that differ, the per-input-set kernels.
  std::optional<bool> same = true;
  for (const Kernel &k : plan.kernels)
    for (NodeId o : k.outputs) {
      std::optional<bool> s =
          same_shape(g.node(o).type.shape,
                     g.node(plan.kernels[0].outputs[0]).type.shape);
      if (s == false)
        same = false;
      else if (!s && same)
        same = std::nullopt;
    }
  // The fused kernel's operands: every output and every input set's
  // inputs; past what a kernel takes, the per-set kernels run.
  std::set<NodeId> every_input;
  size_t every_output = 0;
  for (const auto &[ins, ki] : kernel_of_inputs) {
    every_input.insert(ins.begin(), ins.end());
    every_output += plan.kernels[ki].outputs.size();
  }
  if (every_input.size() + every_output > size_t(kMaxPointwiseOperands))
    same = false;
  if (plan.kernels.size() > 1 && same != false) {
    Kernel all;
    std::set<NodeId> every;
    KernelPlan::MultiOutput m;
    for (auto [ki, k] : llvm::enumerate(plan.kernels)) {
      all.outputs.insert(all.outputs.end(), k.outputs.begin(), k.outputs.end());
      every.insert(members[ki].begin(), members[ki].end());
      m.unfused.push_back(int(ki) + 1);
    }
    if (same) { // nothing to choose at run time
      plan.kernels = {std::move(all)};
      members = {std::move(every)};
    } else {
      plan.kernels.insert(plan.kernels.begin(), std::move(all));
      members.insert(members.begin(), std::move(every));
      m.fused = 0;
      plan.multi.push_back(std::move(m));
    }
  }
  for (auto [ki, k] : llvm::enumerate(plan.kernels)) {
    sort_members(g, members[ki], k, leaves);
    for (NodeId m : k.nodes)
      if (plan.kernel_of_node[m] < 0)
        plan.kernel_of_node[m] = int(ki);
  }
  return plan;
}

// One reduction kernel computing `roots` from `members` (their closure),
// reading tensor arguments and `leaves`.
static llvm::Expected<KernelPlan>
schedule_reduction(const ir::Graph &g, const std::set<NodeId> &members,
                   const std::vector<NodeId> &reductions,
                   const std::vector<NodeId> &roots,
                   const Leaves &leaves = {}) {
  KernelPlan plan;
  plan.kernel_of_node.assign(g.nodes.size(), -1);
  Kernel k;
  k.kind = Kernel::Kind::Reduction;
  const ir::Node &first = g.node(reductions.front());
  k.dims = first.dims;
  bool all_dims = k.dims.empty();
  k.role.assign(g.nodes.size(), Role::None);
  k.phase.assign(g.nodes.size(), 0);

  k.drop.assign(g.nodes.size(), false);
  for (NodeId id : members) {
    const ir::Node &n = g.node(id);
    auto role_of = [&](NodeId o) { return k.role[o]; };
    if (leaves.count(id)) { // read, one per element of the space
      k.role[id] = Role::Full;
      continue;
    }
    switch (ir::op_info(n.op).kind) {
    case ir::OpKind::Argument:
      k.role[id] = n.op == Op::Input ? Role::Full : Role::None;
      break;
    case ir::OpKind::Constant:
      break;
    case ir::OpKind::Shape: // ReduceSize: R, from the operand's full shape
      if (n.op == Op::Size) // a host scalar
        break;
      if (role_of(n.operands[0]) != Role::Full || n.dims != k.dims)
        return unsupported(g, id,
                           "a size over other dims than the function's "
                           "reduction is not supported yet");
      break;
    case ir::OpKind::Reduction:
      if (n.dims != k.dims)
        return unsupported(
            g, id,
            "reductions over different dims in one function are not "
            "supported yet");
      if (role_of(n.operands[0]) != Role::Full)
        return unsupported(g, id,
                           "a reduction of an already reduced value is not "
                           "supported yet");
      k.role[id] = Role::Reduced;
      k.drop[id] = !n.keepdim;
      k.phase[id] = k.phase[n.operands[0]] + 1;
      k.reductions.push_back(id);
      break;
    case ir::OpKind::Pointwise: {
      Role r = Role::None;
      int p = 0;
      bool any_keep = false, any_drop = false;
      for (NodeId o : n.operands) {
        if (role_of(o) == Role::Full)
          r = Role::Full;
        else if (role_of(o) == Role::Reduced) {
          if (r == Role::None)
            r = Role::Reduced;
          (k.drop[o] ? any_drop : any_keep) = true;
        }
        p = std::max(p, k.phase[o]);
      }
      // Without keepdim a reduced value broadcasts against others by
      // trailing dims, not per row: that is not this kernel's arithmetic
      // (unless it is 0-d, a reduction over all dims).
      if (!all_dims && any_drop && (r == Role::Full || any_keep))
        return unsupported(g, id,
                           "a reduction with keepdim=false broadcast against "
                           "a tensor of another shape is not supported yet");
      k.role[id] = r;
      k.drop[id] = r == Role::Reduced && any_drop && !any_keep;
      k.phase[id] = p;
      break;
    }
    case ir::OpKind::Composite:
      return unsupported(g, id, "composite op left after decomposition");
    case ir::OpKind::Product:
      return unsupported(g, id, "a matrix product inside a reduction kernel");
    case ir::OpKind::View: // the host makes views (schedule_groups)
      return unsupported(g, id, "a layout op inside a reduction kernel");
    }
  }

  // Passes: a full value of phase p is computed in pass p; a reduction of
  // phase p accumulates in pass p - 1.
  int last = 0;
  for (NodeId id : members) {
    if (k.role[id] == Role::Full)
      last = std::max(last, k.phase[id]);
    if (ir::is_reduction(g.node(id).op))
      last = std::max(last, k.phase[id] - 1);
  }
  k.passes = last + 1;

  for (NodeId out : roots) {
    if (!members.count(out) || g.node(out).op == Op::Input) {
      plan.passthrough.push_back(out);
      continue;
    }
    if (!llvm::is_contained(k.outputs, out))
      k.outputs.push_back(out);
  }
  sort_members(g, members, k, leaves);

  // Which passes need each full value (reverse data flow).
  std::vector<unsigned> need(g.nodes.size(), 0);
  for (NodeId out : k.outputs)
    if (k.role[out] == Role::Full)
      need[out] |= 1u << k.phase[out];
  for (NodeId r : k.reductions)
    need[g.node(r).operands[0]] |= 1u << (k.phase[r] - 1);
  for (auto it = k.nodes.rbegin(); it != k.nodes.rend(); ++it)
    if (k.role[*it] == Role::Full && ir::is_pointwise(g.node(*it).op))
      for (NodeId o : g.node(*it).operands)
        if (k.role[o] == Role::Full)
          need[o] |= need[*it];
  k.need = std::move(need);

  for (NodeId m : k.nodes)
    plan.kernel_of_node[m] = 0;
  plan.kernels.push_back(std::move(k));
  return plan;
}

// Appends `sub`'s kernels to `plan`.
static void append(KernelPlan &plan, KernelPlan sub) {
  const int base = int(plan.kernels.size());
  for (Kernel &k : sub.kernels)
    plan.kernels.push_back(std::move(k));
  for (auto [id, ki] : llvm::enumerate(sub.kernel_of_node))
    if (ki >= 0 && plan.kernel_of_node[id] < 0)
      plan.kernel_of_node[id] = base + ki;
  for (KernelPlan::MultiOutput m : sub.multi) {
    m.fused += base;
    for (int &u : m.unfused)
      u += base;
    plan.multi.push_back(std::move(m));
  }
}

namespace {
// schedule_groups' groups: what one kernel (or a library call) computes.
enum class GroupKind : uint8_t { Reduction, Pointwise, Product };
struct Group {
  GroupKind kind;
  llvm::SmallVector<int64_t, 2> dims; // Reduction
  // Product: the product, the epilogue's last node, its addends (-1:
  // none) and activation.
  NodeId product = -1, tail = -1, bias = -1, addend = -1, act = -1;
};
} // namespace

// Horizontal fusion (Inductor's): pointwise work that later pointwise work
// does not depend on moves into it. A LLaMA block rotates q in a group
// after q's projection and k in one after k's; merged, after both
// projections, the rotations are one kernel. Group i merges into a later
// pointwise group j when j does not depend on i, directly or through a
// group between them; the groups between that do (a cat of i's pieces)
// move after j, in their order. Only groups whose values may share one
// iteration space merge (shapes not known to differ: schedule_pointwise
// makes one kernel of them, or chooses at run time). `home` and `after`
// (group indices) are renumbered to the new order.
static void merge_pointwise_groups(const ir::Graph &g,
                                   const std::set<NodeId> &live,
                                   std::vector<Group> &groups,
                                   std::vector<int> &home,
                                   std::vector<int> &after,
                                   const std::vector<Role> &role) {
  // At most a merge per group: each shrinks the groups by one.
  for (size_t round = 0, most = groups.size(); round < most; ++round) {
    const int n = int(groups.size());
    // The shapes of each group's full values; whether groups i and j hold
    // two that may be equal.
    std::vector<std::vector<const ir::Shape *>> shapes(n);
    for (NodeId id : live)
      if (home[id] >= 0 && home[id] < n && role[id] == Role::Full &&
          !g.node(id).type.scalar)
        shapes[home[id]].push_back(&g.node(id).type.shape);
    auto shapes_may_match = [&](int i, int j) {
      for (const ir::Shape *x : shapes[i])
        for (const ir::Shape *y : shapes[j])
          if (same_shape(*x, *y) != false)
            return true;
      return false;
    };
    // reads[x][y]: group x reads what group y wrote, or a view or a size
    // of it.
    std::vector<std::vector<char>> reads(n, std::vector<char>(n, 0));
    for (NodeId id : live) {
      const int x = home[id];
      if (x < 0 || x >= n)
        continue;
      for (NodeId o : g.node(id).operands)
        for (int y : {home[o], after[o]})
          if (y >= 0 && y < n && y != x)
            reads[x][y] = 1;
    }
    int mi = -1, mj = -1;
    std::vector<char> on_i;
    for (int j = 1; j < n && mi < 0; ++j) {
      if (groups[j].kind != GroupKind::Pointwise)
        continue;
      for (int i = j - 1; i >= 0 && mi < 0; --i) {
        if (groups[i].kind != GroupKind::Pointwise)
          continue;
        on_i.assign(n, 0);
        on_i[i] = 1;
        for (int x = i + 1; x <= j; ++x)
          for (int y = i; y < x && !on_i[x]; ++y)
            on_i[x] = on_i[y] && reads[x][y];
        if (!on_i[j] && shapes_may_match(i, j))
          mi = i, mj = j;
      }
    }
    if (mi < 0)
      return;
    // The new order: before i; between i and j, what does not depend on
    // i; j with i; between, what does; after j.
    std::vector<int> order;
    for (int x = 0; x < n; ++x)
      if (x != mi && !(x > mi && x < mj && on_i[x]))
        order.push_back(x);
    std::vector<int> pos(n, -1);
    std::vector<int> moved;
    for (int x = mi + 1; x < mj; ++x)
      if (on_i[x])
        moved.push_back(x);
    order.insert(llvm::find(order, mj) + 1, moved.begin(), moved.end());
    std::vector<Group> reordered;
    for (auto [p, x] : llvm::enumerate(order)) {
      pos[x] = int(p);
      reordered.push_back(groups[x]);
    }
    pos[mi] = pos[mj];
    for (std::vector<int> *v : {&home, &after})
      for (int &c : *v)
        if (c >= 0 && c < n)
          c = pos[c];
    groups = std::move(reordered);
  }
}

// Graphs one reduction kernel cannot compute (reductions over different
// dims, a reduction of a reduced value, a keepdim=false reduced value
// broadcast against a tensor of another shape) and graphs with matrix
// products run as several kernels, each a group the one-kernel scheduler
// handles or a library GEMM, in an order where a kernel reads only what
// earlier ones wrote (Inductor's scheduler, with reductions and products
// as the fusion boundaries):
//  - a reduction joins the latest group reducing the same dims that does
//    not reduce a value it already reduced (and that its operand's values
//    have been written by), else starts a group;
//  - a product starts a group; the adds and the activation right after it
//    (each the only use of the value before) join it as the GEMM's
//    epilogue: a bias (rank 1), one more addend, then relu or gelu;
//  - a pointwise value belongs to the latest group it depends on, or a
//    pointwise group after it when that is a product, or when it mixes a
//    keepdim=false reduced value with full ones (per row in the group,
//    trailing dims in eager);
//  - a reduced value, or any operand of a product, read by a later group is
//    written to memory by its group and read there; full pointwise values
//    (of the arguments, or of reduced values) are recomputed wherever
//    another kernel needs them;
//  - a layout op (view, transpose, ...) is no kernel's: the host makes it
//    from a tensor in memory (an argument, or a value its group writes)
//    and the groups after that one read it through its strides.
// `live`: the nodes the outputs need.
static llvm::Expected<KernelPlan> schedule_groups(const ir::Graph &g,
                                                  const std::set<NodeId> &live) {
  using Kind = GroupKind;
  const size_t N = g.nodes.size();
  std::vector<int> uses(N, 0);
  for (NodeId id : live)
    for (NodeId o : g.node(id).operands)
      ++uses[o];
  for (NodeId out : g.outputs)
    ++uses[out];
  std::vector<int> home(N, -1); // -1: arguments and what they alone make
  std::vector<Role> role(N, Role::None); // in its home group
  std::vector<bool> drop(N, false);
  // Views: the group after which their base is in memory (-1: an argument).
  std::vector<int> after(N, -1);
  std::vector<Group> groups;
  // (c == groups.size() is the pointwise group of outputs of the arguments
  // alone, after every other.)
  auto is_kind = [&](int c, Kind k) {
    return c >= 0 && c < int(groups.size()) ? groups[c].kind == k
                                            : k == Kind::Pointwise && c >= 0;
  };
  // The pointwise group after group h (the last group, when it is one).
  auto pointwise_after = [&](int h) {
    if (!is_kind(int(groups.size()) - 1, Kind::Pointwise) ||
        int(groups.size()) - 1 < h)
      groups.push_back({Kind::Pointwise});
    return int(groups.size()) - 1;
  };
  // The pointwise group after group f: the last group when it is one and
  // comes after f, else a new one.
  auto pointwise_beyond = [&](int f) {
    if (!is_kind(int(groups.size()) - 1, Kind::Pointwise) ||
        int(groups.size()) - 1 <= f)
      groups.push_back({Kind::Pointwise});
    return int(groups.size()) - 1;
  };
  // o's role for a node computed in group c: written by another group, it
  // is read per element.
  auto role_in = [&](NodeId o, int c) {
    return home[o] >= 0 && home[o] != c ? Role::Full : role[o];
  };
  // Whether pointwise node n extends the epilogue of the product its
  // operand p ends: p's only use, and n an add of an argument or an
  // earlier group's value, or an activation, in p's dtype.
  auto extends_epilogue = [&](NodeId id, const ir::Node &n) -> bool {
    for (NodeId p : n.operands) {
      if (!is_kind(home[p], Kind::Product))
        continue;
      Group &gr = groups[home[p]];
      // attention and cat have no epilogue; a product whose epilogue is
      // full or read elsewhere ends here, but the other operand may be a
      // later product this one is the addend of (`r + linear(m, w)`, r an
      // earlier GEMM's result)
      if (!ir::is_gemm(g.node(gr.product).op))
        continue;
      if (gr.tail != p || uses[p] != 1 || gr.act >= 0 ||
          n.type.dtype != g.node(p).type.dtype || n.type.scalar)
        continue;
      if (ir::is_epilogue_activation(n.op)) {
        gr.act = gr.tail = id;
        return true;
      }
      if (n.op != Op::Add)
        return false;
      NodeId o = n.operands[0] == p ? n.operands[1] : n.operands[0];
      const ir::Node &on = g.node(o);
      if (o == p || on.type.scalar || on.type.dtype != n.type.dtype ||
          (on.op != Op::Input && !(home[o] >= 0 && home[o] < home[p]) &&
           !(ir::is_view(on.op) && after[o] < home[p])))
        continue;
      bool column = on.type.shape.ranked && on.type.shape.dims.size() == 1;
      if (column && gr.bias < 0)
        gr.bias = o;
      else if (gr.addend < 0)
        gr.addend = o;
      else
        continue;
      gr.tail = id;
      return true;
    }
    return false;
  };
  for (NodeId id : live) {
    const ir::Node &n = g.node(id);
    if (n.op == Op::Input) {
      role[id] = Role::Full;
      continue;
    }
    // Read from memory: a value the arguments alone make is written first,
    // by a pointwise group.
    auto write_first = [&](NodeId o) {
      const ir::Node &on = g.node(o);
      if (home[o] < 0 && on.op != Op::Input && !ir::is_view(on.op) &&
          !on.type.scalar)
        home[o] = pointwise_after(-1), role[o] = Role::Full;
    };
    if (n.op == Op::Constant || n.op == Op::ScalarInput)
      continue;
    if (is_host_scalar(g, id)) {
      // Known once the group writing what its sizes read has run (like a
      // view: `after`).
      if (n.op == Op::Size) {
        NodeId x = n.operands[0];
        write_first(x);
        after[id] = ir::is_view(g.node(x).op) ? after[x]
                    : g.node(x).op == Op::Input ? -1
                                                : home[x];
      } else {
        for (NodeId o : n.operands)
          after[id] = std::max(after[id], after[o]);
      }
      continue;
    }
    int h = -1, floor = -1;
    bool full = false;
    for (NodeId o : n.operands) {
      h = std::max(h, home[o]);
      full |= role[o] == Role::Full;
      if (ir::is_view(g.node(o).op) || is_host_scalar(g, o))
        floor = std::max(floor, after[o]);
    }
    switch (ir::op_info(n.op).kind) {
    case ir::OpKind::View: {
      NodeId x = n.operands[0];
      write_first(x);
      after[id] = ir::is_view(g.node(x).op) ? after[x] : home[x];
      for (NodeId o : llvm::ArrayRef<NodeId>(n.operands).drop_front()) {
        // sizes its shape reads; broadcast's tensors: their shapes, known
        // once the group writing each has its space
        const ir::Node &on = g.node(o);
        if (!on.type.scalar && !ir::is_view(on.op) && on.op != Op::Input) {
          write_first(o);
          after[id] = std::max(after[id], home[o]);
        } else {
          after[id] = std::max(after[id], after[o]);
        }
      }
      role[id] = Role::Full;
      break;
    }
    case ir::OpKind::Product: {
      for (NodeId o : n.operands)
        write_first(o);
      Group gr{Kind::Product};
      gr.product = gr.tail = id;
      if (n.op == Op::Linear && !g.node(n.operands[2]).type.scalar)
        gr.bias = n.operands[2];
      groups.push_back(gr);
      home[id] = int(groups.size()) - 1;
      role[id] = Role::Full;
      break;
    }
    case ir::OpKind::Reduction: {
      NodeId x = n.operands[0];
      int pick = -1;
      for (int c = int(groups.size()) - 1;
           c >= std::max({h, floor + 1, 0}) && pick < 0; --c)
        if (is_kind(c, Kind::Reduction) && groups[c].dims == n.dims &&
            role_in(x, c) == Role::Full)
          pick = c;
      if (pick < 0) {
        pick = int(groups.size());
        groups.push_back({Kind::Reduction, n.dims});
      }
      home[id] = pick;
      role[id] = Role::Reduced;
      drop[id] = !n.keepdim;
      break;
    }
    case ir::OpKind::Shape: // computed by whichever kernel reduces those dims
      break;
    case ir::OpKind::Pointwise: {
      if (floor >= 0 && h <= floor) { // reads a view made after group floor
        home[id] = pointwise_beyond(floor);
        role[id] = Role::Full;
        break;
      }
      if (h < 0) {
        role[id] = full ? Role::Full : Role::None;
        break;
      }
      if (extends_epilogue(id, n)) {
        home[id] = h;
        role[id] = Role::Full;
        break;
      }
      if (!is_kind(h, Kind::Reduction)) {
        home[id] = is_kind(h, Kind::Product) ? pointwise_after(h) : h;
        role[id] = Role::Full;
        break;
      }
      Role r = Role::None;
      bool any_keep = false, any_drop = false;
      for (NodeId o : n.operands) {
        Role ro = role_in(o, h);
        if (ro == Role::Full)
          r = Role::Full;
        else if (ro == Role::Reduced) {
          if (r == Role::None)
            r = Role::Reduced;
          (drop[o] && home[o] == h ? any_drop : any_keep) = true;
        }
      }
      if (!groups[h].dims.empty() && any_drop && (r == Role::Full || any_keep)) {
        home[id] = pointwise_after(h);
        role[id] = Role::Full;
        break;
      }
      home[id] = h;
      role[id] = r;
      drop[id] = r == Role::Reduced && any_drop && !any_keep;
      break;
    }
    default:
      return unsupported(g, id, "composite op left after decomposition");
    }
  }

  merge_pointwise_groups(g, live, groups, home, after, role);

  // Each group's roots: the outputs it computes and the values later
  // groups read (found from the last group down). Outputs of the arguments
  // alone go to a pointwise group after every other.
  const int G = int(groups.size());
  std::vector<std::vector<NodeId>> roots(G + 1);
  KernelPlan plan;
  plan.kernel_of_node.assign(N, -1);
  // A view's base, written by its group (the host makes the view).
  auto write_base = [&](NodeId v) {
    NodeId x = v;
    while (ir::is_view(g.node(x).op))
      x = g.node(x).operands[0];
    if (g.node(x).op != Op::Input && !llvm::is_contained(roots[home[x]], x))
      roots[home[x]].push_back(x);
  };
  // What a size reads is written by its group (the host reads its shape).
  for (NodeId id : live)
    if (g.node(id).op == Op::Size)
      write_base(g.node(id).operands[0]);
  for (NodeId out : g.outputs) {
    if (ir::is_view(g.node(out).op)) {
      plan.passthrough.push_back(out);
      write_base(out);
    } else if (g.node(out).op == Op::Input)
      plan.passthrough.push_back(out);
    else if (!llvm::is_contained(roots[home[out] < 0 ? G : home[out]], out))
      roots[home[out] < 0 ? G : home[out]].push_back(out);
  }
  std::vector<std::set<NodeId>> members(G + 1);
  std::vector<Leaves> leaves(G + 1);
  for (int c = G; c >= 0; --c) {
    // A GEMM recomputes nothing: what it reads, it reads from memory.
    const bool recomputes = !is_kind(c, Kind::Product);
    for (size_t r = 0; r < roots[c].size(); ++r) {
      std::vector<NodeId> work{roots[c][r]};
      while (!work.empty()) {
        NodeId id = work.back();
        work.pop_back();
        if (!members[c].insert(id).second || is_host_scalar(g, id))
          continue;
        if (ir::is_view(g.node(id).op)) { // made by the host, read here
          leaves[c].insert(id);
          write_base(id);
          continue;
        }
        // Another group's value: read from memory, unless it is a full
        // pointwise value (not a GEMM's), recomputed here from what it is
        // made of (its group's reduced values, the arguments) rather than
        // written and read back at full size.
        if (home[id] >= 0 && home[id] != c &&
            !(recomputes && !is_kind(home[id], Kind::Product) &&
              role[id] == Role::Full && ir::is_pointwise(g.node(id).op))) {
          leaves[c].insert(id);
          if (!llvm::is_contained(roots[home[id]], id))
            roots[home[id]].push_back(id);
          continue;
        }
        for (NodeId o : g.node(id).operands)
          work.push_back(o);
      }
    }
  }
  for (int c = 0; c <= G; ++c) {
    if (roots[c].empty())
      continue;
    if (is_kind(c, Kind::Product)) {
      const Group &gr = groups[c];
      Kernel k;
      k.kind = Kernel::Kind::Product;
      k.product = gr.product;
      k.bias = gr.bias;
      k.addend = gr.addend;
      k.act = gr.act;
      const ir::Node &pn = g.node(gr.product);
      if (pn.op == Op::Cat) // the tensors; the dim is a constant
        k.inputs.assign(pn.operands.begin(), pn.operands.end() - 1);
      else if (pn.op == Op::Store) // dst (a view of base, or base) and src
        k.inputs = {pn.operands[1], pn.operands[2]};
      else
        k.inputs = {pn.operands[0], pn.operands[1]};
      for (NodeId extra : {gr.bias, gr.addend})
        if (extra >= 0)
          k.inputs.push_back(extra);
      if (pn.op == Op::Attention) { // v, the mask; is_causal and scale
        k.inputs.push_back(pn.operands[2]);
        if (!g.node(pn.operands[3]).type.scalar)
          k.inputs.push_back(pn.operands[3]);
        for (size_t i = 4; i < pn.operands.size(); ++i)
          if (g.node(pn.operands[i]).op != Op::Constant)
            k.scalars.push_back(pn.operands[i]);
      }
      for (NodeId m : members[c])
        if (home[m] == c)
          k.nodes.push_back(m);
      k.outputs = {gr.tail};
      for (NodeId m : k.nodes)
        plan.kernel_of_node[m] = int(plan.kernels.size());
      plan.kernels.push_back(std::move(k));
      continue;
    }
    llvm::Expected<KernelPlan> sub = [&]() -> llvm::Expected<KernelPlan> {
      if (!is_kind(c, Kind::Reduction))
        return schedule_pointwise(g, roots[c], leaves[c]);
      std::vector<NodeId> reductions;
      for (NodeId m : members[c])
        if (home[m] == c && ir::is_reduction(g.node(m).op))
          reductions.push_back(m);
      return schedule_reduction(g, members[c], reductions, roots[c], leaves[c]);
    }();
    if (!sub)
      return sub.takeError();
    append(plan, std::move(*sub));
  }
  return plan;
}

// Which cats attention reads in pieces (KernelPlan::pieces_read): its key
// or value operand, a cat along the key dim (-2) of tensors of its dtype,
// used by nothing else (or also a graph output, which the attention kernel
// writes), when the attention has no mask and is not causal (the case of
// the runtime's decode kernels; with a mask the runtime would join the
// pieces first, no better than the cat).
// Whether cat node cn may be along attention's key dim: -2, or a dim
// counted from the front that is the key dim at the cat's rank (when the
// rank is unknown here, the runtime checks it and joins the pieces
// itself where it is not).
static bool maybe_key_dim(const ir::Graph &g, const ir::Node &cn) {
  const int64_t d = ir::cat_dim(g, cn);
  if (d == -2)
    return true;
  if (d < 0)
    return false;
  return !cn.type.shape.ranked || d == int64_t(cn.type.shape.dims.size()) - 2;
}

static void plan_attention_pieces(const ir::Graph &g, KernelPlan &plan) {
  const std::vector<int> uses = g.use_counts();
  for (const Kernel &k : plan.kernels) {
    if (k.kind != Kernel::Kind::Product ||
        g.node(k.product).op != Op::Attention)
      continue;
    const ir::Node &a = g.node(k.product);
    const ir::Node &causal = g.node(a.operands[4]);
    if (!g.node(a.operands[3]).type.scalar || causal.op != Op::Constant ||
        causal.constant != 0)
      continue;
    for (int i : {1, 2}) {
      const NodeId c = a.operands[i];
      const ir::Node &cn = g.node(c);
      if (cn.op != Op::Cat || cn.type.dtype != a.type.dtype)
        continue;
      if (!maybe_key_dim(g, cn))
        continue;
      const int by_attention = int(llvm::count(
          llvm::ArrayRef<NodeId>(a.operands).slice(1, 2), c));
      if (uses[c] != by_attention + int(llvm::count(g.outputs, c)))
        continue;
      if (llvm::any_of(llvm::ArrayRef<NodeId>(cn.operands).drop_back(),
                       [&](NodeId t) { return g.node(t).type.dtype != cn.type.dtype; }))
        continue;
      if (!plan.read_in_pieces(c))
        plan.pieces_read.push_back(c);
    }
  }
}

// Which cat tensors kernels write into the cat's result (KernelPlan::
// into_cat): a pointwise kernel's output or another cat's result, of the
// cat's dtype, that nothing else uses (not an output, not read by another
// kernel), once in the cat; not a cat attention reads in pieces.
// Whether a pointwise kernel of the plan writes value id.
static bool written_by_pointwise(const KernelPlan &plan, NodeId id) {
  return llvm::any_of(plan.kernels, [&](const Kernel &k) {
    return k.kind == Kernel::Kind::Pointwise && llvm::is_contained(k.outputs, id);
  });
}

static void plan_cat_pieces(const ir::Graph &g, KernelPlan &plan) {
  plan.into_cat.assign(g.nodes.size(), -1);
  const std::vector<int> uses = g.use_counts();
  for (const Kernel &k : plan.kernels) {
    if (k.kind != Kernel::Kind::Product || g.node(k.product).op != Op::Cat ||
        plan.read_in_pieces(k.product))
      continue;
    const ir::Node &cat = g.node(k.product);
    for (NodeId t : k.inputs) {
      const ir::Node &tn = g.node(t);
      if (uses[t] != 1 || llvm::is_contained(g.outputs, t) ||
          tn.type.dtype != cat.type.dtype ||
          llvm::count(cat.operands, t) != 1)
        continue;
      if (written_by_pointwise(plan, t) || tn.op == Op::Cat)
        plan.into_cat[t] = k.product;
    }
  }
}

// Which stores' sources their kernels write in place
// (KernelPlan::into_store).
static void plan_store_targets(const ir::Graph &g, KernelPlan &plan) {
  plan.into_store.assign(g.nodes.size(), -1);
  const std::vector<int> uses = g.use_counts();
  for (const Kernel &k : plan.kernels) {
    if (k.kind != Kernel::Kind::Product || g.node(k.product).op != Op::Store)
      continue;
    const ir::Node &st = g.node(k.product);
    const NodeId dst = st.operands[1], src = st.operands[2];
    NodeId base = dst;
    while (ir::is_view(g.node(base).op))
      base = g.node(base).operands[0];
    // Computed by a pointwise kernel, or a cat whose pieces kernels write
    // (allocated before the first launch, as the destination).
    const bool pointwise = written_by_pointwise(plan, src);
    const bool cat = g.node(src).op == Op::Cat && plan.cat_in_place(src) &&
                     !plan.read_in_pieces(src);
    if (!(pointwise || cat) || g.node(base).op != Op::Input || uses[src] != 1 ||
        llvm::is_contained(g.outputs, src) || plan.cat_of(src) >= 0 ||
        g.node(src).type.dtype != g.node(dst).type.dtype)
      continue;
    plan.into_store[src] = k.product;
  }
}

// A pointwise kernel of more operands than kiln::kMaxPointwiseOperands is
// an error at its first output (the function stays eager).
static llvm::Expected<KernelPlan> check_widths(const ir::Graph &g,
                                               llvm::Expected<KernelPlan> plan) {
  if (!plan)
    return plan;
  for (const Kernel &k : plan->kernels)
    if (k.kind == Kernel::Kind::Pointwise &&
        k.inputs.size() + k.outputs.size() > size_t(kMaxPointwiseOperands))
      return unsupported(g, k.outputs.front(),
                         "a pointwise kernel of " +
                             std::to_string(k.inputs.size() + k.outputs.size()) +
                             " tensors (at most " +
                             std::to_string(kMaxPointwiseOperands) +
                             ") is not supported yet");
  return plan;
}

static llvm::Expected<KernelPlan> schedule_unchecked(const ir::Graph &g);

llvm::Expected<KernelPlan> schedule(const ir::Graph &g) {
  return check_widths(g, schedule_unchecked(g));
}

static llvm::Expected<KernelPlan> schedule_unchecked(const ir::Graph &g) {
  std::set<NodeId> members;
  for (NodeId out : g.outputs) {
    std::set<NodeId> c = closure(g, out);
    members.insert(c.begin(), c.end());
  }
  // size(x, d) of a tensor the call computes: the host reads x's shape
  // once a kernel has written x, so x is computed and in memory, and
  // what reads the size runs in a later kernel (schedule_groups).
  bool sizes_of_values = false;
  for (NodeId id : std::vector<NodeId>(members.begin(), members.end()))
    for (NodeId s : host_sizes(g, id)) {
      NodeId x = g.node(s).operands[0];
      if (g.node(x).op == Op::Input)
        continue;
      sizes_of_values = true;
      members.insert(s);
      std::set<NodeId> c = closure(g, x);
      members.insert(c.begin(), c.end());
    }
  std::vector<NodeId> reductions;
  for (NodeId m : members) {
    if (ir::is_product(g.node(m).op) || ir::is_view(g.node(m).op) ||
        sizes_of_values) {
      llvm::Expected<KernelPlan> plan = schedule_groups(g, members);
      if (plan) {
        plan_attention_pieces(g, *plan);
        plan_cat_pieces(g, *plan);
        plan_store_targets(g, *plan);
      }
      return plan;
    }
    if (ir::is_reduction(g.node(m).op))
      reductions.push_back(m);
  }
  if (reductions.empty())
    return schedule_pointwise(g, g.outputs);
  // One kernel when one can compute everything; else several.
  llvm::Expected<KernelPlan> one =
      schedule_reduction(g, members, reductions, g.outputs);
  if (one)
    return one;
  llvm::consumeError(one.takeError());
  return schedule_groups(g, members);
}

void plan_in_place(const ir::Graph &g, const std::vector<int> &into,
                   KernelPlan &plan) {
  if (into.size() != g.outputs.size())
    return;
  // A reduction kernel checks its operands' layout just before its launch:
  // a failure there runs the original body, which must see the arguments
  // as they were. Only calls without one write in place.
  for (const Kernel &k : plan.kernels)
    if (k.kind != Kernel::Kind::Pointwise)
      return;
  // A kernel writing through a tensor could change what a view of it
  // reads (in another kernel, or this one at other elements).
  for (const ir::Node &n : g.nodes)
    if (ir::is_view(n.op))
      return;
  const int nk = int(plan.kernels.size());
  // Whether kernels a and b run in the same call: not the multi-output
  // kernel and one it replaces.
  auto together = [&](int a, int b) {
    if (a == b)
      return false;
    for (const KernelPlan::MultiOutput &m : plan.multi)
      if ((a == m.fused && llvm::is_contained(m.unfused, b)) ||
          (b == m.fused && llvm::is_contained(m.unfused, a)))
        return false;
    return true;
  };
  for (int ki = 0; ki < nk; ++ki) {
    Kernel &k = plan.kernels[ki];
    k.write_into.clear();
    if (k.kind != Kernel::Kind::Pointwise)
      continue;
    for (auto [y, o] : llvm::enumerate(k.outputs)) {
      int result = -1, copies = 0;
      for (auto [j, out] : llvm::enumerate(g.outputs))
        if (out == o && into[j] != -1) {
          result = int(j);
          ++copies;
        }
      if (copies != 1)
        continue;
      int input = -1;
      bool read_elsewhere = false;
      for (NodeId a : g.args()) {
        const ir::Node &n = g.node(a);
        if (n.op != Op::Input || n.arg_index != into[result])
          continue;
        auto pos = llvm::find(k.inputs, a);
        if (pos != k.inputs.end())
          input = int(pos - k.inputs.begin());
        for (int kb = 0; kb < nk; ++kb)
          read_elsewhere |= together(ki, kb) &&
                            llvm::is_contained(plan.kernels[kb].inputs, a);
      }
      if (!read_elsewhere)
        k.write_into.push_back({int(y), result, input});
    }
  }
}

static std::string loc_str(const ir::Loc &l) {
  if (!l.valid())
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << l.file << ":" << l.line << ":" << l.col;
  return s;
}

std::string describe(const ir::Graph &g, const KernelPlan &plan) {
  std::vector<std::string> names = ir::value_names(g);
  auto value_name = [&](NodeId id) {
    const ir::Node &n = g.node(id);
    return n.op == Op::Constant ? ir::constant_text(n) : names[id];
  };
  std::string s;
  llvm::raw_string_ostream os(s);
  size_t nk = plan.launched();
  os << "plan for @" << g.name << ": " << nk << " kernel" << (nk == 1 ? "" : "s");
  if (!plan.multi.empty())
    os << " (" << plan.launched_apart() << " when the outputs' shapes differ)";
  os << "\n";
  for (auto [ki, k] : llvm::enumerate(plan.kernels)) {
    if (k.kind == Kernel::Kind::Product &&
        g.node(k.product).op == Op::Cat) {
      const ir::Node &pn = g.node(k.product);
      os << "kernel " << ki << ": cat ";
      for (size_t i = 0; i + 1 < pn.operands.size(); ++i)
        os << (i ? ", " : "") << value_name(pn.operands[i]);
      os << " along dim " << ir::cat_dim(g, pn);
      auto names = [&](const std::vector<NodeId> &ts) {
        std::string s;
        for (auto [i, t] : llvm::enumerate(ts))
          s += (i ? ", " : "") + value_name(t);
        return s;
      };
      const std::string copied = names(plan.cat_tensors(k, false)),
                        in_place = names(plan.cat_tensors(k, true));
      if (plan.read_in_pieces(k.product)) {
        os << (llvm::is_contained(g.outputs, k.product)
                   ? " (no launch: attention reads the pieces and writes the "
                     "result"
                   : " (no launch: attention reads the pieces; not in memory");
        if (ir::cat_dim(g, pn) >= 0 && !pn.type.shape.ranked)
          os << "; when dim " << ir::cat_dim(g, pn)
             << " is not the key dim, attention joins them first";
        os << ")";
      }
      else if (in_place.empty())
        os << " (the runtime's copies)";
      else if (copied.empty())
        os << " (no launch: kernels wrote every piece)";
      else
        os << " (the runtime copies " << copied << "; kernels wrote "
           << in_place << ")";
      if (std::string l = loc_str(pn.loc); !l.empty())
        os << "    (" << l << ")";
      os << "\n  writes " << value_name(k.outputs[0]) << "\n";
      continue;
    }
    if (k.kind == Kernel::Kind::Product && g.node(k.product).op == Op::Store) {
      const ir::Node &pn = g.node(k.product);
      os << "kernel " << ki << ": copy " << value_name(pn.operands[2])
         << " into " << value_name(pn.operands[1]) << ", of argument "
         << value_name(pn.operands[0])
         << (plan.store_of(pn.operands[2]) >= 0
                 ? " (no copy where the kernel computing it wrote it there)"
                 : " (the runtime's copy_)");
      if (std::string l = loc_str(pn.loc); !l.empty())
        os << "    (" << l << ")";
      os << "\n  writes " << value_name(k.outputs[0])
         << " in place: what reads it later runs after\n";
      continue;
    }
    if (k.kind == Kernel::Kind::Product) {
      const ir::Node &pn = g.node(k.product);
      const bool gemm = ir::is_gemm(pn.op);
      os << "kernel " << ki << ": " << ir::op_info(pn.op).name << " "
         << value_name(pn.operands[0]) << ", " << value_name(pn.operands[1]);
      if (!gemm)
        os << ", " << value_name(pn.operands[2]);
      os << (gemm ? " (a library GEMM)" : " (the runtime's fused attention)");
      std::string l = loc_str(pn.loc);
      if (!l.empty())
        os << "    (" << l << ")";
      if (!gemm) {
        const ir::Node &mask = g.node(pn.operands[3]);
        os << "\n  mask: "
           << (mask.type.scalar ? std::string("none")
                                : value_name(pn.operands[3]) + " (" +
                                      (mask.type.dtype == DType::b8
                                           ? "b8, false masks out"
                                           : "added to the scores") +
                                      ")");
        for (int i : {1, 2})
          if (NodeId c = pn.operands[i]; plan.read_in_pieces(c) &&
                                         (i == 1 || pn.operands[1] != c)) {
            const ir::Node &cn = g.node(c);
            os << "\n  reads " << (i == 1 ? "keys " : "values ")
               << value_name(c) << " in pieces: ";
            for (size_t j = 0; j + 1 < cn.operands.size(); ++j)
              os << (j ? ", " : "") << value_name(cn.operands[j]);
          }
        os << "\n  writes " << value_name(k.outputs[0]) << "\n";
        continue;
      }
      os << "\n  epilogue:";
      if (k.bias < 0 && k.addend < 0 && k.act < 0)
        os << " none";
      if (k.bias >= 0)
        os << " + " << value_name(k.bias)
           << " (the GEMM's bias when one value per column)";
      if (k.addend >= 0)
        os << " + " << value_name(k.addend) << " (as beta * C)";
      if (k.act >= 0)
        os << ", then " << ir::op_info(g.node(k.act).op).name;
      os << "\n  writes " << value_name(k.outputs[0]) << "\n";
      continue;
    }
    bool red = k.kind == Kernel::Kind::Reduction;
    int read = 0, written = 0;
    for (NodeId i : k.inputs)
      read += element_size(g.node(i).type.dtype);
    for (NodeId o : k.outputs)
      if (!red || k.role[o] == Role::Full)
        written += element_size(g.node(o).type.dtype);
    os << "kernel " << ki << ": " << (red ? "reduction" : "pointwise") << ", "
       << k.nodes.size() << " op" << (k.nodes.size() == 1 ? "" : "s")
       << " fused; per element reads " << read << " B (" << k.inputs.size()
       << " tensor" << (k.inputs.size() == 1 ? "" : "s") << "), writes "
       << written << " B\n";
    if (red) {
      os << "  reduces dims=[";
      for (auto [i, d] : llvm::enumerate(k.dims))
        os << (i ? ", " : "") << d;
      os << "]" << (k.dims.empty() ? " (all)" : "") << " in " << k.passes
         << " pass" << (k.passes == 1 ? "" : "es") << " over the rows\n";
    } else {
      os << "  iteration space: broadcast of";
      for (NodeId i : k.inputs)
        os << " " << value_name(i);
      os << "\n";
      if (const KernelPlan::MultiOutput *m = plan.multi_of(int(ki))) {
        os << "  runs when every output has that shape; else kernels";
        for (auto [i, u] : llvm::enumerate(m->unfused))
          os << (i ? ", " : " ") << u;
        os << "\n";
      } else {
        for (const KernelPlan::MultiOutput &m : plan.multi)
          if (llvm::is_contained(m.unfused, int(ki)))
            os << "  runs instead of kernel " << m.fused
               << " when the outputs' shapes differ\n";
      }
    }
    for (NodeId m : k.nodes) {
      const ir::Node &n = g.node(m);
      os << "  " << value_name(m) << " = " << ir::op_info(n.op).name;
      for (auto [oi, o] : llvm::enumerate(n.operands))
        os << (oi ? ", " : " ") << value_name(o);
      if (red)
        os << "  [" << (k.role[m] == Role::Full      ? "full, pass "
                        : k.role[m] == Role::Reduced ? "per row, after pass "
                                                     : "scalar, pass ")
           << (k.role[m] == Role::Reduced ? k.phase[m] - 1 : k.phase[m]) << "]";
      std::string l = loc_str(n.loc);
      if (!l.empty())
        os << "    (" << l << ")";
      os << "\n";
    }
    os << "  writes";
    for (auto [y, o] : llvm::enumerate(k.outputs)) {
      os << " " << value_name(o);
      if (NodeId c = plan.cat_of(o); c >= 0)
        os << " (into its piece of " << value_name(c) << ")";
      if (NodeId st = plan.store_of(o); st >= 0)
        os << " (into " << value_name(g.node(st).operands[1])
           << ", the copy_'s destination, where the shapes agree)";
      if (llvm::any_of(k.write_into, [&](const Kernel::WriteInto &w) {
            return w.output == int(y);
          }))
        os << " (in place when it can)";
    }
    os << "\n";
  }
  for (NodeId p : plan.passthrough)
    os << "output " << value_name(p) << ": returned as is (no kernel)\n";
  return s;
}

} // namespace kiln::sched
