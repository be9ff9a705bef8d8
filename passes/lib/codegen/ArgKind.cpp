#include "Lower.h"

#include <llvm/ADT/STLExtras.h>

namespace kiln::codegen {

const char *cxx_param_type(ArgKind k) {
  switch (k) {
  case ArgKind::Tensor:
    return "const kiln::Tensor &";
  case ArgKind::Double:
    return "double";
  case ArgKind::Int64:
    return "int64_t";
  case ArgKind::Bool:
    return "bool";
  }
  return "?";
}

std::string fast_path_params(const FunctionSpec &spec, size_t outputs) {
  std::string params;
  for (auto [i, k] : llvm::enumerate(spec.args)) {
    std::string t = cxx_param_type(k);
    params += (i ? ", " : "") + t + (t.back() == '&' ? "a" : " a") +
              std::to_string(i);
  }
  for (size_t j = 0; j < outputs; ++j)
    params += ", kiln::Tensor *out" + std::to_string(j);
  return params;
}

} // namespace kiln::codegen
