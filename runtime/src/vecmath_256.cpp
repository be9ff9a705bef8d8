// Kiln's vector math on 256-bit registers (vecmath_impl.h says why a TU
// per width).
#define KILN_VM_F32 8
#define KILN_VM_F64 4
#include "vecmath_impl.h"
