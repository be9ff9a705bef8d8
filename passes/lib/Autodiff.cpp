// autodiff: the backward graph of a captured function, derived at build time
// (AOTAutograd's joint graph, backward half). See passes.h.
//
// The backward graph takes the forward's arguments and the gradient of its
// one output, recomputes what the derivatives need from the arguments (the
// forward's nodes, copied; dce drops what no derivative reads) and returns
// the gradients of the tensor arguments that have one. Each node's
// derivative is its kiln/ops.def formula (KILN_DERIVATIVE, the one the eager
// autograd evaluates), instantiated in reverse topological order; gradients
// reaching a node from several uses are added.
//
// Shapes are not known at build time, so a gradient may be wider than the
// value it belongs to (a value broadcast by its use). Pointwise derivatives
// do not mind (summing over broadcast dims commutes with them); the
// derivative of a reduction or a row op does, and gets its gradient exactly
// shaped: a class analysis proves which values have one shape (unary ops,
// row ops, binary ops of one class; a keepdim reduction broadcast back into
// its operand's class), and a reduction whose gradient has its operand's
// shape first sums it over the reduced dims. Where neither holds, the
// backward is not derived (an error naming the node), and the eager
// autograd records instead. Gradients of arguments may stay wide: autograd
// sums them to the argument's shape and converts them to its dtype.
#include <kiln/passes/passes.h>
#include <kiln/passes/text.h>

#include "ReduceDims.h"
#include "Rewrite.h"
#include "RewriteUtil.h"

#include <map>
#include <set>
#include <tuple>

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// The derivative formula of each op of kiln/ops.def ("" for none, and for
// the ops without an entry).
const char *derivative_of(Op op) {
  struct Entry {
    Op op;
    const char *formula;
  };
  static const Entry entries[] = {
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition)
#define KILN_DERIVATIVE(Name, formula) {Op::Name, formula},
#include <kiln/ops.def>
  };
  for (const Entry &e : entries)
    if (e.op == op)
      return e.formula;
  return nullptr;
}

llvm::Error error_at(const Graph &g, NodeId id, const std::string &why) {
  const Node &n = g.node(id);
  return llvm::make_error<PassError>(id, n.loc, n.name, why);
}

bool is_name_char(char c) {
  return std::isalnum((unsigned char)c) || c == '_';
}

// `text` with every whole `%from` replaced by `%to`.
std::string rename(const std::string &text, const std::string &from,
                   const std::string &to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t at = text.find("%" + from, pos);
    if (at == std::string::npos)
      return out + text.substr(pos);
    size_t end = at + 1 + from.size();
    out += text.substr(pos, at - pos);
    if (end < text.size() && is_name_char(text[end]))
      out += text.substr(at, end - at);
    else
      out += "%" + to;
    pos = end;
  }
}

// A derivative formula as graphs, one per operand's gradient: arguments %a
// %b %c %d %r %g (the operands, the result, its gradient), result %g<x>.
// Aliases (`%ga = %g`) are resolved by renaming, as KIR has none.
struct Formula {
  std::vector<std::optional<Graph>> grads; // per operand a..d
};

llvm::Expected<Formula> parse_formula(Op op, llvm::StringRef text,
                                      const Node &n) {
  // $dims, as the node has them.
  std::string body;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("$dims")) {
      body += dims_text(n.dims);
      i += 4;
    } else {
      body += text[i];
    }
  }
  std::vector<std::string> stmts;
  std::map<std::string, std::string> alias;
  llvm::SmallVector<llvm::StringRef, 16> parts;
  llvm::StringRef(body).split(parts, ';', -1, false);
  for (llvm::StringRef p : parts) {
    std::string s = p.trim().str();
    for (const auto &[from, to] : alias)
      s = rename(s, from, to);
    auto [lhs, rhs] = llvm::StringRef(s).split('=');
    lhs = lhs.trim();
    rhs = rhs.trim();
    if (rhs.starts_with("%") && !rhs.contains(' ')) {
      alias[lhs.drop_front().str()] = rhs.drop_front().str();
      continue;
    }
    stmts.push_back(s);
  }
  Formula f;
  const std::string head =
      "graph @derivative(%a: f32[*], %b: f32[*], %c: f32[*], %d: f32[*], "
      "%r: f32[*], %g: f32[*]) {\n";
  std::string joined;
  for (const std::string &s : stmts)
    joined += s + "\n";
  for (const char *o : {"ga", "gb", "gc", "gd"}) {
    std::string result = o;
    if (auto it = alias.find(o); it != alias.end())
      result = it->second;
    else if (body.find(std::string("%") + o + " ") == std::string::npos &&
             body.find(std::string("%") + o + "=") == std::string::npos) {
      f.grads.emplace_back();
      continue;
    }
    auto parsed = parse_kir(head + joined + "return %" + result + "\n}\n",
                            std::string("<derivative of ") +
                                op_info(op).name + ">");
    if (!parsed)
      return parsed.takeError();
    f.grads.emplace_back(std::move((*parsed)[0].graph));
  }
  return f;
}

// Which values provably have one shape (see the file comment).
struct Classes {
  std::vector<int> cls;   // per node: its class, -1 for scalars
  std::vector<int> inside; // per class: the class it broadcasts into, or -1
  // Reductions by (operand's class, dims, keepdim): one shape.
  std::map<std::tuple<int, std::vector<int64_t>, bool>, int> reduced;
  // Per class: an argument of that shape (-1: none), or the class and dims
  // it is a reduction of (base -1: none).
  std::vector<NodeId> rep;
  struct Reduction {
    int base = -1;
    std::vector<int64_t> dims;
    bool keepdim = false;
  };
  std::vector<Reduction> of;
  int fresh(int into = -1) {
    rep.push_back(-1);
    of.emplace_back();
    inside.push_back(into);
    return int(inside.size()) - 1;
  }
  // The class of a value made of values of classes `cs` by broadcasting:
  // theirs when they agree or all broadcast into one of them, else new.
  int join(llvm::ArrayRef<int> cs) {
    int big = -1;
    for (int c : cs)
      if (c >= 0 && (big < 0 || inside[big] == c))
        big = c;
    if (big < 0)
      return -1;
    for (int c : cs)
      if (c >= 0 && c != big && inside[c] != big)
        return fresh();
    return big;
  }
};

// Union-find over the nodes: a pointwise op and its tensor operands.
struct Components {
  std::vector<NodeId> parent;
  NodeId find(NodeId a) {
    while (parent[a] != a)
      a = parent[a] = parent[parent[a]];
    return a;
  }
};

// With `assume`, tensor arguments that meet in pointwise ops (directly or
// through other pointwise ops) are taken to have one shape; `same` gets
// each such argument's arg_index paired with its group's first.
Classes classify(const Graph &g, bool assume,
                 std::vector<std::pair<int, int>> *same) {
  Classes k;
  k.cls.assign(g.nodes.size(), -1);
  Components comp;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    comp.parent.push_back(NodeId(i));
  if (assume)
    for (auto [i, n] : llvm::enumerate(g.nodes))
      if (!n.type.scalar && is_pointwise(n.op))
        for (NodeId o : n.operands)
          if (!g.node(o).type.scalar)
            comp.parent[comp.find(o)] = comp.find(NodeId(i));
  std::map<NodeId, NodeId> first_input; // component -> its first argument
  for (auto [i, n] : llvm::enumerate(g.nodes)) {
    if (n.type.scalar)
      continue;
    if (n.op == Op::Input && assume) {
      auto [it, fresh] = first_input.try_emplace(comp.find(NodeId(i)), i);
      if (fresh) {
        k.cls[i] = k.fresh();
      } else {
        k.cls[i] = k.cls[it->second];
        same->push_back({n.arg_index, g.node(it->second).arg_index});
      }
      continue;
    }
    const OpInfo &info = op_info(n.op);
    llvm::SmallVector<int, 3> ops;
    for (NodeId o : n.operands)
      ops.push_back(k.cls[o]);
    if (is_pointwise(n.op) || n.op == Op::Cast || n.op == Op::CastLike ||
        n.op == Op::Contiguous)
      k.cls[i] = n.op == Op::CastLike || n.op == Op::Contiguous
                     ? ops[0]
                     : k.join(ops);
    else if (info.kind == OpKind::Composite &&
             info.form != CompositeForm::REDUCE)
      k.cls[i] = ops[0]; // a row op or a norm: x's shape
    else if (is_reduction(n.op) || info.kind == OpKind::Composite) {
      std::vector<int64_t> dims(n.dims.begin(), n.dims.end());
      auto [it, fresh] = k.reduced.try_emplace({ops[0], dims, n.keepdim}, 0);
      if (fresh) {
        it->second = k.fresh(n.keepdim ? ops[0] : -1);
        k.of[size_t(it->second)] = {ops[0], dims, n.keepdim};
      }
      k.cls[i] = it->second;
    }
    else
      k.cls[i] = k.fresh();
    if (k.cls[i] < 0) // a tensor op of scalars only cannot be; be safe
      k.cls[i] = k.fresh();
  }
  for (auto [i, n] : llvm::enumerate(g.nodes))
    if (n.op == Op::Input && k.cls[i] >= 0 && k.rep[size_t(k.cls[i])] < 0)
      k.rep[size_t(k.cls[i])] = NodeId(i);
  return k;
}

class Deriver {
public:
  Deriver(const Graph &f, bool assume, llvm::ArrayRef<int> wrt)
      : f_(f), b_(f.name + "_backward"), rw_(b_), assume_(assume),
        wrt_(wrt.begin(), wrt.end()) {}

  llvm::Expected<Backward> run() {
    if (f_.outputs.size() != 1)
      return fail_whole("it returns " + std::to_string(f_.outputs.size()) +
                        " values (a compiled backward takes one output)");
    const NodeId out = f_.outputs[0];
    if (f_.node(out).type.scalar || !is_floating(f_.node(out).type.dtype))
      return error_at(f_, out,
                      "the output is not a floating tensor: it has no "
                      "gradient");
    // The forward's nodes, as they are: what the derivatives read.
    for (const Node &n : f_.nodes)
      b_.add(n);
    const NodeId grad = b_.input(f_.num_args(), f_.node(out).type, "grad",
                                 f_.node(out).loc);
    std::vector<std::pair<int, int>> same;
    k_ = classify(f_, assume_, &same);
    gcls_.assign(f_.nodes.size(), kUnset);
    narrow_.assign(f_.nodes.size(), false);
    gsum_.assign(f_.nodes.size(), -1);
    gcls_[out] = k_.cls[out];
    gsum_[out] = grad;
    std::map<int, NodeId> arg_grads;
    for (NodeId id = NodeId(f_.nodes.size()) - 1; id >= 0; --id) {
      if (gsum_[id] < 0)
        continue;
      const Node &n = f_.node(id);
      rw_.loc = n.loc;
      if (n.op == Op::Input) {
        arg_grads[n.arg_index] = gsum_[id];
        continue;
      }
      if (llvm::Error e = derive(id))
        return std::move(e);
    }
    if (arg_grads.empty())
      return fail_whole("no tensor argument has a gradient");
    // A norm's weight and bias: their gradients are as wide as the norm's
    // input, summed here over its leading dim (in a kernel that reads what
    // the gradient is made of, not a wide tensor written and read again);
    // autograd sums any further leading dims. Valid when the input has 2 or
    // more dims: checked. Only for norms of one input shape (one class):
    // the column kernel takes every such sum, which must share its shape.
    std::set<int> lead_classes;
    for (auto [in, lead] : leading_)
      if (lead >= 0)
        lead_classes.insert(lead_class_[in]);
    for (auto &[arg, gid] : arg_grads) {
      if (lead_classes.size() != 1)
        break;
      NodeId in = -1;
      for (NodeId id = 0; id < NodeId(f_.nodes.size()); ++id)
        if (f_.node(id).op == Op::Input && f_.node(id).arg_index == arg)
          in = id;
      auto it = leading_.find(in);
      if (it == leading_.end() || it->second < 0)
        continue;
      Node attrs;
      attrs.dims = {0};
      llvm::Expected<NodeId> s = rw_.emit(Op::Sum, {gid}, &attrs);
      if (!s)
        return s.takeError();
      gid = *s;
      if (!llvm::is_contained(rank2_, it->second))
        rank2_.push_back(it->second);
    }
    Backward bw;
    bw.same_shape = std::move(same);
    bw.rank2 = rank2_;
    for (auto [arg, gid] : arg_grads) {
      b_.output(gid);
      bw.grad_of.push_back(arg);
    }
    return save_reductions(b_.take(), std::move(bw));
  }

  // The partition: the forward's reductions the backward reads are saved
  // (one value per row or column: the forward's kernels write them beside
  // the output), its matrix products (a GEMM costs more to run again than
  // its result costs to keep) and their operands (the forward writes them
  // for the GEMM anyway); every other value it reads is recomputed from the
  // arguments. Each saved value becomes an argument of the backward after
  // %grad (its forward node stays, unused, for its type).
  Backward save_reductions(Graph g, Backward bw) {
    const NodeId nf = NodeId(f_.nodes.size());
    std::vector<bool> live(g.nodes.size(), false);
    for (NodeId o : g.outputs)
      live[o] = true;
    for (NodeId id = NodeId(g.nodes.size()) - 1; id >= 0; --id)
      if (live[id])
        for (NodeId o : g.nodes[id].operands)
          live[o] = true;
    // A matrix product's operands: the forward writes them for its GEMM.
    std::vector<bool> gemm_operand(nf, false);
    for (NodeId id = 0; id < nf; ++id)
      if (is_gemm(g.nodes[id].op))
        for (NodeId o : g.nodes[id].operands)
          gemm_operand[o] = true;
    std::vector<NodeId> saved;
    for (NodeId id = 0; id < nf; ++id) {
      const Node &n = g.nodes[id];
      const OpInfo &info = op_info(n.op);
      if (live[id] && !n.type.scalar && n.op != Op::Input &&
          n.op != Op::Constant && n.op != Op::ScalarInput &&
          (info.kind == OpKind::Reduction || is_gemm(n.op) ||
           gemm_operand[id] ||
           (info.kind == OpKind::Composite &&
            info.form == CompositeForm::REDUCE)))
        saved.push_back(id);
    }
    GraphBuilder b(g.name);
    b.graph().assumptions = g.assumptions;
    std::vector<NodeId> map(g.nodes.size(), -1), orig(g.nodes.size(), -1);
    int next_arg = f_.num_args() + 1;
    for (NodeId id = 0; id < NodeId(g.nodes.size()); ++id) {
      orig[id] = map[id] = copy_node(b, g.nodes[id], map);
      if (llvm::is_contained(saved, id)) {
        const Node &n = g.nodes[id];
        map[id] = b.input(next_arg++, n.type,
                          n.name.empty() ? "saved" + std::to_string(id)
                                         : n.name + "_saved",
                          n.loc);
      }
    }
    for (NodeId o : g.outputs)
      b.output(map[o]);
    bw.graph = b.take();
    bw.saved = saved; // forward node ids: the forward's ids are g's
    bw.dtype_from.push_back({f_.num_args(), orig[f_.outputs[0]]});
    for (auto [k, id] : llvm::enumerate(saved))
      bw.dtype_from.push_back({f_.num_args() + 1 + int(k), orig[id]});
    return bw;
  }

private:
  static constexpr int kUnset = -2, kUnknown = -3;

  llvm::Error fail_whole(const std::string &why) {
    return llvm::make_error<PassError>(-1, Loc{}, f_.name, why);
  }

  // The number of elements of a value of class c over `dims` (all when
  // empty), from the shapes of arguments (size nodes, which the host reads):
  // -1 when the classes do not say.
  NodeId count_of(int c, llvm::ArrayRef<int64_t> dims) {
    if (c < 0)
      return -1;
    auto size = [&](NodeId x, std::optional<int64_t> d) -> NodeId {
      Node attrs;
      if (d)
        attrs.dims = {*d};
      llvm::Expected<NodeId> s = rw_.emit(Op::Size, {x}, &attrs);
      if (!s) {
        llvm::consumeError(s.takeError());
        return -1;
      }
      return *s;
    };
    auto product = [&](NodeId a, NodeId b) -> NodeId {
      if (a < 0 || b < 0)
        return -1;
      llvm::Expected<NodeId> m = rw_.emit(Op::Mul, {a, b});
      if (!m) {
        llvm::consumeError(m.takeError());
        return -1;
      }
      return *m;
    };
    if (NodeId x = k_.rep[size_t(c)]; x >= 0) {
      if (dims.empty())
        return size(x, std::nullopt);
      NodeId n = size(x, dims[0]);
      for (int64_t d : dims.drop_front())
        n = product(n, size(x, d));
      return n;
    }
    const Classes::Reduction &r = k_.of[size_t(c)];
    if (r.base < 0 || !dims.empty())
      return -1;
    // All of a reduction's elements: its operand's, over the dims it keeps.
    if (r.dims.empty())
      return rw_.constant(1.0, DType::i64);
    NodeId whole = count_of(r.base, {}), over = count_of(r.base, r.dims);
    if (whole < 0 || over < 0)
      return -1;
    llvm::Expected<NodeId> q = rw_.emit(Op::Div, {whole, over});
    if (!q) {
      llvm::consumeError(q.takeError());
      return -1;
    }
    return *q;
  }

  // Adds gradient `gid` (of class `c`; `narrow`: it may broadcast to that
  // shape rather than have it) to value `o`'s.
  // `lead`: the gradient is a norm's weight's or bias's, as wide as the
  // norm's input, whose rank argument `lead` gives.
  llvm::Error contribute(NodeId o, NodeId gid, int c, bool narrow = false,
                         int lead = -1) {
    if (f_.node(o).type.scalar || !is_floating(f_.node(o).type.dtype))
      return llvm::Error::success();
    if (f_.node(o).op == Op::Input && !wrt_.empty() &&
        !llvm::is_contained(wrt_, f_.node(o).arg_index))
      return llvm::Error::success(); // no gradient wanted
    if (f_.node(o).op == Op::Input) {
      auto [it, fresh] = leading_.try_emplace(o, lead);
      if (!fresh && it->second != lead)
        it->second = -1;
    }
    int &have = gcls_[o];
    if (have == kUnset)
      narrow_[o] = narrow;
    else if (have == c)
      narrow_[o] = narrow_[o] && narrow;
    else
      narrow_[o] = narrow_[o] || narrow;
    if (have == kUnset)
      have = c;
    else if (have != c) {
      if (have >= 0 && c >= 0 && k_.inside[c] == have)
        ; // the wider one stays
      else if (have >= 0 && c >= 0 && k_.inside[have] == c)
        have = c;
      else
        have = kUnknown;
    }
    if (gsum_[o] < 0) {
      gsum_[o] = gid;
      return llvm::Error::success();
    }
    llvm::Expected<NodeId> s = rw_.emit(Op::Add, {gsum_[o], gid});
    if (!s)
      return s.takeError();
    gsum_[o] = *s;
    return llvm::Error::success();
  }

  llvm::Error derive(NodeId id) {
    const Node &n = f_.node(id);
    const OpInfo &info = op_info(n.op);
    NodeId g = gsum_[id];
    if (n.op == Op::Cast || n.op == Op::CastLike) {
      // The gradient in the operand's dtype, as eager's to() gives it.
      llvm::Expected<NodeId> c = rw_.emit(Op::CastLike, {g, n.operands[0]});
      if (!c)
        return c.takeError();
      return contribute(n.operands[0], *c, gcls_[id], narrow_[id]);
    }
    if (n.op == Op::Contiguous)
      return contribute(n.operands[0], g, gcls_[id], narrow_[id]);
    if (n.op == Op::Matmul || n.op == Op::Linear)
      return derive_product(id);
    const char *formula = derivative_of(n.op);
    if (!formula || (info.kind != OpKind::Pointwise &&
                     info.kind != OpKind::Reduction &&
                     info.kind != OpKind::Composite))
      return error_at(f_, id,
                      std::string("the derivative of '") + info.name +
                          "' is not derived at build time yet");
    if (!*formula)
      return llvm::Error::success(); // not differentiable: no gradient
    if (n.op == Op::RmsNorm) {
      const Node &eps = f_.node(n.operands[2]);
      if (eps.op != Op::Constant || eps.constant < 0)
        return error_at(f_, id,
                        "rms_norm's default eps (the dtype's machine "
                        "epsilon) is not derived at build time yet: pass eps");
    }
    NodeId r = id;
    int into = kUnset; // the class each operand's gradient has
    bool narrow = false;
    if (info.kind == OpKind::Pointwise) {
      into = gcls_[id];
      narrow = narrow_[id];
    } else {
      // A gradient that may only broadcast to the result's shape: the
      // formulas broadcast it, except log_softmax's (it sums %g over the
      // row) and a put-back of dims not at the end.
      bool suffix = true;
      for (size_t i = 0; i < n.dims.size(); ++i)
        suffix &= llvm::is_contained(n.dims, -int64_t(i) - 1);
      if (narrow_[id] &&
          (n.op == Op::LogSoftmax || (!n.keepdim && !suffix)))
        return error_at(f_, id,
                        std::string("the gradient of this ") + info.name +
                            " may be narrower than its result");
      const bool rowwise = info.kind == OpKind::Composite &&
                           info.form != CompositeForm::REDUCE;
      const bool exact = gcls_[id] == k_.cls[id];
      const int xcls = k_.cls[n.operands[0]];
      if (rowwise) {
        if (!exact)
          return error_at(f_, id,
                          std::string("the gradient of this ") + info.name +
                              " may be broadcast wider than its result");
      } else if (n.dims.empty() && !n.keepdim) {
        // A whole reduction: the gradient summed to one value.
        if (!exact) {
          Node attrs;
          llvm::Expected<NodeId> s = rw_.emit(Op::Sum, {g}, &attrs);
          if (!s)
            return s.takeError();
          g = *s;
        }
      } else if (n.keepdim) {
        if (!exact) {
          if (gcls_[id] != xcls)
            return error_at(f_, id,
                            std::string("the gradient of this ") + info.name +
                                " may be broadcast wider than its operand");
          Node attrs;
          attrs.dims = n.dims;
          attrs.keepdim = true;
          llvm::Expected<NodeId> s = rw_.emit(Op::Sum, {g}, &attrs);
          if (!s)
            return s.takeError();
          g = *s;
        }
      } else {
        // The reduced dims put back (size 1), in the order that keeps the
        // others' places: from the end for dims counted from the end.
        if (!exact)
          return error_at(f_, id,
                          std::string("the gradient of this ") + info.name +
                              " may be broadcast wider than its result");
        llvm::SmallVector<int64_t, 4> ds(n.dims.begin(), n.dims.end());
        bool neg = llvm::all_of(ds, [](int64_t d) { return d < 0; });
        bool pos = llvm::all_of(ds, [](int64_t d) { return d >= 0; });
        if (!neg && !pos)
          return error_at(f_, id,
                          std::string("a ") + info.name +
                              " over dims counted from both ends is not "
                              "derived at build time yet");
        llvm::sort(ds);
        if (neg)
          std::reverse(ds.begin(), ds.end());
        // The gradient and the result (a view of the forward's, which the
        // backward may then take as saved) with their dims put back.
        for (int64_t d : ds) {
          NodeId c = rw_.constant(double(d), DType::i64);
          llvm::Expected<NodeId> u = rw_.emit(Op::Unsqueeze, {g, c});
          if (!u)
            return u.takeError();
          g = *u;
          llvm::Expected<NodeId> v = rw_.emit(Op::Unsqueeze, {r, c});
          if (!v)
            return v.takeError();
          r = *v;
        }
      }
      into = xcls;
      // sum's and mean's gradients are g's, put back: narrower than x.
      narrow = n.op == Op::Sum || n.op == Op::Mean;
      if (n.op == Op::Mean) {
        // g / n, n counted from the arguments' shapes where the classes
        // say (a kernel of no reduction reads sizes, not reduce_size).
        if (NodeId cnt = count_of(xcls, n.dims); cnt >= 0) {
          llvm::Expected<NodeId> d = rw_.emit(Op::Div, {g, cnt});
          if (!d)
            return d.takeError();
          return contribute(n.operands[0], *d, into, true);
        }
      }
    }
    llvm::Expected<Formula> fm = parse_formula(n.op, formula, n);
    if (!fm)
      return fm.takeError();
    NodeId args[6] = {-1, -1, -1, -1, r, g};
    for (size_t k = 0; k < n.operands.size() && k < 4; ++k)
      args[k] = n.operands[k];
    for (size_t k = 0; k < n.operands.size() && k < fm->grads.size(); ++k) {
      const NodeId o = n.operands[k];
      if (!fm->grads[k] || f_.node(o).type.scalar ||
          !is_floating(f_.node(o).type.dtype))
        continue;
      llvm::Expected<NodeId> gk = rw_.instantiate(*fm->grads[k], args);
      if (!gk)
        return gk.takeError();
      const int lead = info.form == CompositeForm::NORM && k > 0
                           ? rank_source(n.operands[0])
                           : -1;
      if (lead >= 0)
        lead_class_[o] = k_.cls[n.operands[0]];
      if (llvm::Error e = contribute(o, *gk, into, narrow, lead))
        return e;
    }
    return llvm::Error::success();
  }

  // The argument whose rank value `id` has (a chain of ops that keep their
  // operand's rank from one argument), or -1.
  int rank_source(NodeId id) const {
    const Node &n = f_.node(id);
    if (n.op == Op::Input)
      return n.arg_index;
    const OpInfo &info = op_info(n.op);
    bool keeps = n.op == Op::Cast || n.op == Op::CastLike ||
                 n.op == Op::Contiguous || n.op == Op::Linear ||
                 (info.kind == OpKind::Composite &&
                  info.form != CompositeForm::REDUCE);
    if (keeps)
      return rank_source(n.operands[0]);
    if (info.kind != OpKind::Pointwise)
      return -1;
    int src = -1;
    for (NodeId o : n.operands) {
      if (f_.node(o).type.scalar)
        continue;
      int r = rank_source(o);
      if (r < 0 || (src >= 0 && r != src))
        return -1;
      src = r;
    }
    return src;
  }

  llvm::Expected<NodeId> transposed(NodeId x) {
    return rw_.emit(Op::Transpose, {x, rw_.constant(-2.0, DType::i64),
                                    rw_.constant(-1.0, DType::i64)});
  }

  // matmul(a, b) of operands of 2 or more dims (checked on the arguments
  // their ranks come from): da = g b^T, db = a^T g; linear(x, w, b) = x
  // w^T + b: dx = g w, dw = g^T x, db = g. The gradients of broadcast
  // batch dims are as wide as g (autograd sums them for an argument; any
  // other value must take a gradient of unknown shape).
  llvm::Error derive_product(NodeId id) {
    const Node &n = f_.node(id);
    const NodeId g = gsum_[id];
    const NodeId a = n.operands[0], b = n.operands[1];
    for (NodeId o : {a, b}) {
      int src = rank_source(o);
      if (src < 0)
        return error_at(f_, id,
                        std::string("the derivative of '") +
                            op_info(n.op).name +
                            "' of a value whose rank does not come from an "
                            "argument is not derived at build time yet");
      if (!llvm::is_contained(rank2_, src))
        rank2_.push_back(src);
    }
    auto want = [&](NodeId o) {
      return !f_.node(o).type.scalar && is_floating(f_.node(o).type.dtype) &&
             !(f_.node(o).op == Op::Input && !wrt_.empty() &&
               !llvm::is_contained(wrt_, f_.node(o).arg_index));
    };
    if (want(a)) {
      llvm::Expected<NodeId> bt =
          n.op == Op::Linear ? llvm::Expected<NodeId>(b) : transposed(b);
      if (!bt)
        return bt.takeError();
      llvm::Expected<NodeId> ga = rw_.emit(Op::Matmul, {g, *bt});
      if (!ga)
        return ga.takeError();
      // linear keeps x's leading dims: g of y's shape gives dx of x's.
      const bool exact = n.op == Op::Linear && gcls_[id] == k_.cls[id];
      if (llvm::Error e = contribute(a, *ga, exact ? k_.cls[a] : kUnknown,
                                     exact && narrow_[id]))
        return e;
    }
    if (want(b)) {
      llvm::Expected<NodeId> gt = transposed(n.op == Op::Linear ? g : a);
      if (!gt)
        return gt.takeError();
      llvm::Expected<NodeId> gb = n.op == Op::Linear
                                      ? rw_.emit(Op::Matmul, {*gt, a})
                                      : rw_.emit(Op::Matmul, {*gt, g});
      if (!gb)
        return gb.takeError();
      if (llvm::Error e = contribute(b, *gb, kUnknown))
        return e;
    }
    if (n.op == Op::Linear && want(n.operands[2]))
      return contribute(n.operands[2], g, kUnknown);
    return llvm::Error::success();
  }

  std::vector<int> rank2_; // arguments that must have 2 or more dims
  std::map<NodeId, int> leading_; // Input -> lead (contribute), -1: none
  std::map<NodeId, int> lead_class_; // Input -> its norm input's class

  const Graph &f_;
  GraphBuilder b_;
  Rewriter rw_;
  bool assume_;
  std::vector<int> wrt_; // empty: every argument
  Classes k_;
  std::vector<int> gcls_;   // per forward node: its gradient's class
  std::vector<bool> narrow_; // ... which it may only broadcast to
  std::vector<NodeId> gsum_; // per forward node: its gradient, or -1
};

} // namespace

llvm::Expected<Backward> derive_backward(const Graph &g,
                                         llvm::ArrayRef<int> wrt) {
  llvm::Expected<Graph> typed = infer_types(g, PassOptions());
  if (!typed)
    return typed.takeError();
  // First with no assumption; else with the arguments that meet in
  // pointwise ops taken to have one shape (the caller checks it).
  llvm::Expected<Backward> plain = Deriver(*typed, false, wrt).run();
  if (plain)
    return plain;
  llvm::Expected<Backward> assumed = Deriver(*typed, true, wrt).run();
  if (assumed && !assumed->same_shape.empty()) {
    llvm::consumeError(plain.takeError());
    return assumed;
  }
  if (!assumed)
    llvm::consumeError(assumed.takeError());
  return plain;
}

llvm::Expected<Graph> autodiff(const Graph &g, const PassOptions &) {
  llvm::Expected<Backward> b = derive_backward(g);
  if (!b)
    return b.takeError();
  return std::move(b->graph);
}

} // namespace kiln::passes
