// Reverse-mode autograd (kiln/autograd.h): per-tensor state, the nodes ops
// record, the engine that runs them backward, and the evaluator of the
// derivative formulas of kiln/ops.def.
#include "autograd_impl.h"
#include "detail.h"

#include <kiln/ops.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace kiln {

namespace autograd {

using detail::fail;

struct Node;

// Where an input's gradient goes: the node that made it, or the leaf that
// accumulates it (or neither: no gradient wanted).
struct Edge {
  std::shared_ptr<Node> fn;
  std::shared_ptr<Meta> leaf;
  Dims sizes;
  DType dtype = DType::f32;
  bool active() const { return fn || leaf; }
};

// A tensor kept for backward: the data without its history (a node that
// kept its own result with history would keep itself alive), and the
// storage's version when it was saved.
struct Saved {
  Tensor t;
  uint32_t version = 0;
};

struct Node {
  std::string name;
  std::vector<Edge> next;
  std::vector<Saved> saved;
  BackwardFn fn;
  bool released = false;
};

struct Meta {
  bool requires_grad = false; // a leaf's flag
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
};

namespace {

thread_local bool g_grad_enabled = true;

bool tensor_requires(const Tensor &t) {
  const auto &m = t.autograd_meta();
  return m && (m->requires_grad || m->grad_fn);
}

Edge edge_of(const Tensor &t) {
  Edge e;
  if (!t.defined())
    return e;
  e.sizes = t.sizes();
  e.dtype = t.dtype();
  const auto &m = t.autograd_meta();
  if (!m || !is_floating(t.dtype()))
    return e;
  if (m->grad_fn)
    e.fn = m->grad_fn;
  else if (m->requires_grad)
    e.leaf = m;
  return e;
}

Saved save(const Tensor &t) {
  Saved s;
  if (t.defined()) {
    s.t = t.detach();
    s.version = t.storage()->version.load(std::memory_order_relaxed);
  }
  return s;
}

std::shared_ptr<Meta> &meta_of(Tensor &t) {
  if (!t.autograd_meta())
    t.set_autograd_meta(std::make_shared<Meta>());
  return const_cast<std::shared_ptr<Meta> &>(t.autograd_meta());
}

} // namespace

// --- the formulas of kiln/ops.def ---

namespace {

// A parsed KILN_DERIVATIVE snippet. Names: slots 0..5 are %a %b %c %d %r %g;
// the rest are the snippet's own.
enum : int { kA = 0, kB, kC, kD, kR, kG, kNumFixed };

struct Arg {
  int slot = -1; // -1: a constant
  double value = 0;
};
// What a statement computes, resolved when the formula is parsed.
enum class StmtKind : uint8_t { Alias, Sum, Mean, ReduceSize, Pointwise };
struct Stmt {
  int dst = -1;
  StmtKind kind = StmtKind::Alias; // Alias: `%x = %y`
  OpId op = OpId::NumPointwise;    // Pointwise: the op of the table
  std::vector<Arg> args;
  bool has_dims = false, node_dims = false;
  std::vector<int64_t> dims;
  int keepdim = -1; // -1 none, 0 false, 1 true, 2 the node's
};
// KILN_VIEW_DERIVATIVE's rules (kiln/ops.def).
enum class ViewGrad : uint8_t { RESHAPE, TRANSPOSE, PERMUTE, SUM_TO, SCATTER, SAME };

struct Formula {
  std::vector<std::string> names;
  std::vector<Stmt> stmts;
  int out[4] = {-1, -1, -1, -1}; // the slots of %ga %gb %gc %gd
  bool differentiable = false;
};

[[noreturn]] void bad_formula(const std::string &op, const std::string &why) {
  fail("internal error: the derivative of '%s' in kiln/ops.def: %s",
       op.c_str(), why.c_str());
}

// The statement kind (and pointwise op) a formula's op name spells.
void resolve(const std::string &formula_op, const std::string &name, Stmt &s) {
  if (name == "sum" || name == "mean" || name == "reduce_size") {
    s.kind = name == "sum"    ? StmtKind::Sum
             : name == "mean" ? StmtKind::Mean
                              : StmtKind::ReduceSize;
    return;
  }
  for (int i = 0; i < int(OpId::NumPointwise); ++i)
    if (name == op_name(OpId(i))) {
      s.kind = StmtKind::Pointwise;
      s.op = OpId(i);
      return;
    }
  bad_formula(formula_op, "no op '" + name + "'");
}

Formula parse_formula(const std::string &op, std::string_view text) {
  Formula f;
  f.names = {"a", "b", "c", "d", "r", "g"};
  if (text.empty())
    return f;
  f.differentiable = true;
  auto slot = [&](std::string_view name, bool define) {
    for (size_t i = 0; i < f.names.size(); ++i)
      if (f.names[i] == name) {
        if (define && i < kNumFixed)
          bad_formula(op, "assigns %" + std::string(name));
        return int(i);
      }
    if (!define)
      bad_formula(op, "reads %" + std::string(name) + " before it is set");
    f.names.emplace_back(name);
    return int(f.names.size() - 1);
  };
  size_t pos = 0;
  auto skip = [&] {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  };
  auto word = [&] {
    skip();
    size_t b = pos;
    while (pos < text.size() &&
           (std::isalnum((unsigned char)text[pos]) || text[pos] == '_' ||
            text[pos] == '.' || text[pos] == '-' || text[pos] == '$'))
      ++pos;
    return text.substr(b, pos - b);
  };
  auto expect = [&](char c) {
    skip();
    if (pos >= text.size() || text[pos] != c)
      bad_formula(op, std::string("expected '") + c + "' at offset " +
                          std::to_string(pos));
    ++pos;
  };
  auto value_arg = [&]() -> Arg {
    skip();
    Arg a;
    if (pos < text.size() && text[pos] == '%') {
      ++pos;
      a.slot = slot(word(), false);
      return a;
    }
    std::string w(word());
    if (w.empty())
      bad_formula(op, "expected an operand at offset " + std::to_string(pos));
    a.value = w == "inf" ? INFINITY : w == "-inf" ? -INFINITY : std::stod(w);
    return a;
  };
  while (true) {
    skip();
    if (pos >= text.size())
      break;
    Stmt s;
    expect('%');
    std::string dst(word());
    expect('=');
    skip();
    if (pos < text.size() && text[pos] == '%') {
      s.args.push_back(value_arg());
    } else {
      resolve(op, std::string(word()), s);
      s.args.push_back(value_arg());
      while (true) {
        skip();
        if (pos < text.size() && text[pos] == ',') {
          ++pos;
          s.args.push_back(value_arg());
          continue;
        }
        break;
      }
      skip();
      if (pos < text.size() && text[pos] == '{') {
        ++pos;
        while (true) {
          std::string key(word());
          expect('=');
          if (key == "dims") {
            s.has_dims = true;
            skip();
            if (text.substr(pos, 5) == "$dims") {
              pos += 5;
              s.node_dims = true;
            } else {
              expect('[');
              while (true) {
                skip();
                if (text[pos] == ']') {
                  ++pos;
                  break;
                }
                s.dims.push_back(std::stoll(std::string(word())));
                skip();
                if (text[pos] == ',')
                  ++pos;
              }
            }
          } else if (key == "keepdim") {
            std::string v(word());
            s.keepdim = v == "true" ? 1 : v == "false" ? 0 : 2;
          } else {
            bad_formula(op, "unknown attribute " + key);
          }
          skip();
          if (text[pos] == ',') {
            ++pos;
            continue;
          }
          expect('}');
          break;
        }
      }
    }
    s.dst = slot(dst, true);
    f.stmts.push_back(std::move(s));
    skip();
    if (pos < text.size())
      expect(';');
  }
  static const char *outs[] = {"ga", "gb", "gc", "gd"};
  for (int i = 0; i < 4; ++i)
    for (size_t k = kNumFixed; k < f.names.size(); ++k)
      if (f.names[k] == outs[i])
        f.out[i] = int(k);
  return f;
}

// The statements computing the wanted outputs, and the fixed slots they
// read.
struct Needs {
  std::vector<bool> stmt;
  bool fixed[kNumFixed] = {};
};
Needs needs_of(const Formula &f, const std::vector<bool> &want) {
  Needs n;
  n.stmt.assign(f.stmts.size(), false);
  std::vector<bool> live(f.names.size(), false);
  for (size_t i = 0; i < want.size() && i < 4; ++i)
    if (want[i] && f.out[i] >= 0)
      live[size_t(f.out[i])] = true;
  for (size_t k = f.stmts.size(); k-- > 0;) {
    const Stmt &s = f.stmts[k];
    if (!live[size_t(s.dst)])
      continue;
    n.stmt[k] = true;
    for (const Arg &a : s.args)
      if (a.slot >= 0)
        live[size_t(a.slot)] = true;
  }
  for (int i = 0; i < kNumFixed; ++i)
    n.fixed[i] = live[size_t(i)];
  return n;
}

struct Val {
  Tensor t; // defined: a tensor
  double v = 0;
  DType dt = DType::f64; // a scalar's weak dtype
  bool set = false;
};

Operand operand_of(const Val &x) {
  if (x.t.defined())
    return Operand(x.t);
  Operand o(x.v);
  o.scalar_dtype = x.dt;
  return o;
}

std::vector<int> wrapped_dims(const Stmt &s, const std::vector<int64_t> &node,
                              int rank) {
  std::vector<int> out;
  if (s.node_dims)
    for (int64_t d : node)
      out.push_back(int(d));
  else
    for (int64_t d : s.dims)
      out.push_back(detail::wrap_dim(int(d), rank, "kiln autograd"));
  std::sort(out.begin(), out.end());
  return out;
}

struct Attrs {
  std::vector<int64_t> dims;
  bool keepdim = true;
};

std::vector<Val> evaluate(const std::string &opname, const Formula &f,
                          const Needs &n, std::vector<Val> vals,
                          const Attrs &attrs) {
  vals.resize(f.names.size());
  for (size_t k = 0; k < f.stmts.size(); ++k) {
    if (!n.stmt[k])
      continue;
    const Stmt &s = f.stmts[k];
    std::vector<Val> in;
    for (const Arg &a : s.args) {
      if (a.slot < 0) {
        Val c;
        c.v = a.value;
        c.set = true;
        in.push_back(c);
      } else {
        if (!vals[size_t(a.slot)].set)
          bad_formula(opname, "reads %" + f.names[size_t(a.slot)] +
                                  ", which has no value here");
        in.push_back(vals[size_t(a.slot)]);
      }
    }
    Val out;
    out.set = true;
    if (s.kind == StmtKind::Alias) {
      out = in[0];
    } else if (s.kind == StmtKind::Sum || s.kind == StmtKind::Mean) {
      const Tensor &x = in[0].t;
      bool keep = s.keepdim == 2 ? attrs.keepdim : s.keepdim != 0;
      std::vector<int> ds = wrapped_dims(s, attrs.dims, x.dim());
      Tensor r = x;
      for (size_t i = ds.size(); i-- > 0;)
        r = s.kind == StmtKind::Sum ? kiln::sum(r, ds[i], keep)
                                    : kiln::mean(r, ds[i], keep);
      out.t = r;
    } else if (s.kind == StmtKind::ReduceSize) {
      const Tensor &x = in[0].t;
      double count = 1;
      for (int d : wrapped_dims(s, attrs.dims, x.dim()))
        count *= double(x.size(d));
      out.v = count;
    } else if (s.op == OpId::Where && !in[0].t.defined()) {
      out = in[0].v != 0 ? in[1] : in[2]; // a condition known on the host
    } else {
      const OpId id = s.op;
      bool any_tensor = false;
      for (const Val &x : in)
        any_tensor |= x.t.defined();
      if (!any_tensor) { // scalars: computed on a 0-d CPU tensor
        Tensor t0 = kiln::full({}, in[0].v, in[0].dt);
        in[0].t = t0;
      }
      Tensor r;
      switch (in.size()) {
      case 1:
        r = pointwise(id, {operand_of(in[0])});
        break;
      case 2:
        r = pointwise(id, {operand_of(in[0]), operand_of(in[1])});
        break;
      default:
        r = pointwise(id, {operand_of(in[0]), operand_of(in[1]),
                           operand_of(in[2])});
      }
      if (any_tensor) {
        out.t = r;
      } else {
        out.dt = r.dtype() == DType::b8 ? DType::b8 : DType::f64;
        out.v = r.item<double>();
      }
    }
    vals[size_t(s.dst)] = out;
  }
  return vals;
}

// The formulas by op name, parsed once.
struct FormulaTable {
  std::map<std::string, Formula> by_name;
  std::map<ViewKind, ViewGrad> view_rule;
};
const FormulaTable &formulas() {
  static const FormulaTable table = [] {
    FormulaTable t;
    struct Entry {
      const char *name, *formula;
    };
    static const Entry entries[] = {
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition)
#define KILN_DERIVATIVE(Name, formula) {#Name, formula},
#include <kiln/ops.def>
    };
    // The entries are named by their enum spelling; the ops by their
    // mnemonic: map one to the other through the table's own lines.
    static const std::pair<const char *, const char *> names[] = {
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition) {#Name, #name},
#define KILN_REDUCTION(Name, name, rule, identity, combine) {#Name, #name},
#define KILN_COMPOSITE(Name, name, arity, form, operands, decomposition)     \
  {#Name, #name},
#include <kiln/ops.def>
    };
    for (const Entry &e : entries)
      for (const auto &[Name, name] : names)
        if (std::string_view(Name) == e.name)
          t.by_name[name] = parse_formula(name, e.formula);
    const std::pair<ViewKind, ViewGrad> views[] = {
#define KILN_POINTWISE(Name, name, arity, rule, traits, identity, cxx,       \
                       formula, decomposition)
#define KILN_VIEW_DERIVATIVE(Name, rule) {ViewKind::Name, ViewGrad::rule},
#include <kiln/ops.def>
    };
    for (const auto &[k, r] : views)
      t.view_rule[k] = r;
    return t;
  }();
  return table;
}

const Formula &formula_of(const std::string &name) {
  const FormulaTable &t = formulas();
  auto it = t.by_name.find(name);
  if (it == t.by_name.end())
    fail("internal error: kiln/ops.def has no derivative for '%s'",
         name.c_str());
  return it->second;
}

} // namespace

// --- recording ---

Recorder::Recorder(const char *name,
                   std::initializer_list<const Tensor *> inputs) {
  start(name, inputs.begin(), inputs.size());
}

Recorder::Recorder(const char *name, std::span<const Tensor> inputs) {
  std::vector<const Tensor *> p;
  for (const Tensor &t : inputs)
    p.push_back(&t);
  start(name, p.data(), p.size());
}

Recorder::Recorder(const char *name, std::span<const Tensor *const> inputs) {
  start(name, inputs.data(), inputs.size());
}

void Recorder::start(const char *name, const Tensor *const *inputs,
                     size_t n) {
  name_ = name;
  if (!g_grad_enabled)
    return;
  bool any = false;
  for (size_t i = 0; i < n; ++i)
    any |= inputs[i] && tensor_requires(*inputs[i]);
  if (!any)
    return;
  active_ = true;
  prev_mode_ = g_grad_enabled;
  g_grad_enabled = false; // the op's own inner ops record nothing
  for (size_t i = 0; i < n; ++i) {
    inputs_.push_back(inputs[i] ? *inputs[i] : Tensor());
    need_.push_back(inputs[i] && tensor_requires(*inputs[i]) &&
                    is_floating(inputs[i]->dtype()));
  }
}

Recorder::~Recorder() {
  if (active_)
    g_grad_enabled = prev_mode_;
}

namespace {
std::shared_ptr<Node> make_node(const char *name,
                                const std::vector<Tensor> &inputs,
                                const std::vector<bool> &need,
                                std::vector<Tensor> saved, BackwardFn fn) {
  auto node = std::make_shared<Node>();
  node->name = name;
  for (size_t i = 0; i < inputs.size(); ++i)
    node->next.push_back(need[i] ? edge_of(inputs[i]) : Edge{});
  for (const Tensor &t : saved)
    node->saved.push_back(save(t));
  node->fn = std::move(fn);
  return node;
}
} // namespace

void Recorder::finish(Tensor &result, std::vector<Tensor> saved,
                      BackwardFn fn) {
  if (!active_ || !is_floating(result.dtype()))
    return;
  auto node = make_node(name_, inputs_, need_, std::move(saved), std::move(fn));
  auto m = std::make_shared<Meta>();
  m->grad_fn = std::move(node);
  result.set_autograd_meta(std::move(m));
}

bool check_inplace(const char *fn, const Tensor &target,
                   std::span<const Tensor *const> operands) {
  if (!g_grad_enabled || !target.defined())
    return false;
  bool any = tensor_requires(target);
  for (const Tensor *t : operands)
    any |= t && tensor_requires(*t);
  if (!any)
    return false;
  const auto &m = target.autograd_meta();
  if (m && m->requires_grad && !m->grad_fn)
    fail("%s: a leaf tensor that requires grad is written in place while "
         "autograd records (write it inside kiln::no_grad, as an optimizer "
         "step does, or out of place)",
         fn);
  long handles = m ? m.use_count() : 1;
  int refs = target.storage()->refs.load(std::memory_order_relaxed);
  if (refs != handles)
    fail("%s: autograd cannot record this in-place write: the tensor's "
         "storage is shared with %d other tensor(s) (a view, a copy of the "
         "handle made before it had history, or a tensor saved for "
         "backward) that would not see the new history; write it out of "
         "place",
         fn, int(refs - handles));
  if (!is_floating(target.dtype()))
    return false;
  return true;
}

void Recorder::finish_inplace(const Tensor &target, std::vector<Tensor> saved,
                              BackwardFn fn) {
  if (!active_)
    return;
  auto node = make_node(name_, inputs_, need_, std::move(saved), std::move(fn));
  Tensor &t = const_cast<Tensor &>(target);
  meta_of(t)->grad_fn = std::move(node);
}

Tensor sum_to(const Tensor &g, const Dims &sizes) {
  if (g.sizes() == sizes)
    return g;
  Tensor r = g;
  while (r.dim() > sizes.rank())
    r = kiln::sum(r, 0, false);
  for (int d = 0; d < r.dim(); ++d)
    if (sizes[d] == 1 && r.size(d) != 1)
      r = kiln::sum(r, d, true);
  if (!(r.sizes() == sizes))
    r = r.expand(sizes);
  return r;
}

namespace {

// Binds a formula's fixed slots, records what it needs, and runs it.
struct FormulaCall {
  std::string opname;
  const Formula *f = nullptr;
  Attrs attrs;
  // per fixed slot a..d: an input index (tensor), or a scalar
  int input_of[4] = {-1, -1, -1, -1};
  Val scalar[4];
  bool r_kept = false; // unsqueeze %g and %r back to the reduced dims
  // Evaluate in f32 (a reduction or row op of an f16/bf16 tensor: its
  // gradient sums over rows, as PyTorch's backward kernels do in f32).
  bool upcast = false;
  // The formula outputs (%ga, %gb, ...) wanted, from the inputs wanted.
  std::vector<bool> wanted(const std::vector<bool> &need) const {
    std::vector<bool> w(4, false);
    for (int s = 0; s < 4; ++s)
      w[size_t(s)] = input_of[s] >= 0 && size_t(input_of[s]) < need.size() &&
                     need[size_t(input_of[s])];
    return w;
  }
};

Tensor unreduce(const Tensor &t, const std::vector<int64_t> &dims) {
  Tensor r = t;
  for (int64_t d : dims) // ascending: each insert leaves later dims right
    r = r.unsqueeze(int(d));
  return r;
}

void record_formula(Recorder &rec, FormulaCall call,
                    const std::vector<const Tensor *> &inputs,
                    const Tensor &result_for_saving, Tensor *result,
                    const Tensor *inplace_target) {
  const Formula &f = *call.f;
  if (!f.differentiable)
    return;
  Needs n = needs_of(f, call.wanted(rec.need()));
  // saved: the inputs the formula reads, then the result
  std::vector<Tensor> saved;
  std::vector<int> saved_slot;
  for (int s = 0; s < 4; ++s)
    if (n.fixed[s] && call.input_of[s] >= 0) {
      const Tensor *t = inputs[size_t(call.input_of[s])];
      saved.push_back(t ? *t : Tensor());
      saved_slot.push_back(s);
    }
  if (n.fixed[kR]) {
    saved.push_back(result_for_saving);
    saved_slot.push_back(kR);
  }
  BackwardFn fn = [call = std::move(call), saved_slot](
                      const Tensor &g, const std::vector<Tensor> &sv,
                      const std::vector<bool> &need) {
    const Formula &f = *call.f;
    Needs n = needs_of(f, call.wanted(need));
    std::vector<Val> vals(kNumFixed);
    for (int s = 0; s < 4; ++s)
      if (call.input_of[s] < 0)
        vals[size_t(s)] = call.scalar[s];
    for (size_t i = 0; i < saved_slot.size(); ++i) {
      Val v;
      v.t = sv[i];
      v.set = true;
      if (!v.t.defined()) { // a norm's missing weight (1) or bias (0)
        v.v = saved_slot[i] == kB ? 1.0 : 0.0;
      }
      vals[size_t(saved_slot[i])] = v;
    }
    Val gv;
    gv.t = call.r_kept ? g : unreduce(g, call.attrs.dims);
    gv.set = true;
    vals[kG] = gv;
    if (n.fixed[kR] && !call.r_kept)
      vals[kR].t = unreduce(vals[kR].t, call.attrs.dims);
    if (call.upcast)
      for (Val &v : vals)
        if (v.t.defined() && (v.t.dtype() == DType::f16 ||
                              v.t.dtype() == DType::bf16))
          v.t = v.t.to(DType::f32);
    vals = evaluate(call.opname, f, n, std::move(vals), call.attrs);
    std::vector<Tensor> out(need.size());
    for (int s = 0; s < 4; ++s) {
      int i = call.input_of[s];
      if (i < 0 || size_t(i) >= need.size() || !need[size_t(i)] ||
          f.out[s] < 0)
        continue;
      const Val &v = vals[size_t(f.out[s])];
      out[size_t(i)] = v.t.defined() ? v.t : kiln::full({}, v.v, DType::f64);
    }
    return out;
  };
  if (inplace_target)
    rec.finish_inplace(*inplace_target, std::move(saved), std::move(fn));
  else
    rec.finish(*result, std::move(saved), std::move(fn));
}

FormulaCall pointwise_call(OpId op, std::initializer_list<Operand> operands) {
  FormulaCall c;
  c.opname = op_name(op);
  c.f = &formula_of(c.opname);
  c.r_kept = true;
  int k = 0, ti = 0;
  for (const Operand &o : operands) {
    if (o.tensor) {
      c.input_of[k] = ti++;
    } else {
      c.scalar[k].v = o.value;
      c.scalar[k].dt = o.scalar_dtype;
      c.scalar[k].set = true;
    }
    ++k;
  }
  return c;
}

std::vector<const Tensor *> tensors_of(std::initializer_list<Operand> ops) {
  std::vector<const Tensor *> v;
  for (const Operand &o : ops)
    if (o.tensor)
      v.push_back(o.tensor);
  return v;
}

} // namespace

bool pointwise_reads_alias(OpId op, std::initializer_list<Operand> operands,
                           const Tensor &target) {
  const Formula &f = formula_of(op_name(op));
  if (!f.differentiable)
    return false;
  Needs n = needs_of(f, std::vector<bool>(4, true));
  int k = 0;
  for (const Operand &o : operands) {
    if (o.tensor && o.tensor->storage() == target.storage() && n.fixed[k])
      return true;
    ++k;
  }
  return false;
}

void record_pointwise(Recorder &rec, OpId op,
                      std::initializer_list<Operand> operands,
                      Tensor &result) {
  if (!rec)
    return;
  record_formula(rec, pointwise_call(op, operands), tensors_of(operands),
                 result, &result, nullptr);
}

void record_pointwise_inplace(Recorder &rec, OpId op,
                              std::initializer_list<Operand> operands,
                              const Tensor &old_target, const Tensor &target) {
  if (!rec)
    return;
  std::vector<const Tensor *> ins = tensors_of(operands);
  for (const Tensor *&t : ins)
    if (t->storage() == target.storage())
      t = &old_target; // the value before the write
  record_formula(rec, pointwise_call(op, operands), ins, target, nullptr,
                 &target);
}

void record_reduction(Recorder &rec, const char *name, const Tensor &x,
                      std::vector<const Tensor *> tensor_operands,
                      std::vector<double> scalar_operands,
                      std::vector<int64_t> dims, bool keepdim,
                      Tensor &result) {
  if (!rec)
    return;
  FormulaCall c;
  c.opname = name;
  c.f = &formula_of(name);
  std::sort(dims.begin(), dims.end());
  c.attrs.dims = dims;
  c.attrs.keepdim = keepdim;
  c.r_kept = keepdim || result.dim() == x.dim();
  c.upcast = x.dtype() == DType::f16 || x.dtype() == DType::bf16;
  std::vector<const Tensor *> ins{&x};
  c.input_of[0] = 0;
  int k = 1;
  for (const Tensor *t : tensor_operands) {
    c.input_of[k++] = int(ins.size());
    ins.push_back(t);
  }
  for (double s : scalar_operands) {
    c.scalar[k].v = s;
    c.scalar[k].set = true;
    ++k;
  }
  record_formula(rec, c, ins, result, &result, nullptr);
}

void record_view(Recorder &rec, ViewKind kind, std::span<const int64_t> args,
                 const Tensor &input, Tensor &result) {
  if (!rec)
    return;
  const ViewGrad rule = formulas().view_rule.at(kind);
  std::vector<int64_t> a(args.begin(), args.end());
  Dims in_sizes = input.sizes();
  DType dt = input.dtype();
  Device dev = input.device();
  BackwardFn fn = [rule, kind, a, in_sizes, dt,
                   dev](const Tensor &g, const std::vector<Tensor> &,
                        const std::vector<bool> &) -> std::vector<Tensor> {
    switch (rule) {
    case ViewGrad::RESHAPE:
      return {g.reshape(in_sizes)};
    case ViewGrad::TRANSPOSE:
      return {g.transpose(int(a[0]), int(a[1]))};
    case ViewGrad::PERMUTE: {
      Dims inv;
      inv.resize(int(a.size()));
      for (size_t i = 0; i < a.size(); ++i)
        inv[detail::wrap_dim(int(a[i]), int(a.size()), "permute")] =
            int64_t(i);
      return {g.permute(inv)};
    }
    case ViewGrad::SUM_TO:
      return {sum_to(g, in_sizes)};
    case ViewGrad::SCATTER: {
      Tensor z = kiln::zeros(in_sizes, dt, dev);
      z.apply_view(kind, a).copy_(g);
      return {z};
    }
    case ViewGrad::SAME:
      break;
    }
    return {g};
  };
  rec.finish(result, {}, std::move(fn));
}

// --- the engine ---

namespace {

// The first gradient of a leaf becomes its grad(): taken as it is when
// nothing else holds its storage and it is dense (a fresh result of the
// backward, as PyTorch's AccumulateGrad steals one), else copied.
void accumulate(Meta &leaf, Tensor g) {
  if (leaf.grad.defined()) {
    leaf.grad += g;
    return;
  }
  const Storage *s = g.storage();
  if (s && s->refs.load(std::memory_order_relaxed) == 1 && g.is_contiguous() &&
      g.storage_offset() == 0 && !s->external)
    leaf.grad = std::move(g);
  else
    leaf.grad = g.clone();
}

Tensor shaped(const Tensor &g, const Edge &e) {
  Tensor r = sum_to(g, e.sizes);
  if (r.dtype() != e.dtype)
    r = r.to(e.dtype);
  return r;
}

void run_backward(const Tensor &root, const Tensor &gradient, bool retain) {
  const char *fn = "kiln::Tensor::backward";
  if (!tensor_requires(root))
    fail("%s: the tensor does not require grad and has no history (no op "
         "that recorded made it: mark a leaf with requires_grad_())",
         fn);
  Tensor g = gradient;
  if (!g.defined()) {
    if (root.numel() != 1)
      fail("%s: a gradient can be left out only for a one-element tensor; "
           "this one has shape %s",
           fn, root.sizes().str().c_str());
    g = kiln::ones(root.sizes(), root.dtype(), root.device());
  } else if (!(g.sizes() == root.sizes())) {
    fail("%s: the gradient has shape %s, the tensor %s", fn,
         g.sizes().str().c_str(), root.sizes().str().c_str());
  }
  no_grad ng;
  const auto &m = root.autograd_meta();
  if (!m->grad_fn) { // a leaf
    accumulate(*m, g.to(root.dtype()));
    return;
  }
  // Dependencies: how many edges reach each node from the graph.
  std::unordered_map<Node *, int> deps;
  std::vector<Node *> stack{m->grad_fn.get()};
  deps[m->grad_fn.get()] = 0;
  while (!stack.empty()) {
    Node *n = stack.back();
    stack.pop_back();
    for (const Edge &e : n->next)
      if (e.fn) {
        auto [it, fresh] = deps.try_emplace(e.fn.get(), 0);
        ++it->second;
        if (fresh)
          stack.push_back(e.fn.get());
      }
  }
  std::unordered_map<Node *, Tensor> grads;
  grads[m->grad_fn.get()] = g;
  std::vector<Node *> ready{m->grad_fn.get()};
  std::vector<Node *> ran;
  while (!ready.empty()) {
    Node *n = ready.back();
    ready.pop_back();
    Tensor gn = std::move(grads[n]);
    grads.erase(n);
    if (n->released)
      fail("%s: backward through %s a second time: its saved tensors were "
           "freed by the first backward (pass retain_graph=true to it)",
           fn, n->name.c_str());
    std::vector<Tensor> saved;
    for (const Saved &s : n->saved) {
      if (s.t.defined() &&
          s.t.storage()->version.load(std::memory_order_relaxed) != s.version)
        fail("%s: a tensor %s saved for backward (shape %s) was written in "
             "place after it was saved",
             fn, n->name.c_str(), s.t.sizes().str().c_str());
      saved.push_back(s.t);
    }
    std::vector<bool> need;
    for (const Edge &e : n->next)
      need.push_back(e.active());
    std::vector<Tensor> outs;
    if (gn.defined())
      outs = n->fn(gn, saved, need);
    ran.push_back(n);
    for (size_t i = 0; i < n->next.size(); ++i) {
      const Edge &e = n->next[i];
      if (!e.active())
        continue;
      Tensor gi = i < outs.size() ? std::move(outs[i]) : Tensor();
      if (gi.defined())
        gi = shaped(gi, e);
      if (e.leaf) {
        if (gi.defined())
          accumulate(*e.leaf, std::move(gi));
        continue;
      }
      Node *next = e.fn.get();
      if (gi.defined()) {
        Tensor &acc = grads[next];
        acc = acc.defined() ? acc + gi : gi;
      }
      if (--deps[next] == 0)
        ready.push_back(next);
    }
  }
  if (!retain)
    for (Node *n : ran) {
      n->saved.clear();
      n->released = true;
    }
}

} // namespace
} // namespace autograd

// --- the Tensor methods and the grad mode ---

bool Tensor::requires_grad() const { return autograd::tensor_requires(*this); }

Tensor &Tensor::requires_grad_(bool on) {
  if (!defined())
    detail::fail("kiln::Tensor::requires_grad_: the tensor is undefined");
  if (meta_ && meta_->grad_fn) {
    if (!on)
      detail::fail("kiln::Tensor::requires_grad_: the tensor has history (it "
                   "is not a leaf); use detach() for a tensor without it");
    return *this;
  }
  if (on && !is_floating(dtype_))
    detail::fail("kiln::Tensor::requires_grad_: only floating tensors can "
                 "require grad, this one is %s",
                 dtype_name(dtype_));
  autograd::meta_of(*this)->requires_grad = on;
  return *this;
}

bool Tensor::is_leaf() const { return !meta_ || !meta_->grad_fn; }

const Tensor &Tensor::grad() const {
  static const Tensor none;
  return meta_ ? meta_->grad : none;
}

Tensor &Tensor::mutable_grad() { return autograd::meta_of(*this)->grad; }

void Tensor::backward() const { autograd::run_backward(*this, Tensor(), false); }

void Tensor::backward(const Tensor &gradient, bool retain_graph) const {
  autograd::run_backward(*this, gradient, retain_graph);
}

Tensor Tensor::detach() const {
  Tensor t = *this;
  t.meta_.reset();
  return t;
}

std::string Tensor::grad_fn_name() const {
  return meta_ && meta_->grad_fn ? meta_->grad_fn->name : "";
}

bool is_grad_enabled() { return autograd::g_grad_enabled; }
void set_grad_enabled(bool on) { autograd::g_grad_enabled = on; }

no_grad::no_grad() : prev_(autograd::g_grad_enabled) {
  autograd::g_grad_enabled = false;
}
no_grad::~no_grad() { autograd::g_grad_enabled = prev_; }
enable_grad::enable_grad() : prev_(autograd::g_grad_enabled) {
  autograd::g_grad_enabled = true;
}
enable_grad::~enable_grad() { autograd::g_grad_enabled = prev_; }

void rt::record_compiled(const char *name,
                         std::initializer_list<const Tensor *> inputs,
                         Tensor &result, std::vector<Tensor> saved,
                         std::vector<double> scalars, CompiledBackward fn) {
  autograd::Recorder rec(name, inputs);
  if (!rec)
    return;
  rec.finish(result, std::move(saved),
             [fn, scalars = std::move(scalars)](
                 const Tensor &grad, const std::vector<Tensor> &kept,
                 const std::vector<bool> &) { return fn(grad, kept, scalars); });
}

void rt::compiled_backward_failed(const char *name) {
  detail::fail("%s: the compiled backward and its eager fallback both "
               "declined the call (an internal error)",
               name);
}

bool rt::autograd_records(std::initializer_list<const Tensor *> tensors) {
  if (!autograd::g_grad_enabled)
    return false;
  for (const Tensor *t : tensors)
    if (t && autograd::tensor_requires(*t))
      return true;
  return false;
}

} // namespace kiln
