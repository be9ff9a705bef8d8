#!/usr/bin/env bash
# Device call 1: var(x) over 2^26 f32 with the split pass taking its
# moments a batch of slots at a time (new) against the tree before
# (base); the combine kernel's single predicated batch of 16 partials and
# tree merge (new, every split reduction: where(sum) too); the 4-slot
# rows kernel at 48 registers (n48, KILN_EXP_MAXNREG=48: 5 blocks of 256
# a multiprocessor instead of 4) for layer norm and softmax over 4096
# columns. torch.compile default beside them; three alternating rounds;
# ncu of the var and layer-norm kernels; then exec-cuda-reduce (the
# staged GPU test) for correctness.
set -u
O=${OUT:-/tmp/out}; W=$O; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-30-h200-var/call1
timeout 200 python3 $P/torch_probe.py var where "layer norm 16384x4096" "softmax 16384x4096" "layer norm 8192x4096" > $W/torch.jsonl 2> $W/torch.err
for r in 1 2 3; do
  for v in base new n48; do timeout 60 .bench/lr/long_rows_$v var where "layer norm 16384x4096" "softmax 16384x4096" "layer norm 8192x4096" > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum
for v in base new; do
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:var --launch-skip 10 --launch-count 4 --metrics $M --csv .bench/lr/long_rows_$v var > $W/ncu-$v-var.csv 2>> $W/ncu.err
done
for v in base n48; do
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:layer_norm --launch-skip 10 --launch-count 1 --metrics $M --csv .bench/lr/long_rows_$v "layer norm 16384x4096" > $W/ncu-$v-ln.csv 2>> $W/ncu.err
done
( cd .bench/gpu-tests && for t in exec-cuda-reduce; do timeout 240 ./$t > $W/$t.out 2>&1; echo "$t rc=$?" >> $W/tests.txt; KILN_FORCE_GUARD_FAILURE=1 timeout 240 ./$t > $W/$t.forced.out 2>&1; echo "$t forced rc=$?" >> $W/tests.txt; done )

python3 - $W <<'PY'
import csv,sys,glob,os,json,statistics
W=sys.argv[1]
for f in sorted(glob.glob(W+'/ncu-*.csv')):
    rows=[r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    if not rows: print(os.path.basename(f),'empty'); continue
    h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ii=h.index('ID')
    by={}
    for r in rows[1:]:
        by.setdefault((r[ii],r[ki][:46]),{})[r[mi]]=r[vi]
    for (i,k),m in by.items():
        print(os.path.basename(f), k, 'us=%s regs=%s grid=%s blk=%s warps%%=%s dram%%=%s inst=%s' % (m.get('gpu__time_duration.sum'), m.get('launch__registers_per_thread'), m.get('launch__grid_size'), m.get('launch__block_size'), m.get('sm__warps_active.avg.pct_of_peak_sustained_active'), m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed'), m.get('smsp__inst_executed.sum')))
res={}
for f in glob.glob(W+'/*-[123].jsonl'):
    v=os.path.basename(f).split('-')[0]
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        res.setdefault(d['workload'],{}).setdefault(v,[]).append((d['kt_ms'],d['ms'],d['ok']))
for l in open(W+'/torch.jsonl'):
    try: d=json.loads(l)
    except Exception: continue
    res.setdefault(d['workload'],{}).setdefault('torch',[]).append((d['kt_ms'],d['ms'],True))
print('%-36s %-26s %-26s %-26s %s' % ('workload','base kt/1call','new','n48','torch'))
for w,m in res.items():
    def f(v):
        x=m.get(v)
        if not x: return '-'
        return '%.4f/%.4f %s' % (statistics.median(a for a,_,_ in x), statistics.median(b for _,b,_ in x), 'ok' if all(o for *_,o in x) else 'BAD')
    print('%-36s %-26s %-26s %-26s %s' % (w[:36],f('base'),f('new'),f('n48'),f('torch')))
print(open(W+'/tests.txt').read())
for t in ['exec-cuda-reduce.out','exec-cuda-reduce.forced.out']:
    print(t, open(W+'/'+t).read()[-400:])
PY
