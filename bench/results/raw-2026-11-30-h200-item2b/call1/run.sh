#!/usr/bin/env bash
# Device call 1: where(sum)'s writing pass as a block per tile, f32 rows of
# 513-1024 columns as a warp of 8 slots recomputing exp (new), against
# 11334a3's kernels (base); launch-rule knobs on top of new: split mode's
# blocks per multiprocessor (sbN: -DKILN_SPLIT_BLOCKS_PER_SM=N, 32 in new)
# and the rows kernel's grid cap (gN: -DKILN_ROWS_GRID_PER_SM=N blocks per
# multiprocessor, 0 = a block per row group; 64 in new). torch.compile
# default mode first, then three rounds alternating; ncu of new's where(sum)
# and softmax 43690x768 kernels last.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
D=bench/results/raw-2026-11-30-h200-item2b
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
timeout 200 python3 bench/results/raw-2026-11-30-h200-item2/call1/torch_probe.py > $W/torch.jsonl 2> $W/torch.err
for r in 1 2 3; do
  for v in base new; do timeout 40 .bench/lrx/long_rows_$v > $W/$v-$r.jsonl 2>> $W/kiln.err; done
  for v in sb4 sb8 sb16; do timeout 20 .bench/lrx/long_rows_$v where > $W/$v-$r.jsonl 2>> $W/kiln.err; done
  for v in g0 g16; do timeout 30 .bench/lrx/long_rows_$v "layer norm" softmax > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:kiln_where --launch-skip 30 --launch-count 6 --metrics $M --csv .bench/lrx/long_rows_new where > $W/ncu-kiln-where.csv 2> $W/ncu.err
timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:kiln_softmax --launch-skip 10 --launch-count 2 --metrics $M --csv .bench/lrx/long_rows_new "softmax 43690" > $W/ncu-kiln-softmax768.csv 2>> $W/ncu.err
python3 $D/table.py $W | tee $W/output.txt
tar -C $W -czf $O/call1.tgz .
