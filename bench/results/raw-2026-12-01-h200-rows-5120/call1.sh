#!/usr/bin/env bash
# Call 1: rows of 5120 with 5 slots (new) against 2.5 of 4 (old), torch.compile default beside.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench/c1:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/gpu.txt
S="13107x5120 26214x2560 6553x10240 52428x1280 16384x4096 21845x3072 13107x5120:f32"
cuobjdump -res-usage .bench/c1/rows_new 2>&1 | grep -A1 'bf16_rows[345]full' | grep -o 'Function [^:]*\|REG:[0-9]*' | paste - - > $OUT/regs.txt
KILN_LOGS=kernels .bench/c1/rows_new 13107x5120 52428x1280 2>&1 | grep -m 12 -i "rows\|launch" > $OUT/kernels.txt
for i in 1 2; do
  .bench/c1/rows_new $S > $OUT/kiln_new_$i.txt 2>&1
  .bench/c1/rows_old $S > $OUT/kiln_old_$i.txt 2>&1
done
python3 bench/experiments/bf16_rows_torch.py - $S > $OUT/torch_default.txt 2>&1
python3 - <<'PY'
import os,re
out=os.environ["OUT"]
def load(f):
    d={}
    for l in open(os.path.join(out,f)):
        m=re.match(r"(.{26}) (\S+ \S+)\s+kernel ([\d.]+) ms\s+single ([\d.]+)",l)
        if m: d[(m.group(1).strip(),m.group(2))]=(float(m.group(3)),float(m.group(4)))
    return d
n1,n2,o1,o2,t=[load(f) for f in ["kiln_new_1.txt","kiln_new_2.txt","kiln_old_1.txt","kiln_old_2.txt","torch_default.txt"]]
print(open(os.path.join(out,"regs.txt")).read()[-2500:]); print(open(os.path.join(out,"kernels.txt")).read()[-1500:])
print("%-24s %-16s %7s %7s %7s %7s %7s %6s %6s" % ("op","shape","old1","old2","new1","new2","torch","floor","t/new"))
for k in n1:
    r,c=k[1].split()[0].split("x"); es=4 if "f32" in k[1] else 2
    fl=2*int(r)*int(c)*es/4.21e9*1e3
    tt=t.get(k,(float('nan'),))[0]; nn=min(n1[k][0],n2.get(k,(9,))[0])
    print("%-24s %-16s %7.4f %7.4f %7.4f %7.4f %7.4f %6.4f %6.2f" % (k[0][:24],k[1],o1.get(k,(0,))[0],o2.get(k,(0,))[0],n1[k][0],n2.get(k,(0,))[0],tt,fl,tt/nn))
PY
