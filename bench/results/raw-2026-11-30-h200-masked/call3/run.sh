#!/usr/bin/env bash
# Device call 3: masked softmax with the rows kernel's held bools packed
# (p0: 118 -> 80 registers by ptxas), p0 under -maxrregcount=64 (p0r64),
# p0 recomputing exp in the writing pass instead of keeping it (pnk, 54
# registers; also recomputes plain softmax's exp), against the tree before
# (base); three rounds alternating, ncu of each, torch.compile beside.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w3; mkdir -p $O $W
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
timeout 100 python3 bench/results/raw-2026-11-30-h200-masked/call1/torch_probe.py masked > $W/torch.jsonl 2> $W/torch.err
for r in 1 2 3; do
  for v in base p0 p0r64 pnk; do timeout 40 .bench/lr/long_rows_$v masked "softmax 32768" > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
for v in base p0 p0r64 pnk; do
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:masked --launch-skip 10 --launch-count 1 --metrics $M --csv .bench/lr/long_rows_$v masked > $W/ncu-$v-masked.csv 2>> $W/ncu.err
done
for c in p0 pnk; do cuobjdump -sass .bench/$c.cubin | awk '/Function : __kiln_ms_k0_bf16_rows4full$/{p=1;print;next} p&&/Function : /{p=0} p' > $W/sass-$c-rows4full.txt; done
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
for l in open(W+'/torch.jsonl'):
    d=json.loads(l); res.setdefault(d['workload'],{})['torch']=[d['kt_ms']]
for w,m in res.items():
    print(f"{w:36s}", ' '.join(f"{v}={statistics.median(x):.4f}" for v,x in sorted(m.items())), ' rounds:', ' '.join(f"{v}:{','.join('%.4f'%y for y in x)}" for v,x in sorted(m.items())))
PY
grep -h '"ok": false' $W/*.jsonl; head -3 $W/kiln.err
tar -C $W -czf $O/call3.tgz .
