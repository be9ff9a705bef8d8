// kiln/op_traits.h - the words of kiln/ops.def's traits and form columns.
//
// Code that expands the table (the eager runtime, the compiler) brings
// these names into scope where it includes kiln/ops.def, so that an entry's
// `CHEAP | COMMUTATIVE` or `NORM` means the same thing to both.
#pragma once

#include <cstdint>

namespace kiln::op_traits {

// KILN_POINTWISE's traits column: bits, `|`-joined.
enum : uint8_t {
  CHEAP = 0,       // recomputing it costs less than keeping its value
  EXPENSIVE = 1,   // a transcendental, a division, or made of those
  COMMUTATIVE = 2, // op(a, b) and op(b, a) agree bit for bit
  NO_B8 = 4,       // not defined on b8 operands
  // The result jumps where an operand crosses a threshold (as a
  // comparison's): compiled code reads an f16/bf16 intermediate operand
  // rounded to its dtype, as eager stores it, so both jump alike.
  DISCRETE = 8,
};

// KILN_COMPOSITE's form column: how the result is shaped.
enum class Form : uint8_t {
  None,    // not a composite
  REDUCE,  // reduces x over dims, as sum (mean, var, logsumexp)
  ROWWISE, // along one dim, x's shape (softmax, log_softmax)
  NORM     // over the last dim, x's shape, with weight/bias and eps
};

} // namespace kiln::op_traits
