// Fused reduction kernels (see schedule.h for the model: full and reduced
// values, passes over a row). Each kernel is emitted as:
//   CUDA rows   a row (or a warp's row) per thread group, the inputs read in
//               more than one pass kept in registers: one read of memory;
//   CUDA loop   rows too long for registers: each pass re-reads the row;
//   CUDA split  few long rows: each pass is a launch over row chunks, the
//               reductions combined through per-chunk partials (in fixed
//               order: results are deterministic);
//   CPU rows    rows in parallel, each pass a blocked loop over the row;
//   CPU split   few long rows: chunks in parallel, as CUDA split.
// The host code (HostFunction.cpp) picks one at run time.
#include "Emit.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <set>

namespace kiln::codegen {

using ir::NodeId;
using ir::Op;
using sched::Role;

namespace {

// Tiles a split kernel's thread loads before it uses any in a pass that
// only reduces (where(sum) over 2^26 f32 on an H200, hand-written kernels
// in bench/experiments/row_variants.cu at commit 3ae925a44d, results in
// bench/results/2026-11-21-h200.md: one 0.2163 ms, four 0.2078, eight 0.2070).
constexpr int kTiles = 4;
// Partials a combine thread loads before it combines any.
constexpr int kCombine = 8;
// Elements a CPU reduction adds in order before its pairwise combination
// (the eager CPU reductions add 16 rows of a column in order, 64 of a row).
constexpr int kCpuBlock = 16;

// How a slot's elements are read and written: decided at run time by
// sp.vec, or known to be 16-byte vectors, or known to be element by element.
enum class Access { Either, Vector, Scalar };

struct Red {
  const ir::Graph &g;
  const sched::Kernel &k;
  int ki;
  const std::string &symbol;
  DType variant;
  size_t nout = k.outputs.size(), nin = k.inputs.size();

  std::string name(const char *path) const {
    return kernel_name(symbol, ki, variant, path);
  }
  const char *op_name(NodeId r) const { return ir::op_info(g.node(r).op).name; }
  bool is_argmax(NodeId r) const { return g.node(r).op == Op::Argmax; }
  // The type elements are combined in, and the accumulator's type.
  std::string elem_type(NodeId r) const {
    const ir::Node &n = g.node(r);
    return compute_type(is_argmax(r) ? g.node(n.operands[0]).type.dtype
                                     : n.type.dtype);
  }
  std::string acc_type(NodeId r) const {
    return is_argmax(r) ? "kiln::scalar::ArgAcc<" + elem_type(r) + ">"
                        : elem_type(r);
  }
  std::string init(NodeId r) const {
    return "kiln::scalar::init_" + std::string(op_name(r)) + "<" +
           elem_type(r) + ">()";
  }
  std::string acc(NodeId r) const { return "acc" + std::to_string(r); }
  // a combined with b, a holding the earlier elements.
  std::string combine_expr(NodeId r, const std::string &a,
                           const std::string &b) const {
    return std::string("kiln::scalar::combine_") + op_name(r) + "(" + a + ", " +
           b + ")";
  }
  std::string combine(NodeId r, const std::string &into,
                      const std::string &value) const {
    return into + " = " + combine_expr(r, into, value) + ";";
  }
  std::string functor(NodeId r) const {
    return "kiln::gen::red_" + std::string(op_name(r));
  }

  std::vector<NodeId> reductions_in(int pass) const {
    std::vector<NodeId> rs;
    for (NodeId r : k.reductions)
      if (k.phase[r] - 1 == pass)
        rs.push_back(r);
    return rs;
  }
  bool full(NodeId id) const { return k.role[id] == Role::Full; }
  // Register mode keeps a full value in registers for later passes when a
  // later-phase value uses it and recomputing it would cost more than a
  // few cheap ops (its cone has a transcendental or a division): softmax
  // keeps exp(x - m), layer norm recomputes x - m from x.
  static bool expensive(Op op) { return ir::is_expensive(op); }
  bool costly(NodeId id) const {
    const ir::Node &n = g.node(id);
    if (!full(id) || !ir::is_pointwise(n.op))
      return false;
    if (expensive(n.op))
      return true;
    for (NodeId o : n.operands)
      if (costly(o))
        return true;
    return false;
  }
  bool kept(NodeId id) const {
    if (!full(id) || !ir::is_pointwise(g.node(id).op) || !costly(id))
      return false;
    for (NodeId c : k.nodes)
      if (full(c) && k.need[c] != 0 && k.phase[c] > k.phase[id] &&
          llvm::is_contained(g.node(c).operands, id))
        return true;
    return false;
  }
  // The full values register mode computes in `pass`: those of its phase
  // the pass needs, and what they need that is not kept from earlier.
  std::set<NodeId> pass_nodes(int pass) const {
    std::set<NodeId> nodes;
    std::function<void(NodeId)> visit = [&](NodeId id) {
      if (!full(id) || !ir::is_pointwise(g.node(id).op) || nodes.count(id) ||
          (k.phase[id] < pass && kept(id)))
        return;
      nodes.insert(id);
      for (NodeId o : g.node(id).operands)
        visit(o);
    };
    for (NodeId r : reductions_in(pass))
      visit(g.node(r).operands[0]);
    for (size_t j = 0; j < nout; ++j)
      if (out_full(j) && out_phase(j) == pass)
        visit(k.outputs[j]);
    for (NodeId id : k.nodes)
      if (k.phase[id] == pass && kept(id))
        visit(id);
    return nodes;
  }
  // Register mode keeps in registers, for the whole row, the inputs its
  // first pass reads; an input only later passes read (a weight, a bias)
  // is read in its pass, from the cache when it is the same for every row:
  // holding it too cost layer norm a quarter of its occupancy on an H200.
  bool cached_input(size_t i) const { return needed(k.inputs[i], 0); }
  bool needed(NodeId id, int pass) const { return (k.need[id] >> pass) & 1; }
  int out_phase(size_t j) const { return k.phase[k.outputs[j]]; }
  bool out_full(size_t j) const { return full(k.outputs[j]); }
  const char *storage(NodeId id) const { return storage_type(g.node(id).type.dtype); }

  // The last launch of split mode (a reduced output may be ready only
  // after the last pass).
  int last_launch() const {
    int last = k.passes - 1;
    for (size_t j = 0; j < nout; ++j)
      if (!out_full(j))
        last = std::max(last, out_phase(j));
    return last;
  }

  llvm::DenseMap<NodeId, std::string> row_values() const {
    llvm::DenseMap<NodeId, std::string> expr;
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      expr[sc] = "s" + std::to_string(i);
    for (NodeId id : k.nodes)
      if (!full(id))
        expr[id] = var(id);
    return expr;
  }

  // `o`, `i`, and each operand's base offset b<j> and R stride rs<j>.
  void row_setup(llvm::raw_ostream &os, const std::string &ind) const {
    os << ind << "const int64_t o = row / sp.inner, i = row - o * sp.inner;\n";
    for (size_t j = 0; j < nout + nin; ++j)
      os << ind << "const int64_t b" << j << " = o * st.s[" << j
         << "][0] + i * st.s[" << j << "][2], rs" << j << " = st.s[" << j
         << "][1];\n";
  }

  // Values that do not depend on the row's elements: sizes and scalar math.
  void prologue(llvm::raw_ostream &os, const std::string &ind) const {
    auto expr = row_values();
    for (NodeId id : k.nodes) {
      if (k.role[id] != Role::None)
        continue;
      if (g.node(id).op == Op::ReduceSize)
        os << ind << "const int64_t " << var(id) << " = R; // "
           << describe_node(g, g.node(id)) << "\n";
      else
        emit_pointwise_node(os, g, id, expr, ind);
    }
  }

  void declare_accumulators(llvm::raw_ostream &os, int pass,
                            const std::string &ind,
                            const std::string &prefix = "acc") const {
    for (NodeId r : reductions_in(pass))
      os << ind << acc_type(r) << " " << prefix << r << " = " << init(r)
         << ";\n";
  }

  // One element of pass `pass`: its inputs' values, the full values the
  // pass needs, accumulation, and the full outputs of this phase.
  //
  // With `carried` (register mode), each full value is computed once, in
  // the pass of its phase, and a value a later pass uses is kept per
  // element in registers (t<id>[k * V + j]) instead of being recomputed
  // from the inputs: softmax computes exp once, not twice.
  void element(llvm::raw_ostream &os, int pass,
               const std::function<std::string(size_t)> &load,
               const std::function<std::string(size_t, const std::string &)>
                   &store,
               const std::string &index, const std::string &prefix,
               const std::string &ind, bool carried = false) const {
    auto expr = row_values();
    std::set<NodeId> computed;
    if (carried)
      computed = pass_nodes(pass);
    // Values this pass uses: computed here, or (carried) from registers.
    auto uses = [&](NodeId id) {
      if (!carried)
        return needed(id, pass);
      for (NodeId c : computed)
        if (llvm::is_contained(g.node(c).operands, id))
          return true;
      for (NodeId r : reductions_in(pass))
        if (g.node(r).operands[0] == id)
          return true;
      for (size_t j = 0; j < nout; ++j)
        if (k.outputs[j] == id && out_full(j) && out_phase(j) == pass)
          return true;
      return false;
    };
    if (carried)
      for (NodeId id : k.nodes)
        if (kept(id) && k.phase[id] < pass && uses(id))
          expr[id] = "t" + std::to_string(id) + "[k * V + j]";
    for (auto [i, in] : llvm::enumerate(k.inputs)) {
      if (!uses(in))
        continue;
      os << ind << "const " << value_type(g.node(in)) << " " << var(in)
         << " = kiln::scalar::load(" << load(i) << ");";
      if (!g.node(in).name.empty())
        os << " // " << g.node(in).name;
      os << "\n";
      expr[in] = var(in);
    }
    for (NodeId id : k.nodes) {
      if (carried ? !computed.count(id) : !full(id) || !needed(id, pass))
        continue;
      emit_pointwise_node(os, g, id, expr, ind);
      expr[id] = var(id);
      if (carried && kept(id) && k.phase[id] == pass)
        os << ind << "t" << id << "[k * V + j] = " << var(id) << ";\n";
    }
    for (NodeId r : reductions_in(pass)) {
      // argmax's ties and order are those of the values eager stored.
      const NodeId x = g.node(r).operands[0];
      std::string v =
          operand_expr(g, x, elem_type(r).c_str(),
                       is_argmax(r) && rounds_in_eager(g, x) ? rounded(g, x, expr)
                                                            : expr);
      if (is_argmax(r))
        v = acc_type(r) + "{" + v + ", " + index + "}";
      os << ind << combine(r, prefix + std::to_string(r), v) << " // "
         << describe_node(g, g.node(r)) << "\n";
    }
    for (size_t j = 0; j < nout; ++j) {
      NodeId o = k.outputs[j];
      if (!out_full(j) || out_phase(j) != pass)
        continue;
      os << ind
         << store(j, "kiln::scalar::store<" + std::string(storage(o)) + ">(" +
                         operand_expr(g, o, value_type(g.node(o)), expr) + ")")
         << "\n";
    }
  }

  // After the reductions of `pass` are complete: their results, the
  // per-row values they make ready, and the reduced outputs among them.
  // How the epilogue writes reduced output j's value v: `out<j>[b<j>] = v;`,
  // under `guard` (the one thread or work item of the row that writes) on
  // a line of its own at `ind` when there is one.
  static std::function<std::string(size_t, const std::string &)>
  reduced_store(std::string guard, std::string ind) {
    return [guard, ind](size_t j, const std::string &v) {
      const std::string J = std::to_string(j);
      const std::string store = "out" + J + "[b" + J + "] = " + v + ";";
      return guard.empty() ? store : "if (" + guard + ")\n" + ind + store;
    };
  }

  void epilogue(llvm::raw_ostream &os, int pass,
                const std::function<std::string(size_t, const std::string &)>
                    &store,
                const std::string &ind, bool write_outputs = true) const {
    auto expr = row_values();
    for (NodeId r : reductions_in(pass))
      os << ind << "const " << value_type(g.node(r)) << " " << var(r) << " = "
         << acc(r) << (is_argmax(r) ? ".index" : "") << "; // "
         << describe_node(g, g.node(r)) << "\n";
    for (NodeId id : k.nodes)
      if (k.role[id] == Role::Reduced && !ir::is_reduction(g.node(id).op) &&
          k.phase[id] == pass + 1)
        emit_pointwise_node(os, g, id, expr, ind);
    for (size_t j = 0; j < nout && write_outputs; ++j) {
      NodeId o = k.outputs[j];
      if (out_full(j) || out_phase(j) != pass + 1)
        continue;
      os << ind
         << store(j, "kiln::scalar::store<" + std::string(storage(o)) + ">(" +
                         operand_expr(g, o, value_type(g.node(o)), expr) + ")")
         << "\n";
    }
  }

  std::string in_ptr(size_t i) const { return "in" + std::to_string(i); }
  size_t in_op(size_t i) const { return nout + i; } // RowStrides operand

  // ---- CUDA ----

  std::string header(const char *what) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "// @" << g.name << ", kernel " << ki << " (reduction, " << k.nodes.size()
       << " ops, " << k.passes << " pass" << (k.passes == 1 ? "" : "es") << "), "
       << dtype_name(variant) << " variant: " << what << "\n";
    return s;
  }

  // Loads of input i for the slot starting at element e: a 16-byte vector
  // when sp.vec, else element by element below `limit` (Either: decided at
  // run time; Vector / Scalar: the caller knows which).
  void load_slot(llvm::raw_ostream &os, const std::string &dst, size_t i,
                 const std::string &limit, const std::string &ind,
                 Access a = Access::Either) const {
    const std::string J = std::to_string(in_op(i)), base = "b" + J;
    access(os, a, ind,
           dst + " = kiln::gen::vec_load<V>(" + in_ptr(i) + " + " + base + " + e);",
           dst + ".v[j] = " + in_ptr(i) + "[" + base + " + (e + j) * rs" + J +
               "];",
           limit);
  }

  // A slot's access as `a` says: the 16-byte `vector` statement, or
  // `scalar` for each element j below `limit`, or both behind sp.vec.
  static void access(llvm::raw_ostream &os, Access a, const std::string &ind,
                     const std::string &vector, const std::string &scalar,
                     const std::string &limit) {
    if (a == Access::Vector) {
      os << ind << vector << "\n";
      return;
    }
    if (a == Access::Either)
      os << ind << "if (sp.vec) {\n" << ind << "  " << vector << "\n" << ind
         << "} else {\n";
    os << ind << "#pragma unroll\n"
       << ind << "  for (int j = 0; j < V; ++j)\n"
       << ind << "    if (e + j < " << limit << ")\n"
       << ind << "      " << scalar << "\n";
    if (a == Access::Either)
      os << ind << "}\n";
  }

  // Loads slot e of each input pass `pass` reads into x<i><sub>.
  void load_inputs(llvm::raw_ostream &os, int pass, const std::string &limit,
                   const std::string &ind, const std::string &sub,
                   Access a = Access::Either) const {
    for (auto [i, in] : llvm::enumerate(k.inputs))
      if (needed(in, pass))
        load_slot(os, "x" + std::to_string(i) + sub, i, limit, ind, a);
  }

  // The body of one slot of pass `pass`, elements e .. e+V-1 below `limit`:
  // loads the inputs into x<i> first, or, with `sub`, reads them from
  // x<i><sub> where load_inputs put them.
  // With Access::Vector the whole slot is below `limit` (sp.vec: R is a
  // multiple of V), so the elements go unchecked.
  void cuda_slot(llvm::raw_ostream &os, int pass, const std::string &limit,
                 const std::string &ind, const std::string &sub = "",
                 Access a = Access::Either) const {
    if (sub.empty()) {
      for (auto [i, in] : llvm::enumerate(k.inputs))
        if (needed(in, pass))
          os << ind << "kiln::gen::Vec<" << storage(in) << ", V> x" << i << ";\n";
      load_inputs(os, pass, limit, ind, "", a);
    }
    for (size_t j = 0; j < nout; ++j)
      if (out_full(j) && out_phase(j) == pass)
        os << ind << "kiln::gen::Vec<" << storage(k.outputs[j]) << ", V> y" << j
           << ";\n";
    // Predicated, not `break`: the loop must unroll fully so that the
    // slot arrays stay in registers.
    os << ind << "#pragma unroll\n"
       << ind << "for (int j = 0; j < V; ++j) {\n"
       << ind << "  const int64_t r = e + j;\n"
       << ind << "  if (" << (a == Access::Vector ? "true" : "r < " + limit)
       << ") {\n";
    auto load = [&](size_t i) {
      return "x" + std::to_string(i) + sub + ".v[j]";
    };
    auto store = [](size_t j, const std::string &v) {
      return "y" + std::to_string(j) + ".v[j] = " + v + ";";
    };
    element(os, pass, load, store, "r", "acc", ind + "    ");
    os << ind << "  }\n" << ind << "}\n";
    for (size_t j = 0; j < nout; ++j) {
      if (!out_full(j) || out_phase(j) != pass)
        continue;
      const std::string J = std::to_string(j);
      access(os, a, ind,
             "kiln::gen::vec_store(out" + J + " + b" + J + " + e, y" + J + ");",
             "out" + J + "[b" + J + " + (e + j) * rs" + J + "] = y" + J +
                 ".v[j];",
             limit);
    }
  }

  void row_reduce(llvm::raw_ostream &os, int pass, const std::string &ind) const {
    for (NodeId r : reductions_in(pass))
      os << ind << acc(r) << " = kiln::gen::row_reduce<" << functor(r) << ">(" << acc(r)
         << ", tpr, reinterpret_cast<" << acc_type(r) << " *>(kiln_smem));\n";
  }

  std::string kernel_open(const std::string &kname, bool partials) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "extern \"C\" __global__ void __launch_bounds__(512)\n"
       << kname << "(const kiln::RowSpace sp, const kiln::RowStrides<"
       << nout + nin << "> st" << cuda_params(g, k)
       << (partials ? ",\n    char *__restrict__ partials" : "") << ") {\n"
       << "  constexpr int V = " << vector_width(g, k) << ";\n"
       << "  __shared__ double kiln_smem[64]; // block reductions: 32 x 16 B\n"
       << "  const int64_t R = sp.R;\n";
    return s;
  }

  // `, in0, out0, s0`: the parameters cuda_params declares, as arguments.
  std::string param_names() const {
    std::string n;
    for (size_t i = 0; i < nin; ++i)
      n += ", in" + std::to_string(i);
    for (size_t j = 0; j < nout; ++j)
      n += ", out" + std::to_string(j);
    for (size_t i = 0; i < k.scalars.size(); ++i)
      n += ", s" + std::to_string(i);
    return n;
  }

  // Register mode: every input of a row is read once, 16 bytes at a time,
  // into registers; each full value is computed once, in the pass of its
  // phase, and kept in registers for the later passes that use it. It
  // needs rows that are contiguous, aligned and a multiple of V long
  // (sp.vec); anything else runs in loop mode. One template over SLOTS
  // (16-byte slots per thread and input) and one kernel per SLOTS: the host
  // code picks the smallest that holds the row.
  void cuda_rows_registers(llvm::raw_ostream &os) const {
    std::string kname = name("rows");
    os << header("a row per thread group, held in registers");
    os << "template <int SLOTS> // sp.vpt <= SLOTS; R <= 512 * SLOTS * V\n"
       << "__device__ __forceinline__ void\n"
       << kname << "_impl(const kiln::RowSpace &sp, const kiln::RowStrides<"
       << nout + nin << "> &st" << cuda_params(g, k) << ") {\n"
       << "  constexpr int V = " << vector_width(g, k) << ";\n"
       << "  __shared__ double kiln_smem[64]; // block reductions: 32 x 16 B\n"
       << "  const int R = int(sp.R); // a multiple of V\n"
       << "  const int tpr = sp.tpr;\n"
       << "  const int lane = threadIdx.x % tpr;\n"
       << "  const int64_t groups = blockDim.x / tpr;\n";
    std::string ind = "    ";
    auto slots_open = [&](const std::string &in) {
      os << in << "#pragma unroll\n"
         << in << "for (int k = 0; k < SLOTS; ++k) {\n"
         << in << "  const int e = (lane + k * tpr) * V;\n"
         << in << "  if (k < sp.vpt && e < R) {\n";
    };
    auto slots_close = [&](const std::string &in) {
      os << in << "  }\n" << in << "}\n";
    };
    // Each row reads its inputs afresh, also one that is the same for every
    // row (then from the cache). Keeping such an input for the next row, as
    // before, kept every input's registers live across rows for a run-time
    // check that is false for x; without it the kernels measure the same
    // or a little faster (H200, kiln_bench, median of 3 alternating runs,
    // before -> after: softmax 0.0749 -> 0.0748 ms, RMS norm 0.0727 ->
    // 0.0724, layer norm 0.1384 -> 0.1384).
    for (auto [i, in] : llvm::enumerate(k.inputs))
      if (cached_input(i))
        os << "  kiln::gen::Vec<" << storage(in) << ", V> c" << i << "[SLOTS]; // "
           << (g.node(in).name.empty() ? "input" : g.node(in).name) << "\n";
    os << "  for (int64_t row = int64_t(blockIdx.x) * groups + threadIdx.x / tpr;"
          " row < sp.rows; row += int64_t(gridDim.x) * groups) {\n";
    os << ind << "const int64_t o = sp.inner == 1 ? row : row / sp.inner;\n"
       << ind << "const int64_t i = row - o * sp.inner;\n";
    for (size_t j = 0; j < nout + nin; ++j)
      os << ind << "const int64_t b" << j << " = o * st.s[" << j
         << "][0] + i * st.s[" << j << "][2];\n";
    prologue(os, ind);
    for (size_t i = 0; i < nin; ++i) {
      if (!cached_input(i))
        continue;
      slots_open(ind);
      os << ind << "    c" << i << "[k] = kiln::gen::vec_load<V>(in" << i << " + b"
         << in_op(i) << " + e);\n";
      slots_close(ind);
    }
    for (NodeId id : k.nodes)
      if (kept(id))
        os << ind << value_type(g.node(id)) << " t" << id
           << "[SLOTS * V]; // " << describe_node(g, g.node(id))
           << ", kept for a later pass\n";
    for (int p = 0; p < k.passes; ++p) {
      os << ind << "// pass " << p << "\n";
      declare_accumulators(os, p, ind);
      slots_open(ind);
      std::string in3 = ind + "    ";
      for (size_t j = 0; j < nout; ++j)
        if (out_full(j) && out_phase(j) == p)
          os << in3 << "kiln::gen::Vec<" << storage(k.outputs[j]) << ", V> y" << j
             << ";\n";
      // Inputs of this pass that are not kept for the row: read now.
      std::set<NodeId> computed = pass_nodes(p);
      for (auto [i, in] : llvm::enumerate(k.inputs)) {
        if (cached_input(i))
          continue;
        bool used = false;
        for (NodeId c : computed)
          used |= llvm::is_contained(g.node(c).operands, in);
        for (NodeId r : reductions_in(p))
          used |= g.node(r).operands[0] == in;
        if (used)
          os << in3 << "const kiln::gen::Vec<" << storage(in) << ", V> x" << i
             << " = kiln::gen::vec_load<V>(in" << i << " + b" << in_op(i) << " + e);\n";
      }
      os << in3 << "#pragma unroll\n" << in3 << "for (int j = 0; j < V; ++j) {\n";
      auto load = [this](size_t i) {
        return (cached_input(i) ? "c" : "x") + std::to_string(i) +
               (cached_input(i) ? "[k].v[j]" : ".v[j]");
      };
      auto store = [](size_t j, const std::string &v) {
        return "y" + std::to_string(j) + ".v[j] = " + v + ";";
      };
      element(os, p, load, store, "(e + j)", "acc", in3 + "  ", true);
      os << in3 << "}\n";
      for (size_t j = 0; j < nout; ++j)
        if (out_full(j) && out_phase(j) == p)
          os << in3 << "kiln::gen::vec_store(out" << j << " + b" << j << " + e, y" << j
             << ");\n";
      slots_close(ind);
      row_reduce(os, p, ind);
      epilogue(os, p, reduced_store("lane == 0", "        "), ind);
    }
    os << "  }\n}\n\n";
    // Row groups of up to 512 threads with 1 or 2 slots each (up to 128
    // registers), up to 256 with 4 (up to 255 registers).
    for (int slots = 1; slots <= register_slots(g, k); slots *= 2)
      os << "extern \"C\" __global__ void __launch_bounds__("
         << (slots <= 2 ? "512" : "256, 2") << ")\n"
         << kname << slots << "(const kiln::RowSpace sp, const kiln::RowStrides<"
         << nout + nin << "> st" << cuda_params(g, k) << ") {\n  " << kname
         << "_impl<" << slots << ">(sp, st" << param_names() << ");\n}\n\n";
  }

  // Loop mode: a block per row; each pass re-reads the row from memory (it
  // is too long for registers, or not contiguous), any layout.
  void cuda_rows_loop(llvm::raw_ostream &os) const {
    os << header("a row per block, each pass re-reads the row");
    os << kernel_open(name("loop"), false);
    os << "  const int tpr = blockDim.x;\n"
       << "  const int lane = threadIdx.x;\n"
       << "  for (int64_t row = blockIdx.x; row < sp.rows; row += gridDim.x) {\n";
    std::string ind = "    ";
    row_setup(os, ind);
    prologue(os, ind);
    for (int p = 0; p < k.passes; ++p) {
      os << ind << "// pass " << p << "\n";
      declare_accumulators(os, p, ind);
      os << ind << "for (int64_t e = int64_t(lane) * V; e < R; e += int64_t(tpr) * V) {\n";
      cuda_slot(os, p, "R", ind + "  ");
      os << ind << "}\n";
      row_reduce(os, p, ind);
      epilogue(os, p, reduced_store("lane == 0", "        "), ind);
    }
    os << "  }\n}\n\n";
  }

  // Partial buffers: one per reduction, rows * splits accumulators each.
  void partial_pointers(llvm::raw_ostream &os, const std::string &ind) const {
    os << ind << "size_t poff = 0;\n";
    for (NodeId r : k.reductions)
      os << ind << acc_type(r) << " *part" << r << " = reinterpret_cast<"
         << acc_type(r) << " *>(partials + poff);\n"
         << ind << "poff += (sizeof(" << acc_type(r)
         << ") * sp.rows * sp.splits + 15) & ~size_t(15);\n";
  }

  // Split mode: few long rows, each split over many blocks. Pass p is a
  // launch of the split kernel over all blocks, each accumulating its
  // tiles into one partial per reduction; then a launch of the combine
  // kernel, a block per row, folds the partials (in a fixed order: the
  // result does not depend on timing) into the first slot, where every
  // block of the next pass reads one value.
  // Does pass `pass` write a full output?
  bool writes_full(int pass) const {
    for (size_t j = 0; j < nout; ++j)
      if (out_full(j) && out_phase(j) == pass)
        return true;
    return false;
  }

  void cuda_split(llvm::raw_ostream &os) const {
    // A kernel per pass (split0, split1, ...), each with only its own
    // pass's registers: one kernel switching on sp.pass took the largest
    // pass's (where(sum): 46 registers instead of 32, 5 blocks per
    // multiprocessor instead of 8). Each block owns a run of neighbouring
    // tiles of tpr slots. Passes alternate direction, so that a pass starts
    // on the end of the row the previous pass read last, which L2 still
    // holds (where(sum), hand-written: 0.2124 ms forward, 0.2078 mirrored).
    auto no_store = [](size_t, const std::string &) { return std::string(); };
    for (int launch = 0; launch < k.passes; ++launch) {
      os << header(("few long rows: pass " + std::to_string(launch) +
                    " over the row's tiles")
                       .c_str());
      os << kernel_open(name(("split" + std::to_string(launch)).c_str()), true);
      os << "  const int tpr = blockDim.x, lane = threadIdx.x;\n"
         << "  const int64_t row = blockIdx.x / sp.splits, split = "
            "blockIdx.x % sp.splits;\n"
         << "  const int64_t tile = int64_t(tpr) * V, tiles = (R + tile - 1) / "
            "tile;\n"
         << "  const int64_t per = (tiles + sp.splits - 1) / sp.splits;\n"
         << "  const int64_t t0 = split * per, t1 = t0 + per < tiles ? "
            "t0 + per : tiles;\n";
      std::string in2 = "  ";
      row_setup(os, in2);
      prologue(os, in2);
      partial_pointers(os, in2);
      for (int q = 0; q < launch; ++q) {
        os << in2 << "// the reductions of pass " << q << ", combined\n";
        for (NodeId r : reductions_in(q))
          os << in2 << "const " << acc_type(r) << " " << acc(r) << " = part" << r
             << "[row * sp.splits];\n";
        epilogue(os, q, no_store, in2, false);
      }
      os << in2 << "// pass " << launch << " over this block's tiles\n";
      declare_accumulators(os, launch, in2);
      const std::string tile_at =
          launch % 2 ? "(tiles - 1 - (t + u))" : "(t + u)";
      // The loop twice, 16-byte slots and element by element (a tile at a
      // time: the slow path), so that neither carries the other's
      // registers. A pass that only reduces loads kTiles tiles before it
      // uses any; one that writes goes a tile at a time (its stores keep
      // memory busy; four tiles there measured slower: 0.2089 vs 0.2062).
      for (Access a : {Access::Vector, Access::Scalar}) {
        os << in2 << (a == Access::Vector ? "if (sp.vec) {\n" : "} else {\n");
        const int n = a == Access::Vector && !writes_full(launch) ? kTiles : 1;
        std::string in3 = in2 + "  ", in4 = in3 + "  ", in5 = in4 + "  ",
                    in6 = in5 + "  ";
        os << in3 << "for (int64_t t = t0; t < t1; t += " << n << ") {\n";
        for (auto [i, in] : llvm::enumerate(k.inputs))
          if (needed(in, launch))
            os << in4 << "kiln::gen::Vec<" << storage(in) << ", V> x" << i << "["
               << n << "];\n";
        for (int phase = 0; phase < 2; ++phase) {
          os << in4 << "#pragma unroll\n"
             << in4 << "for (int u = 0; u < " << n << "; ++u) {\n"
             << in5 << "const int64_t e = " << tile_at
             << " * tile + int64_t(lane) * V;\n"
             << in5 << "if (t + u < t1 && e < R) {\n";
          if (phase == 0)
            load_inputs(os, launch, "R", in6, "[u]", a);
          else
            cuda_slot(os, launch, "R", in6, "[u]", a);
          os << in5 << "}\n" << in4 << "}\n";
        }
        os << in3 << "}\n";
      }
      os << in2 << "}\n";
      row_reduce(os, launch, in2);
      for (NodeId r : reductions_in(launch))
        os << in2 << "if (lane == 0)\n"
           << in2 << "  part" << r << "[row * sp.splits + split] = " << acc(r)
           << ";\n";
      os << "}\n\n";
    }

    std::string ind = "  ";
    os << header("few long rows: combines a pass's partials, a block per row");
    os << kernel_open(name("combine"), true);
    os << "  const int tpr = blockDim.x, lane = threadIdx.x;\n"
       << "  const int64_t row = blockIdx.x;\n";
    row_setup(os, ind);
    prologue(os, ind);
    partial_pointers(os, ind);
    for (int q = 0; q < k.passes; ++q) {
      if (reductions_in(q).empty())
        continue;
      os << ind << "if (sp.pass == " << q + 1 << ") {\n";
      std::string in2 = ind + "  ";
      for (int e = 0; e < q; ++e) {
        for (NodeId r : reductions_in(e))
          os << in2 << "const " << acc_type(r) << " " << acc(r) << " = part" << r
             << "[row * sp.splits];\n";
        epilogue(os, e, no_store, in2, false);
      }
      declare_accumulators(os, q, in2);
      // kCombine partials per thread loaded before any is combined: one
      // at a time, each waited for its load (where(sum): the combine added
      // 8.0 us after pass 0, 4.4 us this way; an empty kernel adds 2.2).
      for (NodeId r : reductions_in(q)) {
        const std::string part = "part" + std::to_string(r);
        os << in2 << "{\n"
           << in2 << "  int64_t s = lane;\n"
           << in2 << "  for (; s + " << kCombine - 1
           << " * int64_t(tpr) < sp.splits; s += " << kCombine
           << " * int64_t(tpr)) {\n"
           << in2 << "    " << acc_type(r) << " p[" << kCombine << "];\n"
           << in2 << "    #pragma unroll\n"
           << in2 << "    for (int u = 0; u < " << kCombine << "; ++u)\n"
           << in2 << "      p[u] = " << part
           << "[row * sp.splits + s + u * int64_t(tpr)];\n"
           << in2 << "    #pragma unroll\n"
           << in2 << "    for (int u = 0; u < " << kCombine << "; ++u)\n"
           << in2 << "      " << combine(r, acc(r), "p[u]") << "\n"
           << in2 << "  }\n"
           << in2 << "  for (; s < sp.splits; s += tpr)\n"
           << in2 << "    "
           << combine(r, acc(r), part + "[row * sp.splits + s]") << "\n"
           << in2 << "}\n";
      }
      row_reduce(os, q, in2);
      for (NodeId r : reductions_in(q))
        os << in2 << "if (lane == 0)\n"
           << in2 << "  part" << r << "[row * sp.splits] = " << acc(r) << ";\n";
      epilogue(os, q, reduced_store("lane == 0", "    "), in2, true);
      os << ind << "}\n";
    }
    os << "}\n\n";
  }

  // ---- CPU ----

  std::string ctx() const { return name("ctx"); }

  void cpu_unpack(llvm::raw_ostream &os) const {
    os << "  const auto &c = *static_cast<const " << ctx() << " *>(p);\n"
       << "  const kiln::RowSpace &sp = c.sp;\n"
       << "  const auto &st = c.st;\n"
       << "  const int64_t R = sp.R;\n";
    for (size_t i = 0; i < nin; ++i)
      os << "  const auto *in" << i << " = c.in" << i << ";\n";
    for (size_t j = 0; j < nout; ++j)
      os << "  auto *out" << j << " = c.out" << j << ";\n";
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      os << "  const " << storage(sc) << " s" << i << " = c.s" << i << ";\n";
  }

  // Pass `pass` over elements [from, to) of the row. Each block of
  // kCpuBlock elements is summed in order; the blocks' sums are combined
  // pairwise, by a binary counter (stk[l] holds the sum of 2^l blocks), so
  // rounding error grows with log(R), as in the eager reductions, not with
  // R: a sum of 131073 ones in f32 is exact this way, 1.14 off in blocks of
  // 4096 added in order (test/fuzz/regressions/sum-accuracy.cpp).
  void cpu_pass(llvm::raw_ostream &os, int pass, const std::string &from,
                const std::string &to, const std::string &ind) const {
    auto reds = reductions_in(pass);
    os << ind << "{\n";
    std::string in1 = ind + "  ";
    for (NodeId r : reds)
      os << in1 << acc_type(r) << " stk" << r << "[64];\n";
    if (!reds.empty())
      os << in1 << "uint64_t nblk = 0;\n";
    os << in1 << "for (int64_t rb = " << from << "; rb < " << to
       << "; rb += " << kCpuBlock << ") {\n";
    std::string in2 = in1 + "  ";
    declare_accumulators(os, pass, in2, "blk");
    os << in2 << "const int64_t re = rb + " << kCpuBlock << " < " << to
       << " ? rb + " << kCpuBlock << " : " << to << ";\n"
       << in2 << "for (int64_t r = rb; r < re; ++r) {\n";
    auto load = [&](size_t i) {
      return "in" + std::to_string(i) + "[b" + std::to_string(in_op(i)) +
             " + r * rs" + std::to_string(in_op(i)) + "]";
    };
    auto store = [](size_t j, const std::string &v) {
      return "out" + std::to_string(j) + "[b" + std::to_string(j) + " + r * rs" +
             std::to_string(j) + "] = " + v + ";";
    };
    element(os, pass, load, store, "r", "blk", in2 + "  ");
    os << in2 << "}\n";
    if (!reds.empty()) {
      os << in2 << "int l = 0;\n"
         << in2 << "for (; (nblk >> l) & 1; ++l) {\n";
      for (NodeId r : reds)
        os << in2 << "  blk" << r << " = " << combine_expr(r, "stk" + std::to_string(r) + "[l]", "blk" + std::to_string(r)) << ";\n";
      os << in2 << "}\n";
      for (NodeId r : reds)
        os << in2 << "stk" << r << "[l] = blk" << r << ";\n";
      os << in2 << "++nblk;\n";
    }
    os << in1 << "}\n";
    if (!reds.empty()) {
      // Latest blocks first: each earlier partial goes on the left, the
      // order argmax's first-index rule needs.
      os << in1 << "for (int l = 0; l < 64; ++l)\n"
         << in1 << "  if ((nblk >> l) & 1) {\n";
      for (NodeId r : reds)
        os << in1 << "    " << acc(r) << " = " << combine_expr(r, "stk" + std::to_string(r) + "[l]", acc(r)) << ";\n";
      os << in1 << "  }\n";
    }
    os << ind << "}\n";
  }

  void cpu_ctx(llvm::raw_ostream &os) const {
    os << "struct " << ctx() << " {\n";
    for (auto [i, in] : llvm::enumerate(k.inputs))
      os << "  const " << storage(in) << " *in" << i << ";\n";
    for (auto [j, o] : llvm::enumerate(k.outputs))
      os << "  " << storage(o) << " *out" << j << ";\n";
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      os << "  " << storage(sc) << " s" << i << ";\n";
    os << "  kiln::RowSpace sp;\n"
       << "  kiln::RowStrides<" << nout + nin << "> st;\n"
       << "  char *partials; // split mode\n"
       << "};\n\n";
  }

  void cpu_rows(llvm::raw_ostream &os) const {
    os << "static void " << name("cpu_rows")
       << "(int64_t begin, int64_t end, void *p) {\n";
    cpu_unpack(os);
    os << "  for (int64_t row = begin; row < end; ++row) {\n";
    std::string ind = "    ";
    row_setup(os, ind);
    prologue(os, ind);
    for (int p = 0; p < k.passes; ++p) {
      os << ind << "// pass " << p << "\n";
      declare_accumulators(os, p, ind);
      cpu_pass(os, p, "0", "R", ind);
      epilogue(os, p, reduced_store("", ""), ind);
    }
    os << "  }\n}\n\n";
  }

  void cpu_split(llvm::raw_ostream &os) const {
    os << "static void " << name("cpu_split")
       << "(int64_t begin, int64_t end, void *p) {\n";
    cpu_unpack(os);
    os << "  char *partials = c.partials;\n"
       << "  for (int64_t w = begin; w < end; ++w) {\n"
       << "    const int64_t row = w / sp.splits, split = w % sp.splits;\n";
    std::string ind = "    ";
    row_setup(os, ind);
    prologue(os, ind);
    partial_pointers(os, ind);
    for (int launch = 0; launch <= last_launch(); ++launch) {
      os << ind << "if (sp.pass == " << launch << ") {\n";
      std::string in2 = ind + "  ";
      for (int q = 0; q < launch && q < k.passes; ++q) {
        declare_accumulators(os, q, in2);
        for (NodeId r : reductions_in(q))
          os << in2 << "for (int64_t s = 0; s < sp.splits; ++s)\n"
             << in2 << "  " << combine(r, acc(r), "part" + std::to_string(r) +
                                                   "[row * sp.splits + s]")
             << "\n";
        epilogue(os, q, reduced_store("split == 0", in2 + "  "), in2,
                 q + 1 == launch);
      }
      if (launch < k.passes) {
        declare_accumulators(os, launch, in2);
        os << in2 << "const int64_t lo = split * sp.chunk;\n"
           << in2 << "const int64_t hi = lo + sp.chunk < R ? lo + sp.chunk : R;\n";
        cpu_pass(os, launch, "lo", "hi", in2);
        for (NodeId r : reductions_in(launch))
          os << in2 << "part" << r << "[row * sp.splits + split] = " << acc(r)
             << ";\n";
      }
      os << ind << "}\n";
    }
    os << "  }\n}\n\n";
  }
};

} // namespace

int register_slots(const ir::Graph &g, const sched::Kernel &k) {
  // Up to 16 elements of each input per thread (4 slots of f32, 2 of
  // bf16): 32 (8 slots of f32, a 1024-wide row per warp) measured slower
  // for softmax on an H200 (an earlier session; see also the row-kernel
  // experiments in bench/results/2026-11-21-h200.md).
  return std::clamp(16 / vector_width(g, k), 2, 4);
}

int split_launches(const ir::Graph &g, const sched::Kernel &k) {
  std::string none;
  return Red{g, k, 0, none, DType::f32}.last_launch() + 1;
}

void emit_cuda_reduction(const ir::Graph &g, const sched::Kernel &k, int ki,
                         const std::string &symbol, DType variant,
                         llvm::raw_ostream &os, std::vector<std::string> &names) {
  Red red{g, k, ki, symbol, variant};
  red.cuda_rows_registers(os);
  red.cuda_rows_loop(os);
  red.cuda_split(os);
  for (int slots = 1; slots <= register_slots(g, k); slots *= 2)
    names.push_back(red.name("rows") + std::to_string(slots));
  names.push_back(red.name("loop"));
  for (int p = 0; p < k.passes; ++p)
    names.push_back(red.name(("split" + std::to_string(p)).c_str()));
  names.push_back(red.name("combine"));
}

void emit_cpu_reduction(const ir::Graph &g, const sched::Kernel &k, int ki,
                        const std::string &symbol, DType variant,
                        llvm::raw_ostream &os) {
  Red red{g, k, ki, symbol, variant};
  os << "// @" << g.name << ", kernel " << ki << " (reduction), "
     << dtype_name(variant) << " variant, CPU\n";
  red.cpu_ctx(os);
  red.cpu_rows(os);
  red.cpu_split(os);
}

} // namespace kiln::codegen
