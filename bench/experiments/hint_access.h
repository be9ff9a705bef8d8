// 16-byte loads and stores with cache hints, for row_variants.cu: replaces
// the generated kiln_vec_load / kiln_vec_store. KILN_HINT selects:
//   0 plain ld/st (what codegen emits)
//   1 ld.global.cs / st.global.cs (streaming, evict first)
//   2 plain ld, st.global.cs
//   3 ld.global.nc.L1::no_allocate.L2::256B, plain st
//   4 ld.global.L2::256B (prefetch size hint), plain st
#pragma once
#include <cstring>
#ifndef KILN_HINT
#define KILN_HINT 0
#endif
template <class T, int V> struct alignas(sizeof(T) * V) kiln_vec {
  T v[V];
};
__device__ __forceinline__ uint4 kiln_hint_ld(const void *p) {
  uint4 r;
#if KILN_HINT == 1
  asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#elif KILN_HINT == 3
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#elif KILN_HINT == 4
  asm volatile("ld.global.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#else
  r = *reinterpret_cast<const uint4 *>(p);
#endif
  return r;
}
__device__ __forceinline__ void kiln_hint_st(void *p, uint4 v) {
#if KILN_HINT == 1 || KILN_HINT == 2
  asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
#else
  *reinterpret_cast<uint4 *>(p) = v;
#endif
}
template <int V, class T>
__device__ __forceinline__ kiln_vec<T, V> kiln_vec_load(const T *p) {
  static_assert(sizeof(T) * V == 16);
  uint4 u = kiln_hint_ld(p);
  kiln_vec<T, V> r;
  memcpy(&r, &u, 16);
  return r;
}
template <class T, int V>
__device__ __forceinline__ void kiln_vec_store(T *p, const kiln_vec<T, V> &v) {
  uint4 u;
  memcpy(&u, &v, 16);
  kiln_hint_st(p, u);
}
