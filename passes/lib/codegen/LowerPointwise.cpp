// Pointwise kernels. Each fused kernel gets three CUDA flavours, chosen by
// the host code at run time:
//   vec      every tensor is contiguous with the output's element order and
//            16-byte aligned: 16-byte loads and stores, a grid-stride loop;
//   s32      any layout (broadcast, strided, transposed) through OffsetCalc
//            with 32-bit index arithmetic, when every offset fits;
//   s64      the same with 64-bit indices;
//   sv       s32's layouts where every operand is contiguous or broadcast
//            along the innermost dim (head views, row broadcasts): V
//            elements per thread, one OffsetCalc per V, 16-byte accesses;
// and two CPU loops (rt::cpu_launch splits the range across threads):
//   contig   every tensor is contiguous in the output's element order: one
//            flat `omp simd` loop the vectoriser turns into SIMD code;
//   strided  any layout: rows of the innermost dim, each row's start found
//            through OffsetCalc, then a strided inner loop.
#include "Lower.h"

#include <llvm/ADT/STLExtras.h>

#include <functional>

namespace kiln::codegen {

using namespace low;

namespace {

std::string header(const ir::Graph &g, const sched::Kernel &k, int ki,
                   const std::string &dt, const std::string &what) {
  return "@" + g.name + ", kernel " + std::to_string(ki) + " (" +
         std::to_string(k.nodes.size()) + " ops), " + dt +
         " variant" + what;
}

Expr in(size_t i) { return var("in" + std::to_string(i)); }
Expr out(size_t j) { return var("out" + std::to_string(j)); }
Expr sc(int i) { return var("s" + std::to_string(i)); }

// `from + <this thread's index in the grid>`, threadIdx/blockIdx as CUDA
// spells them.
Expr global_thread(const std::string &index_type, Expr from = {}) {
  Expr blocks = cast(index_type, var("blockIdx.x")) * var("blockDim.x");
  return (from ? from + blocks : blocks) + var("threadIdx.x");
}

// The body of a vector flavour's loop after its loads: an output vector per
// output, the element statements V times over lane j, then each vector
// stored at `at(y)`.
void vector_body(const ir::Graph &g, const sched::Kernel &k, Stmts &loop,
                 const std::function<Expr(size_t)> &at, Stmts &hoist) {
  Expr V = var("V"), j = var("j");
  for (auto [y, o] : llvm::enumerate(k.outputs))
    loop.push_back(decl("",
                        std::string("kiln::gen::Vec<") +
                            storage_type(g.node(o).type.dtype) + ", V>",
                        "y" + std::to_string(y)));
  ElementAccess va;
  va.scalar = sc;
  va.load = [&](int x) { return var("x" + std::to_string(x)).field("v")[j]; };
  va.store = [&](int y) { return var("y" + std::to_string(y)).field("v")[j]; };
  va.hoist = &hoist;
  va.uniform_load = [](int x) { return in(size_t(x))[int64_t(0)]; };
  loop.push_back(for_loop(decl("", "int", "j", lit(0)), j < V, pre_inc(j),
                          element_stmts(g, k, va), LoopHint::Unroll));
  for (size_t y = 0; y < k.outputs.size(); ++y)
    loop.push_back(eval(call("kiln::gen::vec_store",
                             {at(y), var("y" + std::to_string(y))})));
}

Function cuda_vec(const ir::Graph &g, const sched::Kernel &k, int ki,
                  const std::string &symbol, const std::string &dt) {
  const int v = vector_width(g, k);
  Function f;
  f.flavour = "vec";
  f.name = kernel_name(symbol, ki, dt, f.flavour);
  f.header = header(g, k, ki, dt,
                    ": contiguous operands, " + std::to_string(v) +
                        " elements per 16-byte access");
  f.launch_bounds = "256";
  f.params = {{"const int64_t", "n"}};
  for (Param &p : kernel_params(g, k, "__restrict__"))
    f.params.push_back(std::move(p));

  Expr V = var("V"), n = var("n"), t = var("t"), i = var("i"),
       step = var("step"), nvec = var("nvec");
  f.body.push_back(decl("constexpr", "int", "V", lit(v)));
  f.body.push_back(decl("const", "int64_t", "nvec", n / V));
  f.body.push_back(decl("const", "int64_t", "step",
                        cast("int64_t", var("gridDim.x")) * var("blockDim.x")));
  Stmts loop, hoist;
  for (size_t x = 0; x < k.inputs.size(); ++x)
    if (!uniform_input(g, k.inputs[x]))
      loop.push_back(decl("const", "auto", "x" + std::to_string(x),
                          call("kiln::gen::vec_load<V>", {in(x) + t * V})));
  vector_body(g, k, loop, [&](size_t y) { return out(y) + t * V; }, hoist);
  for (Stmt &h : hoist)
    f.body.push_back(std::move(h));
  f.body.push_back(for_loop(decl("", "int64_t", "t", global_thread("int64_t")),
                            t < nvec, binary("+=", t, step), std::move(loop)));
  f.body.push_back(comment("The last n % V elements."));
  ElementAccess ta;
  ta.scalar = sc;
  ta.load = [&](int x) { return in(x)[i]; };
  ta.store = [&](int y) { return out(y)[i]; };
  f.body.push_back(for_loop(
      decl("", "int64_t", "i", global_thread("int64_t", nvec * V)), i < n,
      binary("+=", i, step), element_stmts(g, k, ta)));
  return f;
}

Function cuda_strided(const ir::Graph &g, const sched::Kernel &k, int ki,
                      const std::string &symbol, const std::string &dt,
                      bool wide) {
  const size_t nout = k.outputs.size(), nops = nout + k.inputs.size();
  const std::string index = wide ? "int64_t" : "uint32_t";
  Function f;
  f.flavour = wide ? "s64" : "s32";
  f.name = kernel_name(symbol, ki, dt, f.flavour);
  f.header = header(g, k, ki, dt, ": any layout, " + index + " offsets");
  f.launch_bounds = "256";
  f.params = {{"const int64_t", "n"},
              {"const kiln::OffsetCalc<" + std::to_string(nops) + ">", "calc"}};
  for (Param &p : kernel_params(g, k, "__restrict__"))
    f.params.push_back(std::move(p));

  Expr i = var("i"), off = var("off"), step = var("step");
  f.body.push_back(decl("const", index, "step",
                        cast(index, var("gridDim.x")) * var("blockDim.x")));
  Stmts loop, hoist;
  loop.push_back(decl_array(index, "off", std::to_string(nops)));
  loop.push_back(eval(method(var("calc"), "get", {i, off})));
  ElementAccess a;
  a.scalar = sc;
  a.load = [&](int x) { return in(x)[off[int64_t(nout + x)]]; };
  a.store = [&](int y) { return out(y)[off[int64_t(y)]]; };
  a.hoist = &hoist;
  a.uniform_load = [](int x) { return in(size_t(x))[int64_t(0)]; };
  for (Stmt &s : element_stmts(g, k, a))
    loop.push_back(std::move(s));
  for (Stmt &h : hoist)
    f.body.push_back(std::move(h));
  f.body.push_back(for_loop(decl("", index, "i", global_thread(index)),
                            i < cast(index, var("n")), binary("+=", i, step),
                            std::move(loop)));
  return f;
}

// The s32 layouts whose innermost dim every operand reads contiguously or
// broadcast (kiln::gen::inner_vec): a thread owns V consecutive elements of
// a row, finds their offsets once and moves them in 16-byte vectors (an
// operand broadcast along the row loads one element for all V).
Function cuda_strided_vec(const ir::Graph &g, const sched::Kernel &k, int ki,
                          const std::string &symbol, const std::string &dt) {
  const int v = vector_width(g, k);
  const size_t nout = k.outputs.size(), nops = nout + k.inputs.size();
  Function f;
  f.flavour = "sv";
  f.name = kernel_name(symbol, ki, dt, f.flavour);
  f.header = header(g, k, ki, dt,
                    ": contiguous or broadcast inner dim, " +
                        std::to_string(v) + " elements per thread");
  f.launch_bounds = "256";
  f.params = {{"const int64_t", "n"},
              {"const kiln::OffsetCalc<" + std::to_string(nops) + ">", "calc"}};
  for (Param &p : kernel_params(g, k, "__restrict__"))
    f.params.push_back(std::move(p));

  Expr V = var("V"), t = var("t"), off = var("off"), step = var("step"),
       calc = var("calc");
  f.body.push_back(decl("constexpr", "int", "V", lit(v)));
  f.body.push_back(decl("const", "uint32_t", "nvec",
                        cast("uint32_t", var("n") / V)));
  f.body.push_back(decl("const", "uint32_t", "step",
                        cast("uint32_t", var("gridDim.x")) * var("blockDim.x")));
  f.body.push_back(decl("const", "int", "r", calc.field("rank") - lit(1)));
  for (size_t x = 0; x < k.inputs.size(); ++x)
    if (!uniform_input(g, k.inputs[x]))
      f.body.push_back(decl(
          "const", "bool", "c" + std::to_string(x),
          calc.field("strides")[var("r")][int64_t(nout + x)] != lit(0)));
  Stmts loop, hoist;
  loop.push_back(decl_array("uint32_t", "off", std::to_string(nops)));
  loop.push_back(eval(method(calc, "get", {t * V, off})));
  for (size_t x = 0; x < k.inputs.size(); ++x)
    if (!uniform_input(g, k.inputs[x]))
      loop.push_back(decl("const", "auto", "x" + std::to_string(x),
                          call("kiln::gen::vec_load_or_splat<V>",
                               {in(x) + off[int64_t(nout + x)],
                                var("c" + std::to_string(x))})));
  vector_body(g, k, loop,
              [&](size_t y) { return out(y) + off[int64_t(y)]; }, hoist);
  for (Stmt &h : hoist)
    f.body.push_back(std::move(h));
  f.body.push_back(for_loop(decl("", "uint32_t", "t", global_thread("uint32_t")),
                            t < var("nvec"), binary("+=", t, step),
                            std::move(loop)));
  return f;
}

// `const auto &c = *static_cast<const <ctx> *>(p);`
Stmt unpack_ctx(const Kernel &kl) {
  return decl("const", "auto &", "c",
              deref(call("static_cast<const " + kl.prefix + "_ctx *>",
                         {var("p")})));
}

} // namespace

Kernel lower_pointwise_cuda(const ir::Graph &g, const sched::Kernel &k, int ki,
                            const std::string &symbol, const std::string &dt) {
  Kernel kl;
  kl.index = ki;
  kl.target = Target::Cuda;
  kl.prefix = kernel_name(symbol, ki, dt);
  kl.functions.push_back(cuda_vec(g, k, ki, symbol, dt));
  kl.functions.push_back(cuda_strided(g, k, ki, symbol, dt, false));
  kl.functions.push_back(cuda_strided(g, k, ki, symbol, dt, true));
  kl.functions.push_back(cuda_strided_vec(g, k, ki, symbol, dt));
  return kl;
}

Kernel lower_pointwise_cpu(const ir::Graph &g, const sched::Kernel &k, int ki,
                           const std::string &symbol, const std::string &dt) {
  const size_t nout = k.outputs.size(), nops = nout + k.inputs.size();
  Kernel kl;
  kl.index = ki;
  kl.target = Target::Cpu;
  kl.prefix = kernel_name(symbol, ki, dt);
  kl.header = header(g, k, ki, dt, ", CPU");
  kl.ctx = kernel_params(g, k, "");
  kl.ctx.push_back({"kiln::OffsetCalc<" + std::to_string(nops) + ">", "calc"});
  Expr c = var("c");
  auto scalars = [&](Stmts &body) {
    for (auto [x, s] : llvm::enumerate(k.scalars))
      body.push_back(decl("const", storage_type(g.node(s).type.dtype),
                          "s" + std::to_string(x),
                          c.field("s" + std::to_string(x))));
  };

  Function contig;
  contig.flavour = "contig";
  contig.name = kernel_name(symbol, ki, dt, contig.flavour);
  contig.body.push_back(unpack_ctx(kl));
  for (auto [x, i] : llvm::enumerate(k.inputs))
    contig.body.push_back(decl(
        "const", std::string(storage_type(g.node(i).type.dtype)) +
                     (k.restricted_input(int(x)) ? " *__restrict" : " *"),
        "in" + std::to_string(x), c.field("in" + std::to_string(x))));
  for (auto [y, o] : llvm::enumerate(k.outputs))
    contig.body.push_back(decl(
        "", std::string(storage_type(g.node(o).type.dtype)) +
                (k.restricted_output(int(y)) ? " *__restrict" : " *"),
        "out" + std::to_string(y), c.field("out" + std::to_string(y))));
  scalars(contig.body);
  Expr i = var("i");
  ElementAccess a;
  a.scalar = sc;
  a.load = [&](int x) { return in(x)[i]; };
  a.store = [&](int y) { return out(y)[i]; };
  contig.body.push_back(for_loop(decl("", "int64_t", "i", var("begin")),
                                 i < var("end"), pre_inc(i),
                                 element_stmts(g, k, a), LoopHint::Simd));
  kl.functions.push_back(std::move(contig));

  Function strided;
  strided.flavour = "strided";
  strided.name = kernel_name(symbol, ki, dt, strided.flavour);
  Stmts &b = strided.body;
  b.push_back(unpack_ctx(kl));
  scalars(b);
  b.push_back(comment("begin/end count rows of the innermost dim."));
  Expr r = var("r"), calc = c.field("calc"), inner = var("inner"),
       row = var("row"), j = var("j"), off = var("off");
  b.push_back(decl("const", "int", "r", calc.field("rank")));
  b.push_back(decl("const", "int64_t", "inner",
                   select(r, calc.field("sizes")[r - 1], lit(1))));
  for (size_t o = 0; o < nops; ++o)
    b.push_back(decl("const", "int64_t", "st" + std::to_string(o),
                     select(r, calc.field("strides")[r - 1][int64_t(o)],
                            lit(0))));
  Stmts rows;
  rows.push_back(decl_array("int64_t", "off", std::to_string(nops)));
  rows.push_back(eval(method(calc, "get", {row * inner, off})));
  for (size_t y = 0; y < nout; ++y)
    rows.push_back(decl("", k.restricted_output(int(y)) ? "auto *__restrict" : "auto *",
                        "out" + std::to_string(y),
                        c.field("out" + std::to_string(y)) + off[int64_t(y)]));
  for (size_t x = 0; x < k.inputs.size(); ++x)
    rows.push_back(decl("const",
                        k.restricted_input(int(x)) ? "auto *__restrict" : "auto *",
                        "in" + std::to_string(x),
                        c.field("in" + std::to_string(x)) +
                            off[int64_t(nout + x)]));
  ElementAccess sa;
  sa.scalar = sc;
  sa.load = [&](int x) {
    return in(x)[j * var("st" + std::to_string(nout + x))];
  };
  sa.store = [&](int y) { return out(y)[j * var("st" + std::to_string(y))]; };
  rows.push_back(for_loop(decl("", "int64_t", "j", lit(0)), j < inner,
                          pre_inc(j), element_stmts(g, k, sa)));
  b.push_back(for_loop(decl("", "int64_t", "row", var("begin")),
                       row < var("end"), pre_inc(row), std::move(rows)));
  kl.functions.push_back(std::move(strided));
  return kl;
}

} // namespace kiln::codegen
