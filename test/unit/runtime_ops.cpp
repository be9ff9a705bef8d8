// Every op of kiln/ops.def, in every dtype where it applies, against the
// float64 reference of runtime_reference.h: contiguous, strided and
// broadcast layouts, tensor-scalar and scalar-tensor forms, mixed dtypes.
// The CUDA twin runs the same cases on the GPU and checks them against the
// CPU result as well as the reference.
#include "runtime_reference.h"

#include <random>
#include <sstream>

using namespace kiln;
using namespace kt;

namespace {

constexpr int64_t kRows = 37, kCols = 19;

enum class Layout { Contiguous, Strided, Broadcast, BroadcastRows, Scalar };

// One operand: its logical values over [kRows, kCols] (or a scalar).
struct Input {
  Layout layout = Layout::Contiguous;
  DType dtype = f32;
  std::vector<double> vals; // row-major [kRows, kCols], already in dtype
  double scalar = 0;
  bool scalar_float = true;
};

std::mt19937_64 &rng() {
  static std::mt19937_64 r(20261121);
  return r;
}

// Values a tensor of `dt` holds: random plus NaN/inf/-0 and other edges.
double random_value(DType dt, kiln::OpId op, int k) {
  static const double edges[] = {0.0,  -0.0,  1.0,   -1.0,   0.5,    -2.5,
                                 3.0,  INFINITY, -INFINITY, NAN, 1e-30, 65504.0,
                                 1e5,  1e-40, 100.0, -100.0, 0.1,    -7.25};
  auto &r = rng();
  if (dt == b8)
    return double(r() & 1);
  if (is_integral(dt)) {
    if (op == OpId::Pow)
      return k == 0 ? double(int(r() % 9) - 4) : double(int(r() % 8) - 2);
    return double(int(r() % 41) - 20);
  }
  if (r() % 5 == 0)
    return edges[r() % (sizeof edges / sizeof edges[0])];
  return std::normal_distribution<double>(0, 2)(r);
}

Input make_input(DType dt, Layout layout, kiln::OpId op, int k) {
  Input in;
  in.layout = layout;
  in.dtype = dt;
  in.vals.resize(kRows * kCols);
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j) {
      double v;
      if (layout == Layout::Broadcast && i > 0)
        v = in.vals[j]; // rows repeat row 0
      else if (layout == Layout::BroadcastRows && j > 0)
        v = in.vals[i * kCols]; // columns repeat column 0
      else
        v = round_to(dt, random_value(dt, op, k));
      in.vals[i * kCols + j] = v;
    }
  return in;
}

Input scalar_input(double v, bool is_float) {
  Input in;
  in.layout = Layout::Scalar;
  in.scalar = v;
  in.scalar_float = is_float;
  in.dtype = is_float ? f64 : i64;
  return in;
}

// Builds the operand's tensor on `dev` in its layout (views made there).
Tensor build(const Input &in, Device dev) {
  std::vector<double> base;
  switch (in.layout) {
  case Layout::Contiguous:
    return from_vector(in.vals, {kRows, kCols}).to(in.dtype).to(dev);
  case Layout::Strided: {
    // Row-major [kRows, 2 * kCols] with the values in even columns.
    base.assign(kRows * 2 * kCols, 42.0);
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kCols; ++j)
        base[i * 2 * kCols + 2 * j] = in.vals[i * kCols + j];
    Tensor t = from_vector(base, {kRows, 2 * kCols}).to(in.dtype).to(dev);
    return t.slice(1, 0, 2 * kCols, 2);
  }
  case Layout::Broadcast: {
    base.assign(in.vals.begin(), in.vals.begin() + kCols);
    return from_vector(base, {kCols}).to(in.dtype).to(dev);
  }
  case Layout::BroadcastRows: {
    for (int64_t i = 0; i < kRows; ++i)
      base.push_back(in.vals[i * kCols]);
    return from_vector(base, {kRows, 1}).to(in.dtype).to(dev);
  }
  case Layout::Scalar:
    break;
  }
  return {};
}

// A transposed layout: the values of a [kCols, kRows] tensor seen as
// [kRows, kCols].
Tensor build_transposed(const Input &in, Device dev) {
  std::vector<double> t(kRows * kCols);
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j)
      t[j * kRows + i] = in.vals[i * kCols + j];
  return from_vector(t, {kCols, kRows}).to(in.dtype).to(dev).transpose(0, 1);
}

struct Case {
  const OpEntry *op;
  std::vector<Input> inputs;
  bool transpose_first = false; // operand 0 as a transposed view
  std::string label;
};

// Runs the op on `dev` (operands built there), returns the result.
Tensor run_case(const Case &c, Device dev, std::vector<Tensor> &keep) {
  keep.clear();
  std::vector<Operand> ops;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Input &in = c.inputs[k];
    if (in.layout == Layout::Scalar)
      continue;
    Tensor t = k == 0 && c.transpose_first ? build_transposed(in, dev)
                                           : build(in, dev);
    // A unary op's broadcast operand is an expanded (stride 0) view.
    if (c.inputs.size() == 1 && in.layout == Layout::Broadcast)
      t = t.expand({kRows, kCols});
    keep.push_back(t);
  }
  size_t next = 0;
  for (const Input &in : c.inputs) {
    if (in.layout == Layout::Scalar) {
      if (in.scalar_float)
        ops.emplace_back(in.scalar);
      else
        ops.emplace_back(int64_t(in.scalar));
    } else {
      ops.emplace_back(keep[next++]);
    }
  }
  switch (ops.size()) {
  case 1:
    return pointwise(c.op->op, {ops[0]});
  case 2:
    return pointwise(c.op->op, {ops[0], ops[1]});
  default:
    return pointwise(c.op->op, {ops[0], ops[1], ops[2]});
  }
}

struct Expected {
  DType result, common;
  bool integral;
  std::vector<double> vals;
};

// The reference result of a case: promotion by PyTorch's rules, operands
// converted to the common type, the float64 formula, rounding to the result.
Expected expect(const Case &c) {
  const OpEntry &e = *c.op;
  int first_value = e.rule == Rule::WHERE ? 1 : 0;
  bool have_tensor = false, float_scalar = false;
  DType common = b8;
  for (size_t k = first_value; k < c.inputs.size(); ++k)
    if (c.inputs[k].layout != Layout::Scalar) {
      common = have_tensor ? promote_types(common, c.inputs[k].dtype)
                           : c.inputs[k].dtype;
      have_tensor = true;
    }
  for (size_t k = first_value; k < c.inputs.size(); ++k)
    if (c.inputs[k].layout == Layout::Scalar) {
      float_scalar |= c.inputs[k].scalar_float;
      if (have_tensor)
        common = promote_with_scalar(common, c.inputs[k].dtype);
    }
  if (!have_tensor)
    common = float_scalar ? f32 : i64;
  Expected x;
  x.common = common;
  x.result = e.rule == Rule::FLOAT     ? to_floating(common)
             : e.rule == Rule::COMPARE ? b8
                                       : common;
  DType compute = e.rule == Rule::FLOAT ? x.result : common;
  x.integral = !is_floating(compute);
  x.vals.resize(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    double v[3] = {0, 0, 0};
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const Input &in = c.inputs[k];
      double raw = in.layout == Layout::Scalar ? in.scalar : in.vals[i];
      v[k] = int(k) < first_value || in.layout == Layout::Scalar
                 ? raw
                 : round_to(common, raw);
    }
    x.vals[i] = round_to(x.result, reference(e.op, v[0], v[1], v[2],
                                             x.integral, compute));
  }
  return x;
}

double first_value_of(const Case &c, int64_t i) {
  const Input &in = c.inputs[c.op->rule == Rule::WHERE ? 1 : 0];
  return in.layout == Layout::Scalar ? in.scalar : in.vals[i];
}

std::string show(const Case &c, int64_t i) {
  std::ostringstream s;
  s << c.label << " element " << i << " inputs (";
  for (size_t k = 0; k < c.inputs.size(); ++k)
    s << (k ? ", " : "")
      << (c.inputs[k].layout == Layout::Scalar ? c.inputs[k].scalar
                                               : c.inputs[k].vals[i]);
  s << ")";
  return s.str();
}

// Checks a result against the reference; with `cpu` also against the CPU
// result (CUDA twin). Reports the first bad element only.
void check_case(const Case &c, const Tensor &got, const Tensor *cpu) {
  Expected x = expect(c);
  ASSERT_EQ(got.dtype(), x.result) << c.label;
  ASSERT_EQ(got.sizes(), (Dims{kRows, kCols})) << c.label;
  ASSERT_TRUE(got.is_contiguous()) << c.label;
  std::vector<double> g = values(got), h;
  if (cpu)
    h = values(*cpu);
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    Tolerance tol = tolerance_for(c.op->op, x.result, x.integral,
                                  first_value_of(c, i));
    if (!tol.ok(g[i], x.vals[i])) {
      ADD_FAILURE() << show(c, i) << ": got " << g[i] << ", float64 reference "
                    << x.vals[i] << " (" << dtype_name(x.result) << ")";
      return;
    }
    if (cpu) {
      Tolerance twin = tol;
      twin.rtol *= 2;
      twin.atol *= 2;
      if (!twin.ok(g[i], h[i])) {
        ADD_FAILURE() << show(c, i) << ": CUDA " << g[i] << " vs CPU " << h[i];
        return;
      }
    }
  }
}

void run_and_check(const Case &c, Device dev) {
  SCOPED_TRACE(c.label);
  std::vector<Tensor> keep;
  Tensor cpu = run_case(c, Device::cpu(), keep);
  check_case(c, cpu, nullptr);
  if (dev.is_cuda()) {
    Tensor gpu = run_case(c, dev, keep);
    EXPECT_EQ(gpu.device(), dev);
    check_case(c, gpu, &cpu);
  }
}

bool op_rejects(const OpEntry &e, DType dt) {
  return dt == b8 && e.no_b8;
}

// All cases of one op in one dtype: layouts, scalar forms.
std::vector<Case> cases_for(const OpEntry &e, DType dt) {
  std::vector<Case> out;
  auto tensor_case = [&](std::vector<Layout> layouts, bool transpose_first,
                         const std::string &what) {
    Case c;
    c.op = &e;
    c.transpose_first = transpose_first;
    for (int k = 0; k < e.arity; ++k) {
      DType d = (e.rule == Rule::WHERE && k == 0) ? b8 : dt;
      c.inputs.push_back(make_input(d, layouts[k], e.op, k));
    }
    c.label = std::string(e.name) + " " + dtype_name(dt) + " " + what;
    out.push_back(std::move(c));
  };
  using L = Layout;
  std::vector<L> contig(e.arity, L::Contiguous);
  tensor_case(contig, false, "contiguous");
  tensor_case({L::Contiguous, L::Strided, L::Strided}, true, "strided");
  if (e.arity == 1) {
    tensor_case({L::Broadcast}, false, "broadcast");
  } else {
    std::vector<L> b = contig;
    b.back() = L::Broadcast;
    tensor_case(b, false, "broadcast-last");
    b = contig;
    b.front() = L::BroadcastRows;
    tensor_case(b, false, "broadcast-first");
  }
  // Scalar forms: float and integer numbers in each non-condition slot.
  int first_value = e.rule == Rule::WHERE ? 1 : 0;
  for (int k = first_value; k < e.arity && e.arity > 1; ++k)
    for (bool is_float : {true, false}) {
      Case c;
      c.op = &e;
      for (int j = 0; j < e.arity; ++j) {
        DType d = (e.rule == Rule::WHERE && j == 0) ? b8 : dt;
        if (j == k)
          c.inputs.push_back(
              scalar_input(is_float ? (j == 2 ? 2.5 : -1.5) : (j == 2 ? 3 : -2),
                           is_float));
        else
          c.inputs.push_back(make_input(d, L::Contiguous, e.op, j));
      }
      c.label = std::string(e.name) + " " + dtype_name(dt) + " scalar in slot " +
                std::to_string(k) + (is_float ? " (float)" : " (int)");
      out.push_back(std::move(c));
    }
  return out;
}

class OpTest : public ::testing::TestWithParam<std::tuple<int, Device>> {
protected:
  void SetUp() override {
    if (dev().is_cuda() && !cuda_available())
      GTEST_SKIP() << "no CUDA GPU: skipped";
  }
  const OpEntry &op() const { return all_ops()[std::get<0>(GetParam())]; }
  Device dev() const { return std::get<1>(GetParam()); }
};

TEST_P(OpTest, EveryDtypeAndLayoutMatchesFloat64Reference) {
  for (DType dt : all_dtypes()) {
    if (op_rejects(op(), dt)) {
      Tensor x = ones({3}, dt, dev());
      if (op().arity == 1)
        EXPECT_KILN_ERROR(pointwise(op().op, {x}), "not supported on b8");
      else
        EXPECT_KILN_ERROR(pointwise(op().op, {x, x}), "not supported on b8");
      continue;
    }
    for (const Case &c : cases_for(op(), dt))
      run_and_check(c, dev());
  }
}

// Operands of different dtypes promote and convert first.
TEST_P(OpTest, MixedDtypesPromote) {
  const std::pair<DType, DType> mixes[] = {
      {f16, f32}, {bf16, f16}, {i32, f16}, {i64, f64}, {b8, i32}, {i32, i64}, {bf16, f64}};
  for (auto [d0, d1] : mixes) {
    if (op().arity == 1)
      return;
    Case c;
    c.op = &op();
    int first_value = op().rule == Rule::WHERE ? 1 : 0;
    if (first_value)
      c.inputs.push_back(make_input(b8, Layout::Contiguous, op().op, 0));
    c.inputs.push_back(make_input(d0, Layout::Contiguous, op().op, 0));
    c.inputs.push_back(make_input(d1, Layout::Strided, op().op, 1));
    if (int(c.inputs.size()) < op().arity)
      c.inputs.push_back(make_input(d0, Layout::Broadcast, op().op, 2));
    c.label = std::string(op().name) + " " + dtype_name(d0) + " with " +
              dtype_name(d1);
    run_and_check(c, dev());
  }
}

// Large tensors: several OpenMP chunks on the CPU, many blocks and the
// vector tail on the GPU; a large strided case too.
TEST_P(OpTest, LargeContiguousAndStrided) {
  for (DType dt : {f32, f16}) {
    int64_t n = 389 * 387 + 10; // odd: a vector tail on the GPU
    std::vector<Tensor> ins;
    std::vector<std::vector<double>> vals;
    for (int k = 0; k < op().arity; ++k) {
      DType d = op().rule == Rule::WHERE && k == 0 ? b8 : dt;
      std::vector<double> v(n);
      for (auto &x : v)
        x = round_to(d, random_value(d, op().op, k));
      vals.push_back(v);
      ins.push_back(from_vector(v, {n}).to(d).to(dev()));
    }
    Tensor r = op().arity == 1   ? pointwise(op().op, {ins[0]})
               : op().arity == 2 ? pointwise(op().op, {ins[0], ins[1]})
                                 : pointwise(op().op, {ins[0], ins[1], ins[2]});
    DType result = op().rule == Rule::COMPARE ? b8 : dt;
    ASSERT_EQ(r.dtype(), result);
    std::vector<double> g = values(r);
    for (int64_t i = 0; i < n; ++i) {
      double v[3] = {vals[0][i], op().arity > 1 ? vals[1][i] : 0,
                     op().arity > 2 ? vals[2][i] : 0};
      double want =
          round_to(result, reference(op().op, v[0], v[1], v[2], false, result));
      Tolerance tol = tolerance_for(op().op, result, false,
                                    op().rule == Rule::WHERE ? v[1] : v[0]);
      if (!tol.ok(g[i], want)) {
        ADD_FAILURE() << op().name << " " << dtype_name(dt) << " element " << i
                      << ": got " << g[i] << ", want " << want;
        break;
      }
    }
    // Strided: a transposed [389, 387] view of operand 0.
    Tensor t = from_vector(std::vector<double>(vals[0].begin(),
                                               vals[0].begin() + 389 * 387),
                           {387, 389})
                   .to(ins[0].dtype())
                   .to(dev())
                   .transpose(0, 1);
    std::vector<Tensor> sins = {t};
    for (int k = 1; k < op().arity; ++k)
      sins.push_back(ins[k].slice(0, 0, 389 * 387).view({389, 387}));
    Tensor s = op().arity == 1   ? pointwise(op().op, {sins[0]})
               : op().arity == 2 ? pointwise(op().op, {sins[0], sins[1]})
                                 : pointwise(op().op, {sins[0], sins[1], sins[2]});
    std::vector<double> sv = values(s), t0 = values(t);
    for (int64_t i = 0; i < 389 * 387; ++i) {
      double v[3] = {t0[i], op().arity > 1 ? vals[1][i] : 0,
                     op().arity > 2 ? vals[2][i] : 0};
      double want =
          round_to(result, reference(op().op, v[0], v[1], v[2], false, result));
      Tolerance tol = tolerance_for(op().op, result, false,
                                    op().rule == Rule::WHERE ? v[1] : v[0]);
      if (!tol.ok(sv[i], want)) {
        ADD_FAILURE() << op().name << " " << dtype_name(dt)
                      << " strided element " << i << ": got " << sv[i]
                      << ", want " << want;
        break;
      }
    }
  }
}

std::string op_case_name(const ::testing::TestParamInfo<std::tuple<int, Device>> &i) {
  return std::string(all_ops()[std::get<0>(i.param)].name) + "_" +
         (std::get<1>(i.param).is_cpu() ? "cpu" : "cuda");
}

INSTANTIATE_TEST_SUITE_P(
    Ops, OpTest,
    ::testing::Combine(::testing::Range(0, int(all_ops().size())),
                       ::testing::Values(Device::cpu(), Device::cuda(0))),
    op_case_name);

} // namespace
