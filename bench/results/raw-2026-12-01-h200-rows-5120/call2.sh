#!/usr/bin/env bash
# Call 2: the GPU tests (as is, forced) with f32 rows of 5 slots added; f32 and bf16 rows of
# 5 * 2^k slots, new vs old build, torch.compile default and max-autotune-no-cudagraphs.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/c2:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/gpu.txt
T='^(exec-cuda-reduce|exec-row-broadcast-cuda|exec-reduction-groups-cuda)$'
{ python3 scripts/run-gpu-tests.py --only "$T" 2>&1 | tail -12
  echo "--- forced"
  python3 scripts/run-gpu-tests.py --forced --only "$T" 2>&1 | tail -12; } > $OUT/tests.txt
S="13107x5120:f32 26214x2560:f32 52428x1280:f32 104857x640:f32 16384x4096:f32 32768x1024:f32 13107x5120 6553x10240"
KILN_LOGS=kernels .bench/c2/rows_new 13107x5120:f32 104857x640:f32 2>&1 | grep "k0_f32_rows" | sort | uniq -c > $OUT/kernels.txt
for i in 1 2; do
  .bench/c2/rows_new $S > $OUT/kiln_new_$i.txt 2>&1
  .bench/c2/rows_old $S > $OUT/kiln_old_$i.txt 2>&1
done
python3 bench/experiments/bf16_rows_torch.py - $S > $OUT/torch_default.txt 2>&1
timeout 200 python3 bench/experiments/bf16_rows_torch.py max-autotune-no-cudagraphs 13107x5120:f32 26214x2560:f32 13107x5120 6553x10240 > $OUT/torch_mat.txt 2>&1
python3 - <<'PY'
import os,re
out=os.environ["OUT"]
def load(f):
    d={}
    try:
        for l in open(os.path.join(out,f)):
            m=re.match(r"(.{26}) (\S+ \S+)\s+kernel ([\d.]+) ms\s+single ([\d.]+)",l)
            if m: d[(m.group(1).strip(),m.group(2))]=(float(m.group(3)),float(m.group(4)))
    except OSError: pass
    return d
n1,n2,o1,o2,t,ma=[load(f) for f in ["kiln_new_1.txt","kiln_new_2.txt","kiln_old_1.txt","kiln_old_2.txt","torch_default.txt","torch_mat.txt"]]
print(open(os.path.join(out,"tests.txt")).read()[-2500:]); print(open(os.path.join(out,"kernels.txt")).read()[-1500:])
print("%-24s %-16s %7s %7s %7s %7s %7s %7s %6s %6s" % ("op","shape","old1","old2","new1","new2","torch","maxat","floor","t/new"))
for k in n1:
    r,c=k[1].split()[0].split("x"); es=4 if "f32" in k[1] else 2
    fl=2*int(r)*int(c)*es/4.21e9
    tt=t.get(k,(float('nan'),))[0]; nn=min(n1[k][0],n2.get(k,(9,))[0])
    print("%-24s %-16s %7.4f %7.4f %7.4f %7.4f %7.4f %7.4f %6.4f %6.2f" % (k[0][:24],k[1],o1.get(k,(0,))[0],o2.get(k,(0,))[0],n1[k][0],n2.get(k,(0,))[0],tt,ma.get(k,(float('nan'),))[0],fl,tt/nn))
PY
