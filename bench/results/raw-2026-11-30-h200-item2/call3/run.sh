#!/usr/bin/env bash
# Device call 3: where(sum)'s split kernels with tiles round-robin over a
# row's blocks (cyc1: both passes, cyc2: the writing pass); f32 rows of up
# to 8 slots a thread (s8: a warp per row of 768-1024 f32); the loop kernel
# for rows past 256 slots with a block per row (lg) and 3 or 4 blocks per
# multiprocessor (lgmb3, lgmb4). Alternating, three rounds, torch.compile
# (default) in the same lease, then ncu without cache flushes.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
D=bench/results/raw-2026-11-30-h200-item2
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
for r in 1 2 3; do
  for v in base cyc1 cyc2; do timeout 30 .bench/lr/long_rows_$v where > $W/w$v-$r.jsonl 2>> $W/kiln.err; done
  for v in base s8 loop256; do timeout 40 .bench/lr/long_rows_$v 32768x1024 43690x768 > $W/s$v-$r.jsonl 2>> $W/kiln.err; done
  for v in base lg lgmb3 lgmb4; do timeout 40 .bench/lr/long_rows_$v 16384x4096 8192x4096 4096x8192 > $W/l$v-$r.jsonl 2>> $W/kiln.err; done
done
timeout 200 python3 $D/call1/torch_probe.py where 32768x1024 16384x4096 43690x768 > $W/torch.jsonl 2> $W/torch.err
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
ncu1() { timeout 25 ncu --clock-control none --cache-control none --kernel-name regex:kiln_ --launch-skip 9 --launch-count 3 --metrics $M --csv .bench/lr/long_rows_$1 "$2" >> $W/ncu-kiln-$1.csv 2>> $W/ncu.err; }
ncu1 cyc1 where; ncu1 cyc2 where; ncu1 s8 "softmax 32768"; ncu1 s8 "softmax 43690"; ncu1 base "softmax 43690"; ncu1 loop256 "softmax 43690"; ncu1 lgmb4 "layer norm 16384x4096"; ncu1 lg "layer norm 16384x4096"
python3 $D/table.py $W | tee $W/output.txt
tar -C $W -czf $O/call3.tgz .
