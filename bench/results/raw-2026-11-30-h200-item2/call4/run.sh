#!/usr/bin/env bash
# Device call 4: the rows kernel's 4-slot instance with fewer registers, so
# more blocks fit a multiprocessor: rb3 (__launch_bounds__(512, 3): 40
# registers), mr48 (__maxnreg__(48)); s8 (f32 rows of up to 8 slots a
# thread, a warp per row of 1024) and rb3s8 (both). Alternating, three
# rounds, every shape of long_rows but where(sum); torch.compile (default)
# in the same lease; ncu without cache flushes.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
D=bench/results/raw-2026-11-30-h200-item2
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
for r in 1 2 3; do
  for v in base rb3 mr48 s8 rb3s8; do timeout 60 .bench/lr/long_rows_$v x > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
timeout 240 python3 $D/call1/torch_probe.py x > $W/torch.jsonl 2> $W/torch.err
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
ncu1() { timeout 25 ncu --clock-control none --cache-control none --kernel-name regex:kiln_ --launch-skip 9 --launch-count 3 --metrics $M --csv .bench/lr/long_rows_$1 "$2" >> $W/ncu-kiln-$1.csv 2>> $W/ncu.err; }
ncu1 rb3 "layer norm 16384x4096"; ncu1 mr48 "layer norm 16384x4096"; ncu1 rb3 "softmax 32768"
python3 $D/table.py $W | tee $W/output.txt
tar -C $W -czf $O/call4.tgz .
