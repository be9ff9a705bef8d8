#!/usr/bin/env bash
# Device call 1 (diagnostic): masked softmax (bf16 [8,16,1024,1024] scores,
# a [T, T] bool mask) and var(x) over 2^26, the two kernels furthest behind
# torch.compile in 2026-11-30-h200-full.md, beside the item-2 rows: kernel
# time on both sides, then ncu of each side's kernels, the SASS of Kiln's
# masked softmax and Triton's generated source.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w1; mkdir -p $O $W
D=bench/results/raw-2026-11-30-h200-masked/call1
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
timeout 150 python3 $D/torch_probe.py where var masked "layer norm 16384" "softmax 32768" > $W/torch.jsonl 2> $W/torch.err
for r in 1 2; do timeout 40 .bench/lr/long_rows_base where var masked "layer norm 16384" "softmax 32768" > $W/base-$r.jsonl 2>> $W/kiln.err; done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:masked --launch-skip 10 --launch-count 2 --metrics $M --csv .bench/lr/long_rows_base masked > $W/ncu-kiln-masked.csv 2> $W/ncu.err
timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:var --launch-skip 10 --launch-count 4 --metrics $M --csv .bench/lr/long_rows_base var > $W/ncu-kiln-var.csv 2>> $W/ncu.err
TORCH_LOGS=output_code timeout 120 ncu --clock-control none --cache-control none --profile-from-start off --metrics $M --csv python3 $D/torch_probe.py --calls 3 masked var > $W/ncu-torch.csv 2> $W/torch-code.txt
cuobjdump -sass .bench/lr/long_rows_base 2>/dev/null | awk '/Function : .*masked.*rows4full/{p=1} p&&/Function : /&&!/masked.*rows4full/{p=0} p' > $W/sass-masked-rows4full.txt
wc -l $W/sass-masked-rows4full.txt
grep -v '^#' $W/ncu-torch.csv | head -3 | cut -c1-300
cat $W/base-1.jsonl $W/torch.jsonl
python3 - $W <<'PY'
import csv,sys,glob,os
for f in sorted(glob.glob(sys.argv[1]+'/ncu-*.csv')):
    rows=[r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    if not rows: continue
    h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ii=h.index('ID')
    by={}
    for r in rows[1:]:
        by.setdefault((r[ii],r[ki][:60]),{})[r[mi]]=r[vi]
    print(os.path.basename(f))
    for (i,k),m in by.items():
        print(' ',i,k); print('   ', '; '.join(f"{a.split('.')[0].split('__')[-1]}={b}" for a,b in m.items()))
PY
tar -C $W -czf $O/call1.tgz .
