#!/usr/bin/env bash
# Device call 2: launch-rule and kernel variants of long_rows (see README in
# the parent folder), alternating, two rounds; torch.compile (default) on
# the same workloads in the same lease; per-kernel ncu of both sides
# without cache flushes.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
D=bench/results/raw-2026-11-30-h200-item2
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
ROWS="32768x1024 16384x4096 43690x768 8192x4096 4096x8192"
for r in 1 2; do
  for v in base loop256 loop128 slots2; do timeout 60 .bench/lr/long_rows_$v $ROWS > $O/$v-$r.jsonl 2>> $O/kiln.err; done
  for v in base wt2 hint wt2hint; do timeout 30 .bench/lr/long_rows_$v where > $O/w$v-$r.jsonl 2>> $O/kiln.err; done
done
timeout 200 python3 $D/call1/torch_probe.py where 32768x1024 16384x4096 43690x768 > $O/torch.jsonl 2> $O/torch.err
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
timeout 100 ncu --profile-from-start off --clock-control none --cache-control none --kernel-name regex:triton --metrics $M --csv python3 $D/call1/torch_probe.py --calls 3 where "softmax 32768" "layer norm 16384x4096" "softmax 43690" > $O/ncu-torch.csv 2> $O/ncu-torch.err
for n in where "softmax 32768" "layer norm 16384x4096" "softmax 43690"; do
  timeout 25 ncu --clock-control none --cache-control none --kernel-name regex:kiln_ --launch-skip 9 --launch-count 3 --metrics $M --csv .bench/lr/long_rows_base "$n" >> $O/ncu-kiln.csv 2>> $O/ncu-kiln.err
done
for v in loop256 wt2; do
  n=$([ $v = wt2 ] && echo where || echo "layer norm 16384x4096")
  timeout 25 ncu --clock-control none --cache-control none --kernel-name regex:kiln_ --launch-skip 9 --launch-count 3 --metrics $M --csv .bench/lr/long_rows_$v "$n" >> $O/ncu-kiln-$v.csv 2>> $O/ncu-kiln.err
done
python3 $D/table.py $O
