// CUDA kernels for a kernel plan. Each fused kernel gets three flavours,
// chosen by the host code's guards at run time:
//   vec  every tensor is contiguous with the output's element order and
//        16-byte aligned: 16-byte loads and stores, a grid-stride loop;
//   s32  any layout (broadcast, strided, transposed) through OffsetCalc
//        with 32-bit index arithmetic, when every offset fits;
//   s64  the same with 64-bit indices.
#include "Emit.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

using ir::NodeId;

// Kernel parameters after `n` (and `calc`): input pointers, output
// pointers, scalar values.
std::string cuda_params(const ir::Graph &g, const sched::Kernel &k) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (auto [i, in] : llvm::enumerate(k.inputs))
    os << ",\n    const " << storage_type(g.node(in).type.dtype)
       << " *__restrict__ in" << i;
  for (auto [j, out] : llvm::enumerate(k.outputs))
    os << ",\n    " << storage_type(g.node(out).type.dtype)
       << " *__restrict__ out" << j;
  for (auto [i, sc] : llvm::enumerate(k.scalars))
    os << ",\n    const " << storage_type(g.node(sc).type.dtype) << " s" << i;
  return s;
}

static std::string header_comment(const ir::Graph &g, const sched::Kernel &k,
                                  int ki, DType variant, const std::string &what) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "// @" << g.name << ", kernel " << ki << " (" << k.nodes.size()
     << " ops), " << dtype_name(variant) << " variant: " << what << "\n";
  return s;
}

static ElementAccess scalar_access() {
  ElementAccess a;
  a.scalar = [](int i) { return "s" + std::to_string(i); };
  return a;
}

static void emit_vec(const ir::Graph &g, const sched::Kernel &k, int ki,
                     DType variant, const std::string &name,
                     llvm::raw_string_ostream &os) {
  int v = vector_width(g, k);
  os << header_comment(g, k, ki, variant,
                       "contiguous operands, " + std::to_string(v) +
                           " elements per 16-byte access");
  os << "extern \"C\" __global__ void __launch_bounds__(256)\n"
     << name << "(const int64_t n" << cuda_params(g, k) << ") {\n";
  os << "  constexpr int V = " << v << ";\n"
     << "  const int64_t nvec = n / V;\n"
     << "  const int64_t step = int64_t(gridDim.x) * blockDim.x;\n"
     << "  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; "
        "t < nvec; t += step) {\n";
  for (auto [i, in] : llvm::enumerate(k.inputs))
    os << "    const auto x" << i << " = kiln::gen::vec_load<V>(in" << i
       << " + t * V);\n";
  for (auto [j, out] : llvm::enumerate(k.outputs))
    os << "    kiln::gen::Vec<" << storage_type(g.node(out).type.dtype) << ", V> y"
       << j << ";\n";
  os << "#pragma unroll\n    for (int j = 0; j < V; ++j) {\n";
  ElementAccess va = scalar_access();
  va.load = [](int i) { return "x" + std::to_string(i) + ".v[j]"; };
  va.store = [](int j, const std::string &val) {
    return "y" + std::to_string(j) + ".v[j] = " + val + ";";
  };
  os << element_body(g, k, va, "      ");
  os << "    }\n";
  for (auto [j, out] : llvm::enumerate(k.outputs))
    os << "    kiln::gen::vec_store(out" << j << " + t * V, y" << j << ");\n";
  os << "  }\n";
  os << "  // The last n % V elements.\n"
     << "  for (int64_t i = nvec * V + int64_t(blockIdx.x) * blockDim.x + "
        "threadIdx.x; i < n; i += step) {\n";
  ElementAccess ta = scalar_access();
  ta.load = [](int i) { return "in" + std::to_string(i) + "[i]"; };
  ta.store = [](int j, const std::string &val) {
    return "out" + std::to_string(j) + "[i] = " + val + ";";
  };
  os << element_body(g, k, ta, "    ");
  os << "  }\n}\n\n";
}

static void emit_strided(const ir::Graph &g, const sched::Kernel &k, int ki,
                         DType variant, const std::string &name,
                         const char *index, llvm::raw_string_ostream &os) {
  size_t nops = k.outputs.size() + k.inputs.size();
  os << header_comment(g, k, ki, variant,
                       std::string("any layout, ") + index + " offsets");
  os << "extern \"C\" __global__ void __launch_bounds__(256)\n"
     << name << "(const int64_t n, const kiln::OffsetCalc<" << nops
     << "> calc" << cuda_params(g, k) << ") {\n";
  os << "  using Index = " << index << ";\n"
     << "  const Index step = Index(gridDim.x) * blockDim.x;\n"
     << "  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; "
        "i < Index(n); i += step) {\n"
     << "    Index off[" << nops << "];\n"
     << "    calc.get(i, off);\n";
  size_t nout = k.outputs.size();
  ElementAccess a = scalar_access();
  a.load = [nout](int i) {
    return "in" + std::to_string(i) + "[off[" + std::to_string(nout + i) + "]]";
  };
  a.store = [](int j, const std::string &val) {
    return "out" + std::to_string(j) + "[off[" + std::to_string(j) +
           "]] = " + val + ";";
  };
  os << element_body(g, k, a, "    ");
  os << "  }\n}\n\n";
}

void emit_cuda_kernels(const ir::Graph &g, const sched::KernelPlan &plan,
                       const std::string &symbol, DType variant,
                       std::string &out, std::vector<std::string> &names) {
  llvm::raw_string_ostream os(out);
  for (auto [ki, k] : llvm::enumerate(plan.kernels)) {
    if (k.kind == sched::Kernel::Kind::Reduction) {
      emit_cuda_reduction(g, k, int(ki), symbol, variant, os, names);
      continue;
    }
    std::string vec = kernel_name(symbol, int(ki), variant, "vec");
    std::string s32 = kernel_name(symbol, int(ki), variant, "s32");
    std::string s64 = kernel_name(symbol, int(ki), variant, "s64");
    emit_vec(g, k, int(ki), variant, vec, os);
    emit_strided(g, k, int(ki), variant, s32, "uint32_t", os);
    emit_strided(g, k, int(ki), variant, s64, "int64_t", os);
    names.insert(names.end(), {vec, s32, s64});
  }
}

} // namespace kiln::codegen
