#!/usr/bin/env bash
# Device call 4: the 4-slot rows instances bounded to 64 registers
# (__launch_bounds__(512, 2): lb2, with p0's packed bools) against p0 (the
# packed bools alone, 80 registers for masked softmax), over masked
# softmax and the 4-slot rows that layer norm, softmax and RMS norm of
# 4096 columns run; three rounds alternating, ncu of the masked kernel.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w4; mkdir -p $O $W
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
for r in 1 2 3; do
  for v in p0 lb2; do timeout 60 .bench/lr/long_rows_$v masked 16384x4096 8192x4096 > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
for v in p0 lb2; do
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:masked --launch-skip 10 --launch-count 1 --metrics $M --csv .bench/lr/long_rows_$v masked > $W/ncu-$v-masked.csv 2>> $W/ncu.err
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:layer --launch-skip 10 --launch-count 1 --metrics $M --csv .bench/lr/long_rows_$v "layer norm 16384" > $W/ncu-$v-ln.csv 2>> $W/ncu.err
done
python3 - $W <<'PY'
import csv,sys,glob,os,json,statistics
W=sys.argv[1]
for f in sorted(glob.glob(W+'/ncu-*.csv')):
    rows=[r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    if not rows: print(os.path.basename(f),'empty'); continue
    h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ii=h.index('ID')
    by={}
    for r in rows[1:]:
        by.setdefault((r[ii],r[ki][-12:]),{})[r[mi]]=r[vi]
    for (i,k),m in by.items():
        print(os.path.basename(f),k,'; '.join(f"{a.split('.')[0].split('__')[-1]}={b}" for a,b in m.items()))
res={}
for f in glob.glob(W+'/*-[123].jsonl'):
    v=os.path.basename(f).rsplit('-',1)[0]
    for l in open(f):
        try: d=json.loads(l)
        except: continue
        res.setdefault(d['workload'],{}).setdefault(v,[]).append(d['kt_ms'])
for w,m in res.items():
    print(f"{w:36s}", ' '.join(f"{v}={statistics.median(x):.4f}" for v,x in sorted(m.items())))
PY
grep -h '"ok": false' $W/*.jsonl; head -3 $W/kiln.err
tar -C $W -czf $O/call4.tgz .
