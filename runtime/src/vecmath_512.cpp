// Kiln's vector math on 512-bit registers (vecmath_impl.h says why a TU
// per width).
#define KILN_VM_F32 16
#define KILN_VM_F64 8
#include "vecmath_impl.h"
