#!/usr/bin/env bash
# Device call 3: a FULL twin of 6 slots for f32 rows of 768 (f6) against
# 7d9749e (fin), three rounds alternating, over the 768- and 1024-column
# workloads; ncu of f6's layer norm over 43690x768; exec-cuda-reduce (its
# new 300x768 rows take the 6-slot twin) as is and with every guard
# failing. .bench/c3a.tar.xz holds what it runs.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
tar -C .bench -xJf .bench/c3a.tar.xz
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
timeout 60 python3 scripts/run-gpu-tests.py --only '^exec-cuda-reduce$' > $W/gpu-tests.txt 2>&1; echo "rc=$?" >> $W/gpu-tests.txt
timeout 60 python3 scripts/run-gpu-tests.py --forced --only '^exec-cuda-reduce$' >> $W/gpu-tests.txt 2>&1; echo "forced rc=$?" >> $W/gpu-tests.txt
for r in 1 2 3; do
  for v in fin f6; do timeout 20 .bench/lrx/long_rows_$v 43690 32768x1024 > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
timeout 40 ncu --clock-control none --cache-control none --kernel-name regex:kiln_layer --launch-skip 10 --launch-count 2 --metrics $M --csv .bench/lrx/long_rows_f6 "layer norm 43690" > $W/ncu-kiln-f6-ln768.csv 2> $W/ncu.err
timeout 40 ncu --clock-control none --cache-control none --kernel-name regex:kiln_softmax --launch-skip 10 --launch-count 2 --metrics $M --csv .bench/lrx/long_rows_f6 "softmax 43690" > $W/ncu-kiln-f6-softmax768.csv 2>> $W/ncu.err
python3 bench/results/raw-2026-11-30-h200-item2b/table.py $W | tee $W/output.txt
grep -E "exec-cuda-reduce|rc=" $W/gpu-tests.txt
tar -C $W -czf $O/call3.tgz .
