// kiln/view_kind.h - the layout ops (kiln/ops.def's KILN_VIEW entries), as
// the runtime (kiln::view_layout, kiln/tensor.h) and the compiler (its view
// nodes) both name them.
#pragma once

#include <cstdint>

namespace kiln {

enum class ViewKind : uint8_t {
#define KILN_POINTWISE(...)
#define KILN_VIEW(Name, name, arity, args) Name,
#include <kiln/ops.def>
};

} // namespace kiln
