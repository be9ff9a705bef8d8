#include <kiln/passes/codegen.h>

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

} // namespace kiln::codegen
