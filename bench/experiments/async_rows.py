"""Rewrites a generated rows kernel so that each thread copies its slots of
the next row into shared memory with cp.async (16 bytes each) while it
computes the current row: the next row's bytes are in flight without
costing registers. Experiment only (row_variants.sh); prints the result.
argv: generated .cu, new symbol prefix."""
import sys

import rows_loop

s = open(sys.argv[1]).read()
pfx = sys.argv[2]

helpers = r'''
__device__ __forceinline__ void kiln_cp16(void *smem, const void *g) {
  const unsigned a = unsigned(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(g) : "memory");
}
__device__ __forceinline__ void kiln_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void kiln_cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
'''
s = s.replace("// Reductions: the op table's", helpers + "\n// Reductions: the op table's", 1)

m, T = rows_loop.find(s)
new = f'''  extern __shared__ kiln_vec<{T}, V> kiln_stage[]; // [2][SLOTS][blockDim.x]
  auto stage = [&](int buf, int k) -> kiln_vec<{T}, V> & {{
    return kiln_stage[(buf * SLOTS + k) * blockDim.x + threadIdx.x];
  }};
  auto issue = [&](int64_t r, int buf) {{
    const int64_t o = sp.inner == 1 ? r : r / sp.inner;
    const int64_t i = r - o * sp.inner;
    const int64_t b1 = o * st.s[1][0] + i * st.s[1][2];
    #pragma unroll
    for (int k = 0; k < SLOTS; ++k) {{
      const int e = (lane + k * tpr) * V;
      if (k < sp.vpt && e < R)
        kiln_cp16(&stage(buf, k), in0 + b1 + e);
    }}
    kiln_cp_commit();
  }};
  int buf = 0;
  int64_t row = {m.group("start")};
  const int64_t step = {m.group("step")};
  if (row < sp.rows)
    issue(row, 0);
  for (; row < sp.rows; row += step, buf ^= 1) {{
    if (row + step < sp.rows) {{
      issue(row + step, buf ^ 1);
      kiln_cp_wait<1>();
    }} else {{
      kiln_cp_wait<0>();
    }}
{m.group("setup")}    #pragma unroll
    for (int k = 0; k < SLOTS; ++k) {{
      const int e = (lane + k * tpr) * V;
      if (k < sp.vpt && e < R)
        c0[k] = stage(buf, k);
    }}
'''
s = s[:m.start()] + new + s[m.end():]
print(s.replace("__kiln_", "__kiln_%s_" % pfx))
