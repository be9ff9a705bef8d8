#!/usr/bin/env bash
# Device call 2: the GPU tests on the final tree (as is, then every guard
# made to fail); the item-2 workloads, Kiln's final kernels (fin) beside
# 11334a3's (base), three rounds alternating, torch.compile (default mode)
# in the same lease; ncu of layer norm over
# 43690x768 f32 on both sides (the shape still behind).
set -u
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
D=bench/results/raw-2026-11-30-h200-item2b
P=bench/results/raw-2026-11-30-h200-item2/call1/torch_probe.py
# .bench/c2.tar.xz: the staged tests, libraries and long_rows builds (the
# device tool carries at most 64 MiB).
tar -C .bench -xJf .bench/c2.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
timeout 240 python3 scripts/run-gpu-tests.py > $W/gpu-tests.txt 2>&1; echo "gpu tests rc=$?" >> $W/gpu-tests.txt
timeout 120 python3 scripts/run-gpu-tests.py --forced --only 'exec-cuda-reduce|sum-accuracy|exec-reduction-groups|exec-row-broadcast|exec-views' > $W/gpu-tests-forced.txt 2>&1; echo "forced rc=$?" >> $W/gpu-tests-forced.txt
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
timeout 150 python3 $P --modes default > $W/torch.jsonl 2> $W/torch.err
for r in 1 2 3; do
  for v in base fin; do timeout 40 .bench/lrx/long_rows_$v > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:kiln_layer --launch-skip 10 --launch-count 2 --metrics $M --csv .bench/lrx/long_rows_fin "layer norm 43690" > $W/ncu-kiln-ln768.csv 2> $W/ncu.err
TORCH_LOGS=output_code timeout 90 ncu --clock-control none --cache-control none --profile-from-start off --kernel-name regex:triton --metrics $M --csv python3 $P --calls 3 "layer norm 43690" > $W/ncu-torch-ln768.csv 2> $W/torch-ln768-code.txt
python3 $D/table.py $W | tee $W/output.txt
tail -25 $W/gpu-tests.txt; tail -8 $W/gpu-tests-forced.txt
tar -C $W -czf $O/call2.tgz .
