// Fused CPU loops for a kernel plan. Two flavours per fused kernel, chosen
// by the host code at run time:
//   contig   every tensor is contiguous in the output's element order: one
//            flat `omp simd` loop the vectoriser turns into SIMD code;
//   strided  any layout: rows of the innermost dim, each row's start found
//            through OffsetCalc, then a strided inner loop.
// rt::cpu_launch splits the range across OpenMP threads.
#include "Emit.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

static std::string ctx_name(const std::string &symbol, int ki, DType variant) {
  return kernel_name(symbol, ki, variant, "ctx");
}

void emit_cpu_loops(const ir::Graph &g, const sched::KernelPlan &plan,
                    const std::string &symbol, DType variant, std::string &out) {
  llvm::raw_string_ostream os(out);
  for (auto [kidx, k] : llvm::enumerate(plan.kernels)) {
    int ki = int(kidx);
    if (k.kind == sched::Kernel::Kind::Reduction) {
      emit_cpu_reduction(g, k, ki, symbol, variant, os);
      continue;
    }
    size_t nout = k.outputs.size();
    size_t nops = nout + k.inputs.size();
    std::string ctx = ctx_name(symbol, ki, variant);

    // The context the host code fills and the loops read.
    os << "// @" << g.name << ", kernel " << ki << " (" << k.nodes.size()
       << " ops), " << dtype_name(variant) << " variant, CPU\n";
    os << "struct " << ctx << " {\n";
    for (auto [i, in] : llvm::enumerate(k.inputs))
      os << "  const " << storage_type(g.node(in).type.dtype) << " *in" << i
         << ";\n";
    for (auto [j, o] : llvm::enumerate(k.outputs))
      os << "  " << storage_type(g.node(o).type.dtype) << " *out" << j << ";\n";
    for (auto [i, sc] : llvm::enumerate(k.scalars))
      os << "  " << storage_type(g.node(sc).type.dtype) << " s" << i << ";\n";
    os << "  kiln::OffsetCalc<" << nops << "> calc; // strided loop only\n";
    os << "};\n\n";

    auto unpack = [&](bool pointers) {
      os << "  const auto &c = *static_cast<const " << ctx << " *>(p);\n";
      if (pointers) {
        for (auto [i, in] : llvm::enumerate(k.inputs))
          os << "  const " << storage_type(g.node(in).type.dtype)
             << " *__restrict in" << i << " = c.in" << i << ";\n";
        for (auto [j, o] : llvm::enumerate(k.outputs))
          os << "  " << storage_type(g.node(o).type.dtype) << " *__restrict out"
             << j << " = c.out" << j << ";\n";
      }
      for (auto [i, sc] : llvm::enumerate(k.scalars))
        os << "  const " << storage_type(g.node(sc).type.dtype) << " s" << i
           << " = c.s" << i << ";\n";
    };
    ElementAccess a;
    a.scalar = [](int i) { return "s" + std::to_string(i); };

    os << "static void " << kernel_name(symbol, ki, variant, "contig")
       << "(int64_t begin, int64_t end, void *p) {\n";
    unpack(true);
    os << "#pragma omp simd\n"
       << "  for (int64_t i = begin; i < end; ++i) {\n";
    a.load = [](int i) { return "in" + std::to_string(i) + "[i]"; };
    a.store = [](int j, const std::string &v) {
      return "out" + std::to_string(j) + "[i] = " + v + ";";
    };
    os << element_body(g, k, a, "    ");
    os << "  }\n}\n\n";

    os << "static void " << kernel_name(symbol, ki, variant, "strided")
       << "(int64_t begin, int64_t end, void *p) {\n";
    unpack(false);
    os << "  // begin/end count rows of the innermost dim.\n"
       << "  const int r = c.calc.rank;\n"
       << "  const int64_t inner = r ? c.calc.sizes[r - 1] : 1;\n";
    for (size_t o = 0; o < nops; ++o)
      os << "  const int64_t st" << o << " = r ? c.calc.strides[r - 1][" << o
         << "] : 0;\n";
    os << "  for (int64_t row = begin; row < end; ++row) {\n"
       << "    int64_t off[" << nops << "];\n"
       << "    c.calc.get(row * inner, off);\n";
    for (size_t j = 0; j < nout; ++j)
      os << "    auto *__restrict out" << j << " = c.out" << j << " + off[" << j
         << "];\n";
    for (size_t i = 0; i < k.inputs.size(); ++i)
      os << "    const auto *__restrict in" << i << " = c.in" << i << " + off["
         << nout + i << "];\n";
    os << "    for (int64_t j = 0; j < inner; ++j) {\n";
    a.load = [nout](int i) {
      return "in" + std::to_string(i) + "[j * st" + std::to_string(nout + i) +
             "]";
    };
    a.store = [](int j, const std::string &v) {
      return "out" + std::to_string(j) + "[j * st" + std::to_string(j) +
             "] = " + v + ";";
    };
    os << element_body(g, k, a, "      ");
    os << "    }\n  }\n}\n\n";
  }
}

} // namespace kiln::codegen
