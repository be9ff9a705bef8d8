"""Rewrites a generated rows kernel so that each block streams its rows
through STAGES shared-memory buffers filled by bulk copies (cp.async.bulk,
one per row, completing on an mbarrier per stage): up to STAGES rows of the
block in flight without costing registers, the copies issued by one thread.
The rows' elements must be contiguous and a row's bytes a multiple of 16
(the host checks). Experiment only (row_variants.sh); prints the result.
argv: generated .cu, new symbol prefix, STAGES."""
import sys

import rows_loop

s = open(sys.argv[1]).read()
pfx, stages = sys.argv[2], int(sys.argv[3])

s = s.replace("// Reductions: the op table's", '#include "tma.h"\n\n// Reductions: the op table\'s', 1)

m, T = rows_loop.find(s)
new = f'''  constexpr int STAGES = {stages};
  extern __shared__ __align__(128) unsigned char kiln_dyn[]; // [STAGES][groups][R] then the barriers
  const int grp = threadIdx.x / tpr;
  const unsigned rowb = unsigned(R) * sizeof({T});
  {T} *const kiln_buf = reinterpret_cast<{T} *>(kiln_dyn);
  uint64_t *const kiln_bar = reinterpret_cast<uint64_t *>(kiln_dyn + size_t(STAGES) * groups * rowb);
  const int64_t ngroups = (sp.rows + groups - 1) / groups;
  auto issue = [&](int64_t g, int s) {{ // one thread: the rows of group g into stage s
    const int64_t r0 = g * groups;
    const int n = int(sp.rows - r0 < groups ? sp.rows - r0 : groups);
    kiln_mbar_expect_tx(kiln_bar + s, unsigned(n) * rowb);
    for (int q = 0; q < n; ++q) {{
      const int64_t o = sp.inner == 1 ? r0 + q : (r0 + q) / sp.inner;
      const int64_t i = r0 + q - o * sp.inner;
      kiln_bulk_load(kiln_buf + (int64_t(s) * groups + q) * R, in0 + o * st.s[1][0] + i * st.s[1][2], rowb, kiln_bar + s);
    }}
  }};
  if (threadIdx.x == 0) {{
    for (int s = 0; s < STAGES; ++s)
      kiln_mbar_init(kiln_bar + s, 1);
    kiln_mbar_fence_init();
    for (int s = 0; s < STAGES; ++s)
      if (blockIdx.x + int64_t(s) * gridDim.x < ngroups)
        issue(blockIdx.x + int64_t(s) * gridDim.x, s);
  }}
  __syncthreads();
  int stage = 0;
  unsigned phase = 0;
  for (int64_t g = blockIdx.x; g < ngroups; g += gridDim.x) {{
    const int64_t row = g * groups + grp;
{m.group("setup")}    kiln_mbar_wait(kiln_bar + stage, phase);
    if (row < sp.rows) {{
      const {T} *const srow = kiln_buf + (int64_t(stage) * groups + grp) * R;
      #pragma unroll
      for (int k = 0; k < SLOTS; ++k) {{
        const int e = (lane + k * tpr) * V;
        if (k < sp.vpt && e < R)
          c0[k] = *reinterpret_cast<const kiln_vec<{T}, V> *>(srow + e);
      }}
    }}
    __syncthreads(); // the stage is in registers: refill it
    if (threadIdx.x == 0 && g + int64_t(STAGES) * gridDim.x < ngroups) {{
      kiln_fence_proxy_async();
      issue(g + int64_t(STAGES) * gridDim.x, stage);
    }}
    if (++stage == STAGES) {{
      stage = 0;
      phase ^= 1;
    }}
    if (row >= sp.rows)
      continue;
'''
s = s[:m.start()] + new + s[m.end():]
print(s.replace("__kiln_", "__kiln_%s_" % pfx))
