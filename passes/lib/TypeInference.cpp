// infer-types: dtypes by the op table's rules (kiln/dtype.h promotion),
// shapes by broadcasting with symbolic dims and by reducing over dims.
#include <kiln/passes/passes.h>

#include <cmath>
#include <kiln/passes/text.h>

#include "ReduceDims.h"
#include "RewriteUtil.h"

#include <llvm/Support/raw_ostream.h>

namespace kiln::passes {

using namespace kiln::ir;

char PassError::ID = 0;

void PassError::log(llvm::raw_ostream &os) const {
  if (loc.valid())
    os << loc.file << ":" << loc.line << ":" << loc.col << ": " << message;
  else
    os << value << ": " << message;
}

std::error_code PassError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

namespace {

std::string dim_string(const SymDim &d) {
  return d.is_symbolic() ? "s" + std::to_string(d.symbol)
                         : std::to_string(d.value);
}

void assume(std::vector<std::string> *assumptions, std::string relation) {
  if (assumptions && !llvm::is_contained(*assumptions, relation))
    assumptions->push_back(std::move(relation));
}

// Broadcasts one dim pair. A symbolic dim stands for an extent that is not
// broadcast (as Dynamo's 0/1 specialisation): against another symbol or an
// extent other than 1 the two must be equal, which is recorded.
std::optional<SymDim> broadcast_dim(const SymDim &a, const SymDim &b,
                                    std::vector<std::string> *assumptions) {
  if (a == b)
    return a;
  if (!a.is_symbolic() && a.value == 1)
    return b;
  if (!b.is_symbolic() && b.value == 1)
    return a;
  if (!a.is_symbolic() && !b.is_symbolic())
    return std::nullopt;
  if (a.is_symbolic() && b.is_symbolic()) {
    const SymDim &lo = a.symbol < b.symbol ? a : b,
                 &hi = a.symbol < b.symbol ? b : a;
    assume(assumptions, dim_string(lo) + " == " + dim_string(hi));
    return a; // keep the first
  }
  const SymDim &sym = a.is_symbolic() ? a : b, &ext = a.is_symbolic() ? b : a;
  assume(assumptions, dim_string(sym) + " == " + dim_string(ext));
  return ext;
}

std::optional<Shape> broadcast(const Shape &a, const Shape &b,
                               std::vector<std::string> *assumptions) {
  if (!a.ranked || !b.ranked)
    return Shape::unranked();
  size_t rank = std::max(a.dims.size(), b.dims.size());
  llvm::SmallVector<SymDim, 4> dims(rank);
  for (size_t i = 0; i < rank; ++i) { // right-aligned
    SymDim da =
        i < a.dims.size() ? a.dims[a.dims.size() - 1 - i] : SymDim::constant(1);
    SymDim db =
        i < b.dims.size() ? b.dims[b.dims.size() - 1 - i] : SymDim::constant(1);
    std::optional<SymDim> d = broadcast_dim(da, db, assumptions);
    if (!d)
      return std::nullopt;
    dims[rank - 1 - i] = *d;
  }
  return Shape::ranked_dims(dims);
}

using Fail = llvm::function_ref<llvm::Error(const std::string &)>;

llvm::Expected<Type> infer_pointwise(const Graph &g, const Node &n, Fail fail,
                                     std::vector<std::string> *assumptions) {
  const OpInfo &info = op_info(n.op);
  llvm::SmallVector<Type, 3> operands;
  for (NodeId o : n.operands)
    operands.push_back(g.node(o).type);
  if (info.rule == TypeRule::CAST) {
    // to / to_like / to_into: operand 0's shape in the target dtype
    // (operand 1 gives only its dtype).
    // A weak scalar converts to a weak scalar (ir::weak_cast_kind).
    if (operands[0].scalar) {
      if (std::optional<DType> kind = weak_cast_kind(n.cast_to);
          n.op == Op::Cast && kind)
        return Type::weak_scalar(*kind);
      return fail(std::string("'") + info.name +
                  "' of a weak scalar (" + dtype_name(operands[0].dtype) +
                  ") converts to f64, f32, i64, i32 or b8 only");
    }
    return Type::tensor(n.op == Op::Cast ? n.cast_to : operands[1].dtype,
                        operands[0].shape);
  }
  if (info.rule == TypeRule::WHERE && operands[0].dtype != DType::b8)
    return fail(std::string("the condition of 'where' must be b8, not ") +
                dtype_name(operands[0].dtype));
  DType dt = result_dtype(n.op, operands);
  if (result_is_scalar(operands))
    return Type::weak_scalar(dt);
  // As the runtime: booleans have no subtraction or negation (NO_B8).
  if (rejects_b8(n.op) && common_dtype(n.op, operands) == DType::b8)
    return fail(std::string("'") + info.name + "' is not supported on b8");

  std::optional<Shape> shape;
  for (NodeId o : n.operands) {
    const Type &t = g.node(o).type;
    if (t.scalar)
      continue;
    if (!shape) {
      shape = t.shape;
      continue;
    }
    std::optional<Shape> s = broadcast(*shape, t.shape, assumptions);
    if (!s)
      return fail("shapes " + to_string(*shape) + " and " + to_string(t.shape) +
                  " do not broadcast");
    shape = std::move(s);
  }
  return Type::tensor(dt, *shape);
}

// `x` reduced over `dims` into `out`; returns "" or what is wrong.
std::string reduce_shape(const Shape &x, llvm::ArrayRef<int64_t> dims,
                         bool keepdim, Shape &out) {
  if (!x.ranked) {
    std::string error = repeated_dim_error(dims);
    // Reducing all dims away leaves rank 0 whatever the rank was.
    out = dims.empty() && !keepdim ? Shape::ranked_dims({}) : Shape::unranked();
    return error;
  }
  ResolvedDims r = resolve_dims(dims, x.dims.size());
  if (!r.error.empty())
    return r.error;
  llvm::SmallVector<SymDim, 4> kept;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (!llvm::is_contained(r.dims, (int64_t)d))
      kept.push_back(x.dims[d]);
    else if (keepdim)
      kept.push_back(SymDim::constant(1));
  out = Shape::ranked_dims(kept);
  return "";
}

// The operands after x of a composite, by name (kiln/ops.def), and whether
// each is a tensor (NORM: the weight and bias before eps) or a weak scalar.
struct ExtraOperand {
  llvm::StringRef name;
  bool tensor;
};
llvm::SmallVector<ExtraOperand, 3> extra_operands(Op op) {
  llvm::SmallVector<ExtraOperand, 3> extra;
  llvm::SmallVector<llvm::StringRef, 4> names = operand_names(op);
  for (size_t i = 1; i < names.size(); ++i)
    extra.push_back({names[i], op_info(op).form == CompositeForm::NORM &&
                                   i + 1 < names.size()});
  return extra;
}

// Reductions, composites and reduce_size: operand 0 is reduced over the
// node's dims.
llvm::Expected<Type> infer_reduction(const Graph &g, const Node &n, Fail fail,
                                     std::vector<std::string> *assumptions) {
  const OpInfo &info = op_info(n.op);
  std::string op = std::string("'") + info.name + "'";
  const Type &x = g.node(n.operands[0]).type;
  if (x.scalar)
    return fail(op + " needs a tensor operand, not a weak scalar (" +
                dtype_name(x.dtype) + ")");
  if (info.kind == OpKind::Composite && !is_floating(x.dtype))
    return fail(op + " needs a floating tensor, not " + dtype_name(x.dtype));

  // Reductions and reduce_size reduce as sum does (REDUCE).
  CompositeForm how = info.kind == OpKind::Composite ? info.form
                                                     : CompositeForm::REDUCE;
  const bool count = n.op == Op::ReduceSize || n.op == Op::Size;
  if (n.op == Op::Size && n.dims.size() > 1)
    return fail(op + " reads one dim's extent (or, with no dims, the number "
                     "of elements): its dims are one dim, not " +
                dims_text(n.dims));
  if (n.keepdim && (how != CompositeForm::REDUCE || count))
    return fail(op + " has no use for keepdim=true: " +
                (count ? "its result is a number"
                                        : "its result has its operand's "
                                          "shape"));
  if (how == CompositeForm::NORM && (n.dims.size() != 1 || n.dims[0] != -1))
    return fail(op + " normalises over the last dim: its dims are [-1], not " +
                dims_text(n.dims));
  Shape reduced;
  std::string error = reduce_shape(x.shape, n.dims, n.keepdim, reduced);
  if (!error.empty())
    return fail(error);

  Shape shape = x.shape;
  if (how == CompositeForm::NORM && x.shape.ranked && x.shape.dims.empty())
    return fail(op + " needs an operand of rank >= 1, not " + to_string(x));
  llvm::SmallVector<ExtraOperand, 3> extra = extra_operands(n.op);
  for (size_t i = 0; i < extra.size(); ++i) {
    const Type &t = g.node(n.operands[i + 1]).type;
    std::string what = "the " + extra[i].name.str() + " of " + op;
    if (!extra[i].tensor) {
      if (!t.scalar)
        return fail(what + " must be a weak scalar, not " + to_string(t));
      continue;
    }
    // An absent weight or bias: the constant that leaves x as it is, bit
    // for bit (a weight of 1, a bias of -0.0).
    if (const Node &c = g.node(n.operands[i + 1]);
        t.scalar && c.op == Op::Constant &&
        (extra[i].name == "bias" ? c.constant == 0 && std::signbit(c.constant)
                                 : c.constant == 1))
      continue;
    if (t.scalar || t.dtype != x.dtype)
      return fail(what + " must be a tensor of x's dtype (" +
                  dtype_name(x.dtype) + "), not " + to_string(t) +
                  (t.scalar ? " (a weak scalar)" : ""));
    if (t.shape.ranked && t.shape.dims.size() != 1)
      return fail(what + " must have rank 1 (x's last dim), not " +
                  to_string(t));
    if (t.shape.ranked && x.shape.ranked) {
      const SymDim &w = t.shape.dims[0], &last = x.shape.dims.back();
      if (!w.is_symbolic() && !last.is_symbolic() && w.value != last.value)
        return fail(what + " is " + to_string(t) +
                    ", which does not match x's last dim (x is " +
                    to_string(x) + ")");
    }
    // As the decomposition multiplies and adds them: a symbolic last dim
    // becomes the weight's extent.
    shape = *broadcast(shape, t.shape, assumptions);
  }

  if (count)
    return Type::weak_scalar(DType::i64);
  if (how != CompositeForm::REDUCE)
    return Type::tensor(x.dtype, shape);
  return Type::tensor(result_dtype(n.op, {x}), reduced);
}

// attention(q, k, v, mask, is_causal[, scale]) (kiln/attention.h): q, k, v
// of one floating dtype and one rank >= 2; the result is q's shape with v's
// last dim. What only run-time sizes tell (heads, lengths, the mask's
// broadcast) the host checks before launching (kiln::gen::attention_shape).
llvm::Expected<Type> infer_attention(const Graph &g, const Node &n, Fail fail) {
  const Type &q = g.node(n.operands[0]).type, &k = g.node(n.operands[1]).type,
             &v = g.node(n.operands[2]).type, &m = g.node(n.operands[3]).type;
  const char *names[] = {"query", "key", "value"};
  for (int i = 0; i < 3; ++i) {
    const Type &t = g.node(n.operands[i]).type;
    if (t.scalar)
      return fail(std::string("'attention' needs a tensor ") + names[i] +
                  ", not a weak scalar");
    if (!is_floating(t.dtype))
      return fail(std::string("'attention' needs floating tensors, not ") +
                  names[i] + " of " + dtype_name(t.dtype));
    if (t.dtype != q.dtype)
      return fail(std::string("'attention' needs one dtype, not query of ") +
                  dtype_name(q.dtype) + " and " + names[i] + " of " +
                  dtype_name(t.dtype));
  }
  if (m.scalar ? g.node(n.operands[3]).op != Op::Constant
               : m.dtype != DType::b8 && m.dtype != q.dtype)
    return fail(std::string("'attention''s mask must be a b8 tensor or one "
                            "of the query's dtype (") +
                dtype_name(q.dtype) + "), or a constant for none, not " +
                to_string(m));
  for (size_t i = 4; i < n.operands.size(); ++i)
    if (!g.node(n.operands[i]).type.scalar)
      return fail(std::string("'attention''s ") +
                  (i == 4 ? "is_causal" : i == 5 ? "scale" : "products flag") +
                  " must be a host scalar, not a tensor");
  if (n.operands.size() == 7) {
    const Node &f = g.node(n.operands[6]);
    if (f.op != Op::Constant ||
        (f.constant != 0 && f.constant != 1 && f.constant != 2))
      return fail("'attention''s products flag must be a constant 0 (none), "
                  "1 (two matmuls) or 2 (two bmms)");
  }
  if (!q.shape.ranked)
    return Type::tensor(q.dtype);
  for (const Type *t : {&q, &k, &v})
    if (t->shape.ranked &&
        (t->shape.dims.size() < 2 || t->shape.dims.size() != q.shape.dims.size()))
      return fail("'attention' needs query, key and value of one rank >= 2, "
                  "not " + to_string(q) + ", " + to_string(k) + " and " +
                  to_string(v));
  if (!v.shape.ranked)
    return Type::tensor(q.dtype);
  llvm::SmallVector<SymDim, 4> out(q.shape.dims.begin(), q.shape.dims.end());
  out.back() = v.shape.dims.back();
  return Type::tensor(q.dtype, Shape::ranked_dims(out));
}

// cat(t0, ..., tn-1, dim) (kiln/join.h): tensors of one rank, the dim a
// constant; the result has their promoted dtype (torch.cat promotes) and
// their shape with the extents along dim added, where every extent is
// known; else what only run-time sizes tell (a size-0 1-D tensor, which
// torch skips) the host checks (kiln::gen::cat_shape).
llvm::Expected<Type> infer_cat(const Graph &g, const Node &n, Fail fail) {
  const Node &dn = g.node(n.operands.back());
  if (dn.op != Op::Constant || !dn.type.scalar || dn.type.dtype != DType::i64)
    return fail("the dim of 'cat' must be an i64 constant, not " +
                to_string(dn.type));
  const int64_t dim = int64_t(dn.constant);
  llvm::ArrayRef<NodeId> ts = llvm::ArrayRef<NodeId>(n.operands).drop_back();
  DType dt = g.node(ts[0]).type.dtype;
  bool known = true;
  for (NodeId t : ts) {
    const Type &tt = g.node(t).type;
    if (tt.scalar)
      return fail("'cat' joins tensors, not a weak scalar");
    dt = promote_types(dt, tt.dtype);
    known &= tt.shape.ranked;
  }
  if (!known)
    return Type::tensor(dt);
  const auto &first = g.node(ts[0]).type.shape.dims;
  const int64_t rank = int64_t(first.size());
  for (NodeId t : ts) {
    const auto &d = g.node(t).type.shape.dims;
    // A 1-D tensor may be the size-0 tensor torch skips: the host decides.
    if (int64_t(d.size()) != rank) {
      if (d.size() == 1 || rank == 1)
        return Type::tensor(dt);
      return fail("'cat' needs tensors of one rank, not " +
                  to_string(g.node(ts[0]).type) + " and " +
                  to_string(g.node(t).type));
    }
  }
  if (rank == 0)
    return fail("'cat' cannot join zero-dimensional tensors");
  if (dim < -rank || dim >= rank)
    return fail("'cat': dim " + std::to_string(dim) +
                " is out of range for tensors of rank " + std::to_string(rank));
  const size_t d = size_t(dim < 0 ? dim + rank : dim);
  llvm::SmallVector<SymDim, 4> out(first.begin(), first.end());
  int64_t along = 0;
  for (NodeId t : ts) {
    const auto &td = g.node(t).type.shape.dims;
    for (size_t k = 0; k < td.size(); ++k) {
      if (k == d || td[k].is_symbolic() || out[k].is_symbolic())
        continue;
      if (td[k].value != out[k].value && rank > 1)
        return fail("'cat': the sizes of " + to_string(g.node(ts[0]).type) +
                    " and " + to_string(g.node(t).type) +
                    " differ outside dim " + std::to_string(d));
    }
    if (td[d].is_symbolic())
      return Type::tensor(dt);
    along += td[d].value;
  }
  out[d] = SymDim::constant(along);
  return Type::tensor(dt, Shape::ranked_dims(out));
}

// store(base, dst, src): base's type. dst and src are tensors; src
// broadcasts to dst's shape without growing it (Tensor::copy_), which the
// host checks where the shapes are not known here.
llvm::Expected<Type> infer_store(const Graph &g, const Node &n, Fail fail) {
  const Type &base = g.node(n.operands[0]).type, &dst = g.node(n.operands[1]).type,
             &src = g.node(n.operands[2]).type;
  if (base.scalar || dst.scalar || src.scalar)
    return fail("'store' copies a tensor into a tensor, not a weak scalar");
  if (dst.shape.ranked && src.shape.ranked) {
    const auto &dd = dst.shape.dims, &sd = src.shape.dims;
    if (sd.size() > dd.size())
      return fail("'store': src " + to_string(src) + " has more dims than dst " +
                  to_string(dst));
    for (size_t i = 0; i < sd.size(); ++i) {
      const SymDim &s = sd[sd.size() - 1 - i], &d = dd[dd.size() - 1 - i];
      if (!s.is_symbolic() && !d.is_symbolic() && s.value != 1 &&
          s.value != d.value)
        return fail("'store': src " + to_string(src) +
                    " does not broadcast to dst " + to_string(dst));
    }
  }
  return base;
}

// matmul(a, b), bmm(a, b) and linear(x, w, b) with torch's shape rules:
// one floating dtype, the contracted extents equal where known, batch dims
// broadcast (bmm's: equal).
llvm::Expected<Type> infer_product(const Graph &g, const Node &n, Fail fail,
                                   std::vector<std::string> *assumptions) {
  if (n.op == Op::Attention)
    return infer_attention(g, n, fail);
  if (n.op == Op::Cat)
    return infer_cat(g, n, fail);
  if (n.op == Op::Store)
    return infer_store(g, n, fail);
  const std::string op = std::string("'") + op_info(n.op).name + "'";
  const Type &a = g.node(n.operands[0]).type, &b = g.node(n.operands[1]).type;
  for (const Type *t : {&a, &b}) {
    if (t->scalar)
      return fail(op + " needs tensor operands, not a weak scalar");
    if (!is_floating(t->dtype))
      return fail(op + " needs floating tensors, not " + dtype_name(t->dtype) +
                  " (integer and bool products are not supported)");
  }
  if (a.dtype != b.dtype)
    return fail(op + " needs operands of one dtype, not " +
                dtype_name(a.dtype) + " and " + dtype_name(b.dtype));
  if (n.op == Op::Linear) {
    const Node &bias = g.node(n.operands[2]);
    if (!(bias.op == Op::Constant && bias.type.scalar) &&
        (bias.type.scalar || bias.type.dtype != a.dtype))
      return fail(op + "'s bias must be a tensor of x's dtype (" +
                  dtype_name(a.dtype) + "), not " + to_string(bias.type));
  }
  if (!a.shape.ranked || !b.shape.ranked)
    return Type::tensor(a.dtype);
  const auto &ad = a.shape.dims, &bd = b.shape.dims;
  auto mismatch = [](const SymDim &x, const SymDim &y) {
    return !x.is_symbolic() && !y.is_symbolic() && x.value != y.value;
  };
  llvm::SmallVector<SymDim, 4> out;
  if (n.op == Op::Linear) {
    if (ad.empty() || (bd.size() != 1 && bd.size() != 2))
      return fail(op + " needs x of rank >= 1 and w of rank 1 or 2, not " +
                  to_string(a) + " and " + to_string(b));
    if (mismatch(ad.back(), bd.back()))
      return fail(op + ": x " + to_string(a) + " and w " + to_string(b) +
                  " do not fit (their last dims differ)");
    out.assign(ad.begin(), ad.end() - 1);
    if (bd.size() == 2)
      out.push_back(bd[0]);
    return Type::tensor(a.dtype, Shape::ranked_dims(out));
  }
  if (n.op == Op::Bmm) {
    if (ad.size() != 3 || bd.size() != 3)
      return fail(op + " needs 3-D operands, not " + to_string(a) + " and " +
                  to_string(b));
    if (mismatch(ad[0], bd[0]) || mismatch(ad[2], bd[1]))
      return fail(op + ": shapes " + to_string(a) + " and " + to_string(b) +
                  " cannot be multiplied (bmm's batches must be equal)");
    out = {ad[0], ad[1], bd[2]};
    return Type::tensor(a.dtype, Shape::ranked_dims(out));
  }
  if (ad.empty() || bd.empty())
    return fail(op + " needs operands of rank >= 1, not " + to_string(a) +
                " and " + to_string(b));
  const SymDim &kb = bd.size() == 1 ? bd[0] : bd[bd.size() - 2];
  if (mismatch(ad.back(), kb))
    return fail(op + ": shapes " + to_string(a) + " and " + to_string(b) +
                " cannot be multiplied");
  Shape ba = Shape::ranked_dims(
      llvm::ArrayRef<SymDim>(ad).drop_back(std::min<size_t>(2, ad.size())));
  Shape bb = Shape::ranked_dims(
      llvm::ArrayRef<SymDim>(bd).drop_back(std::min<size_t>(2, bd.size())));
  std::optional<Shape> batch = broadcast(ba, bb, assumptions);
  if (!batch)
    return fail(op + ": the batch dims of " + to_string(a) + " and " +
                to_string(b) + " do not broadcast");
  out.assign(batch->dims.begin(), batch->dims.end());
  if (ad.size() > 1)
    out.push_back(ad[ad.size() - 2]);
  if (bd.size() > 1)
    out.push_back(bd.back());
  return Type::tensor(a.dtype, Shape::ranked_dims(out));
}

// A layout op: operand 0's dtype; the shape where the operands say it at
// compile time (constant arguments, known extents), else unranked (the
// host computes it with the runtime's own geometry, kiln::view_layout).
// Dims arguments must be constants (what the plugin captures).
llvm::Expected<Type> infer_view(const Graph &g, const Node &n, Fail fail) {
  const std::string op = std::string("'") + op_info(n.op).name + "'";
  const Type &x = g.node(n.operands[0]).type;
  if (x.scalar)
    return fail(op + " needs a tensor, not a weak scalar");
  if (view_kind(n.op) == ViewKind::Broadcast) {
    // x expanded to the shape it and the other tensors broadcast to.
    Shape shape = x.shape;
    for (NodeId o : llvm::ArrayRef<NodeId>(n.operands).drop_front()) {
      const Type &t = g.node(o).type;
      if (t.scalar)
        return fail(op + " takes tensors, not " + to_string(t));
      std::optional<Shape> b = broadcast(shape, t.shape, nullptr);
      if (!b)
        return fail("shapes " + to_string(shape) + " and " +
                    to_string(t.shape) + " do not broadcast");
      shape = std::move(*b);
    }
    return Type::tensor(x.dtype, shape);
  }
  llvm::SmallVector<std::optional<int64_t>, 8> args;
  for (NodeId a : llvm::ArrayRef<NodeId>(n.operands).drop_front()) {
    const Node &an = g.node(a);
    if (!an.type.scalar || an.type.dtype != DType::i64)
      return fail("the arguments of " + op + " must be integers, not " +
                  to_string(an.type));
    args.push_back(an.op == Op::Constant
                       ? std::optional<int64_t>(int64_t(an.constant))
                       : std::nullopt);
  }
  const ViewKind k = view_kind(n.op);
  const bool dims_args = k == ViewKind::Transpose || k == ViewKind::Permute ||
                         k == ViewKind::Unsqueeze || k == ViewKind::Squeeze;
  if ((dims_args && llvm::any_of(args, [](auto a) { return !a; })) ||
      ((k == ViewKind::Slice || k == ViewKind::Part) && !args[0]) ||
      (k == ViewKind::Piece && (!args[0] || !args[1])))
    return fail("the dims of " + op + " must be constants");
  const Type unknown = Type::tensor(x.dtype);
  if (!x.shape.ranked)
    return unknown;
  const auto &xd = x.shape.dims;
  const int64_t rank = int64_t(xd.size());
  auto wrap = [&](int64_t d, int64_t r) -> std::optional<int64_t> {
    if (d < -std::max<int64_t>(r, 1) || d >= std::max<int64_t>(r, 1))
      return std::nullopt;
    return d < 0 ? d + std::max<int64_t>(r, 1) : d;
  };
  auto bad_dim = [&](int64_t d) {
    return fail(op + ": dim " + std::to_string(d) + " is out of range for " +
                to_string(x));
  };
  llvm::SmallVector<SymDim, 4> out(xd.begin(), xd.end());
  switch (k) {
  case ViewKind::Contiguous:
    return Type::tensor(x.dtype, x.shape);
  case ViewKind::Transpose: {
    auto d0 = wrap(*args[0], rank), d1 = wrap(*args[1], rank);
    if (!d0 || !d1)
      return bad_dim(!d0 ? *args[0] : *args[1]);
    if (rank)
      std::swap(out[*d0], out[*d1]);
    break;
  }
  case ViewKind::Permute: {
    if (int64_t(args.size()) != rank)
      return fail(op + ": the order names " + std::to_string(args.size()) +
                  " dims of " + to_string(x));
    llvm::SmallVector<bool, 8> seen(rank, false);
    for (int64_t i = 0; i < rank; ++i) {
      auto d = wrap(*args[i], rank);
      if (!d)
        return bad_dim(*args[i]);
      if (seen[*d])
        return fail(op + ": dim " + std::to_string(*d) + " appears twice");
      seen[*d] = true;
      out[i] = xd[*d];
    }
    break;
  }
  case ViewKind::Unsqueeze: {
    auto d = wrap(*args[0], rank + 1);
    if (!d)
      return bad_dim(*args[0]);
    out.insert(out.begin() + *d, SymDim::constant(1));
    break;
  }
  case ViewKind::Squeeze: {
    if (rank == 0)
      break;
    auto d = wrap(*args[0], rank);
    if (!d)
      return bad_dim(*args[0]);
    if (xd[*d].is_symbolic())
      return unknown; // a size 1 or not: known at run time
    if (xd[*d].value == 1)
      out.erase(out.begin() + *d);
    break;
  }
  case ViewKind::Broadcast: // above
    return unknown;
  case ViewKind::Part: {
    // Known when the tensor is broadcast along d or the length is known.
    const int64_t d = *args[0];
    if (d >= 0)
      return fail(op + ": dim " + std::to_string(d) + " must count from the end");
    if (rank < -d || (!xd[rank + d].is_symbolic() && xd[rank + d].value == 1))
      break;
    // A symbolic extent may be 1 at run time (the whole tensor).
    if (!args[2] || xd[rank + d].is_symbolic())
      return unknown;
    out[rank + d] = SymDim::constant(*args[2]);
    break;
  }
  case ViewKind::Slice: {
    auto d = wrap(*args[0], rank);
    if (!d || rank == 0)
      return bad_dim(*args[0]);
    if (!args[1] || !args[2] || !args[3] || xd[*d].is_symbolic())
      return unknown;
    int64_t len = xd[*d].value, start = *args[1], end = *args[2],
            step = *args[3];
    if (step <= 0)
      return fail(op + ": step must be positive, not " + std::to_string(step));
    start = start < 0 ? start + len : start;
    end = end < 0 ? end + len : end;
    start = std::clamp<int64_t>(start, 0, len);
    end = std::clamp<int64_t>(end, start, len);
    out[*d] = SymDim::constant((end - start + step - 1) / step);
    break;
  }
  case ViewKind::Piece: {
    // split's or chunk's piece: known when the extent and the cut are.
    auto d = wrap(*args[0], rank);
    if (!d || rank == 0)
      return bad_dim(*args[0]);
    if (!args[2] || !args[3] || xd[*d].is_symbolic())
      return unknown;
    const int64_t len = xd[*d].value, index = *args[1], chunks = *args[2],
                  size = *args[3];
    if (len == 0 || chunks < 0 || (chunks == 0 && size <= 0) ||
        (chunks > 0 && size != 0))
      return unknown; // the host's check decides (and eager raises)
    const int64_t width = chunks > 0 ? (len + chunks - 1) / chunks : size;
    if (index < 0 || index * width >= len)
      return fail(op + ": there is no piece " + std::to_string(index) +
                  " of " + to_string(x) + " along dim " + std::to_string(*d));
    out[*d] = SymDim::constant(std::min(len, index * width + width) -
                               index * width);
    break;
  }
  case ViewKind::Expand: {
    if (llvm::any_of(args, [](auto a) { return !a; }))
      return unknown;
    if (int64_t(args.size()) < rank)
      return fail(op + ": cannot expand " + to_string(x) + " to fewer dims");
    out.clear();
    const int64_t lead = int64_t(args.size()) - rank;
    for (int64_t i = 0; i < int64_t(args.size()); ++i) {
      const int64_t want = *args[i];
      if (i < lead) {
        if (want < 0)
          return fail(op + ": size -1 in a new leading dim");
        out.push_back(SymDim::constant(want));
        continue;
      }
      const SymDim &have = xd[i - lead];
      if (want == -1 || (!have.is_symbolic() && have.value == want))
        out.push_back(have);
      else if (!have.is_symbolic() && have.value == 1 && want >= 0)
        out.push_back(SymDim::constant(want));
      else if (have.is_symbolic())
        return unknown; // whether it is 1 or `want`: known at run time
      else
        return fail(op + ": cannot expand " + to_string(x) + " to size " +
                    std::to_string(want) + " in dim " + std::to_string(i));
    }
    break;
  }
  case ViewKind::View:
  case ViewKind::Reshape: {
    if (llvm::any_of(args, [](auto a) { return !a; }))
      return unknown;
    int64_t numel = 1, known = 1, infer = -1;
    bool symbolic = false;
    for (const SymDim &d : xd)
      symbolic |= d.is_symbolic(), numel *= d.is_symbolic() ? 1 : d.value;
    out.clear();
    for (auto [i, a] : llvm::enumerate(args)) {
      if (*a == -1 && infer < 0)
        infer = int64_t(i);
      else if (*a < 0)
        return fail(op + ": invalid size " + std::to_string(*a));
      else
        known *= *a;
      out.push_back(SymDim::constant(*a));
    }
    if (infer >= 0) {
      if (symbolic)
        return unknown;
      if (known == 0 || numel % known)
        return fail(op + ": the shape is invalid for " + to_string(x));
      out[infer] = SymDim::constant(numel / known);
    } else if (!symbolic && known != numel) {
      return fail(op + ": the shape is invalid for " + to_string(x));
    }
    break;
  }
  }
  return Type::tensor(x.dtype, Shape::ranked_dims(out));
}

} // namespace

llvm::Expected<Type> infer_node_type(const Graph &g, NodeId id,
                                     std::vector<std::string> *assumptions) {
  const Node &n = g.node(id);
  auto fail = [&](const std::string &message) -> llvm::Error {
    return llvm::make_error<PassError>(id, n.loc, value_names(g)[id], message);
  };
  switch (op_info(n.op).kind) {
  case OpKind::Argument:
  case OpKind::Constant:
    return n.type;
  case OpKind::Pointwise:
    return infer_pointwise(g, n, fail, assumptions);
  case OpKind::Reduction:
  case OpKind::Composite:
  case OpKind::Shape:
    return infer_reduction(g, n, fail, assumptions);
  case OpKind::Product:
    return infer_product(g, n, fail, assumptions);
  case OpKind::View:
    return infer_view(g, n, fail);
  }
  return n.type;
}

llvm::Expected<Graph> infer_types(const Graph &g, const PassOptions &) {
  Graph out = g;
  for (NodeId id = 0; id < (NodeId)out.nodes.size(); ++id) {
    llvm::Expected<Type> t = infer_node_type(out, id, &out.assumptions);
    if (!t)
      return t.takeError();
    out.nodes[id].type = std::move(*t);
  }
  return out;
}

} // namespace kiln::passes
