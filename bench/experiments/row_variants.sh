#!/usr/bin/env bash
# Builds bench/experiments/row_variants.cu with the kernels kiln-opt
# generates today and the edited copies it compares them with, into
# $1 (default .bench/exp). Run here; carry .bench; run
# .bench/exp/row_variants [reps] on the GPU machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/.bench/exp}
opt=${KILN_OPT:-$root/build/bin/kiln-opt}
mkdir -p "$out/gen"
g=$out/gen
printf 'graph @softmax(%%x: f32[s0, s1]) {\n  %%y = softmax %%x {dims=[-1]}\n  return %%y\n}\n' > $g/sm.kir
printf 'graph @rms(%%x: bf16[s0, s1], %%w: bf16[s1], %%eps: f64) {\n  %%y = rms_norm %%x, %%w, %%eps {dims=[-1]}\n  return %%y\n}\n' > $g/rms.kir
printf 'graph @w(%%x: f32[s0]) {\n  %%s = sum %%x {dims=[]}\n  %%t = const 0.5 : f64\n  %%c = gt %%s, %%t\n  %%two = const 2.0 : f64\n  %%m = mul %%x, %%two\n  %%y = where %%c, %%m, %%x\n  return %%y\n}\n' > $g/w.kir
"$opt" --pipeline --emit=cuda --dtypes=f32 $g/sm.kir > $g/sm.cu
"$opt" --pipeline --emit=cuda --dtypes=bf16 $g/rms.kir > $g/rms.cu
"$opt" --pipeline --emit=cuda --dtypes=f32 $g/w.kir > $g/w.cu
ren() { sed -e "s/__kiln_/__kiln_$1_/g"; }
# exploration only: a reciprocal instead of IEEE division (not what Kiln may emit)
sed -e 's|const float v4 = acc4; // sum(%3)|const float v4 = acc4; const float kr = 1.0f / v4;|' \
    -e 's|kiln::scalar::op_div(t3\[k \* V + j\], v4)|(t3[k * V + j] * kr)|' $g/sm.cu | ren rcp > $g/sm_rcp.cu
grep -q 'kr)' $g/sm_rcp.cu
# a warp per row, 8 slots (32 floats) per thread, 8 rows per 256-thread block
ren base < $g/sm.cu > $g/sm_base.cu
cat >> $g/sm_base.cu <<'CU'
extern "C" __global__ void __launch_bounds__(256)
__kiln_base_softmax_k0_f32_rows8(const kiln::RowSpace sp, const kiln::RowStrides<2> st,
    const float *__restrict__ in0, float *__restrict__ out0) {
  __kiln_base_softmax_k0_f32_rows_impl<8>(sp, st, in0, out0);
}
CU
# IEEE division by a row-invariant divisor: the reciprocal once per row,
# then a product and (1 or 2) FMA corrections per element, IEEE division
# where the operands leave the range where the corrections are exact
divfn='__device__ __forceinline__ float kiln_div_rowinv(float a, float b, float y, bool ok) {\
  float q = a * y;\
  float r = fmaf(-b, q, a);\
  q = fmaf(r, y, q);\
#if KILN_DIV_STEPS == 2\
  r = fmaf(-b, q, a);\
  q = fmaf(r, y, q);\
#endif\
  const float aa = fabsf(a);\
  return ok \&\& aa >= 0x1p-60f \&\& aa <= 0x1p60f ? q : a / b;\
}'
for steps in 1 2; do
  sed -e "s|^#include <kiln/scalar.h>|#include <kiln/scalar.h>\n#define KILN_DIV_STEPS $steps\n$divfn|" \
      -e 's|const float v4 = acc4; // sum(%3)|const float v4 = acc4; const float kr = 1.0f / v4; const bool kok = fabsf(v4) >= 0x1p-60f \&\& fabsf(v4) <= 0x1p60f;|' \
      -e 's|kiln::scalar::op_div(t3\[k \* V + j\], v4)|kiln_div_rowinv(t3[k * V + j], v4, kr, kok)|' $g/sm.cu | ren div$steps > $g/sm_div$steps.cu
  grep -q 'kiln_div_rowinv(t3' $g/sm_div$steps.cu
done
ren base < $g/rms.cu > $g/rms_base.cu
# 4 and 8 slots per thread (32 / 64 elements: 128 / 64 threads per row)
cat >> $g/rms_base.cu <<'CU'
extern "C" __global__ void __launch_bounds__(256, 2)
__kiln_base_rms_k0_bf16_rows4(const kiln::RowSpace sp, const kiln::RowStrides<3> st,
    const kiln::bfloat16 *__restrict__ in0, const kiln::bfloat16 *__restrict__ in1,
    kiln::bfloat16 *__restrict__ out0, const double s0) {
  __kiln_base_rms_k0_bf16_rows_impl<4>(sp, st, in0, in1, out0, s0);
}
extern "C" __global__ void __launch_bounds__(256, 2)
__kiln_base_rms_k0_bf16_rows8(const kiln::RowSpace sp, const kiln::RowStrides<3> st,
    const kiln::bfloat16 *__restrict__ in0, const kiln::bfloat16 *__restrict__ in1,
    kiln::bfloat16 *__restrict__ out0, const double s0) {
  __kiln_base_rms_k0_bf16_rows_impl<8>(sp, st, in0, in1, out0, s0);
}
CU
# the weight (row-invariant) loaded once per thread, kept in registers
sed -e 's|^\(  kiln_vec<kiln::bfloat16, V> c0\[SLOTS\]; // x\)$|\1\n  kiln_vec<kiln::bfloat16, V> wk[SLOTS];\n  _Pragma("unroll") for (int k = 0; k < SLOTS; ++k) { const int e = (lane + k * tpr) * V; if (k < sp.vpt \&\& e < R) wk[k] = kiln_vec_load<V>(in1 + e); }|' \
    -e 's|const kiln_vec<kiln::bfloat16, V> x1 = kiln_vec_load<V>(in1 + b2 + e);|const kiln_vec<kiln::bfloat16, V> x1 = wk[k];|' $g/rms.cu | ren wkeep > $g/rms_wkeep.cu
grep -q 'x1 = wk\[k\]' $g/rms_wkeep.cu && grep -q 'wk\[SLOTS\];' $g/rms_wkeep.cu
ren base < $g/w.cu > $g/w_base.cu
# pass 1 (the pass that writes) with 2 or 4 tiles loaded before use
for n in 2 4; do
  python3 - $g/w.cu $n > $g/w_p1t$n.cu <<'PY'
import sys
s, n = open(sys.argv[1]).read(), sys.argv[2]
a = s.index("_split1(")
b = s.index("\n}\n", a)
body = s[a:b].replace("t += 1", "t += " + n).replace("u < 1", "u < " + n).replace("x0[1]", "x0[" + n + "]")
print((s[:a] + body + s[b:]).replace("__kiln_", "__kiln_p1t" + n + "_"))
PY
done
# the split kernel as generated before the tiles were reordered, if given
# (one kernel for every pass, tiles dealt round-robin), kept in
# bench/experiments/where_split_before.cu for this comparison
ren old < $root/bench/experiments/where_split_before.cu > $g/w_old.cu $g/w_p1t2.cu $g/w_p1t4.cu
# the next row staged in shared memory with cp.async (async_rows.py)
python3 $root/bench/experiments/async_rows.py $g/sm.cu async > $g/sm_async.cu
python3 $root/bench/experiments/async_rows.py $g/rms.cu async > $g/rms_async.cu
# one barrier per block reduction: successive reductions alternate between
# two halves of the shared scratch, so the barrier that protected its reuse goes
for f in sm rms; do
  sed -e 's|^  __syncthreads(); // smem may still be read by the previous reduction||' \
      -e 's|^  __shared__ double kiln_smem\[64\];\(.*\)|  __shared__ double kiln_smem[64];\1\n  int kiln_par = 0;|' \
      -e 's|reinterpret_cast<float \*>(kiln_smem))|reinterpret_cast<float *>(kiln_smem) + 16 * (kiln_par ^= 1))|' $g/$f.cu | ren bar1 > $g/${f}_bar1.cu
  grep -q 'kiln_par ^= 1' $g/${f}_bar1.cu
done
# the struct store kiln_vec_store used before __stwb
for f in sm rms; do
  sed -e 's|  __stwb(reinterpret_cast<B \*>(p), b);|  *reinterpret_cast<B *>(p) = b;|' $g/$f.cu | ren plainst > $g/${f}_plainst.cu
  ! grep -q '__stwb(' $g/${f}_plainst.cu
done
# cache hints on the 16-byte loads and stores (hint_access.h)
for h in 1 2 3 4; do
  for f in sm rms; do
    python3 - "$g/$f.cu" "$h" > $g/${f}_hint$h.cu <<'PY'
import re, sys
s = open(sys.argv[1]).read()
a = s.index("// 16-byte vector access")
b = s.index("// Reductions:")
s = s[:a] + "#define KILN_HINT %s\n#include \"hint_access.h\"\n\n" % sys.argv[2] + s[b:]
print(s.replace("__kiln_", "__kiln_hint%s_" % sys.argv[2]))
PY
  done
done
# rows streamed through shared memory by bulk copies (tma_rows.py), N stages
tma=()
for n in 2 3 4 6; do
  python3 $root/bench/experiments/tma_rows.py $g/sm.cu tma$n $n > $g/sm_tma$n.cu
  tma+=($g/sm_tma$n.cu)
done
for n in 2 3 4; do
  python3 $root/bench/experiments/tma_rows.py $g/rms.cu tma$n $n > $g/rms_tma$n.cu
  tma+=($g/rms_tma$n.cu)
done
sed -e 's|__kiln_rcp_|__kiln_|g' $g/sm_rcp.cu > $g/sm_rcp_plain.cu
# torch.compile's numerics (its PTX, torch_ptx.py: ex2.approx for exp,
# div.full for division): __expf, with IEEE division (fexp) or the
# reciprocal (fast)
sed -e 's|kiln::scalar::op_exp(v2)|__expf(v2)|' $g/sm.cu | ren fexp > $g/sm_fexp.cu
sed -e 's|kiln::scalar::op_exp(v2)|__expf(v2)|' $g/sm_rcp_plain.cu | ren fast > $g/sm_fast.cu
grep -q '__expf(v2)' $g/sm_fexp.cu && grep -q '__expf(v2)' $g/sm_fast.cu
tma+=($g/sm_fexp.cu $g/sm_fast.cu)
python3 $root/bench/experiments/tma_rows.py $g/sm_rcp_plain.cu tmarcp3 3 > $g/sm_tmarcp3.cu
tma+=($g/sm_tmarcp3.cu)
srcs=($root/bench/experiments/row_variants.cu $g/sm_base.cu $g/sm_rcp.cu $g/sm_div1.cu $g/sm_div2.cu $g/rms_base.cu $g/rms_wkeep.cu $g/w_base.cu $g/w_old.cu $g/w_p1t2.cu $g/w_p1t4.cu $g/sm_hint1.cu $g/sm_hint2.cu $g/sm_hint3.cu $g/sm_hint4.cu $g/rms_hint1.cu $g/rms_hint2.cu $g/rms_hint3.cu $g/rms_hint4.cu $g/sm_async.cu $g/rms_async.cu $g/sm_bar1.cu $g/rms_bar1.cu $g/sm_plainst.cu $g/rms_plainst.cu "${tma[@]}")
nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I"$root/runtime/include" -I"$root/bench/experiments" \
  -Xptxas -v "${srcs[@]}" -o "$out/row_variants" 2> "$out/ptxas.txt" \
  || { grep -v "^ptxas info" "$out/ptxas.txt" | head -40; exit 1; }
strip "$out/row_variants" 2>/dev/null || true
echo "built $out/row_variants"
