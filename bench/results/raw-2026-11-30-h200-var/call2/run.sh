#!/usr/bin/env bash
# Device call 2: the combine kernel at 512 threads (c512, the tree's final
# form) against call 1's 256 (new) and the tree before (base), for var(x)
# and where(sum(x)) over 2^26 f32; three alternating rounds, Kiln first
# (call 1's torch.compile probe ran first on a freshly started machine and
# was slow everywhere), then torch.compile default, then the rounds again;
# ncu of the combine kernels; exec-cuda-reduce of the final tree.
set -u
O=${OUT:-/tmp/out}; W=$O; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-30-h200-var
for r in 1 2 3; do
  for v in base new c512; do timeout 60 .bench/lr/long_rows_$v var where > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
timeout 150 python3 $P/call1/torch_probe.py var where > $W/torch.jsonl 2> $W/torch.err
for r in 4 5 6; do
  for v in base new c512; do timeout 60 .bench/lr/long_rows_$v var where > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum
for v in new c512; do
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:combine --launch-skip 10 --launch-count 4 --metrics $M --csv .bench/lr/long_rows_$v var where > $W/ncu-$v.csv 2>> $W/ncu.err
done
( cd .bench/gpu-tests && timeout 200 ./exec-cuda-reduce > $W/reduce.out 2>&1; echo "rc=$?" >> $W/reduce.out; KILN_FORCE_GUARD_FAILURE=1 timeout 200 ./exec-cuda-reduce > $W/reduce.forced.out 2>&1; echo "rc=$?" >> $W/reduce.forced.out )
python3 - $W <<'PY'
import csv,sys,glob,os,json,statistics
W=sys.argv[1]
for f in sorted(glob.glob(W+'/ncu-*.csv')):
    rows=[r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    if not rows: print(os.path.basename(f),'empty'); continue
    h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ii=h.index('ID')
    by={}
    for r in rows[1:]:
        by.setdefault((r[ii],r[ki][:44]),{})[r[mi]]=r[vi]
    for (i,k),m in by.items():
        print(os.path.basename(f), k, 'us=%s regs=%s blk=%s inst=%s' % (m.get('gpu__time_duration.sum'), m.get('launch__registers_per_thread'), m.get('launch__block_size'), m.get('smsp__inst_executed.sum')))
res={}
for f in glob.glob(W+'/*-[0-9].jsonl'):
    v,rr=os.path.basename(f)[:-6].split('-')
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        res.setdefault(d['workload'],{}).setdefault(v,[]).append((int(rr),d['kt_ms'],d['ms'],d['ok']))
for l in open(W+'/torch.jsonl'):
    try: d=json.loads(l)
    except Exception: continue
    res.setdefault(d['workload'],{}).setdefault('torch',[]).append((0,d['kt_ms'],d['ms'],True))
print('%-28s %-34s %-34s %-34s %s' % ('workload','base kt (rounds 1-3 | 4-6) 1call','new','c512','torch kt/1call'))
for w,m in res.items():
    def f(v):
        x=m.get(v)
        if not x: return '-'
        a=[k for r,k,_,_ in x if r<=3]; b=[k for r,k,_,_ in x if r>3]
        ok='ok' if all(o for *_,o in x) else 'BAD'
        if v=='torch': return '%.4f/%.4f' % (x[0][1], x[0][2])
        return '%.4f | %.4f  %.4f %s' % (statistics.median(a), statistics.median(b), statistics.median(c for _,_,c,_ in x), ok)
    print('%-28s %-34s %-34s %-34s %s' % (w[:28],f('base'),f('new'),f('c512'),f('torch')))
for t in ['reduce.out','reduce.forced.out']:
    print(t, open(W+'/'+t).read()[-200:])
PY
