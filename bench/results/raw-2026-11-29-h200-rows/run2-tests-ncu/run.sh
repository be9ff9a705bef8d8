#!/usr/bin/env bash
# Call A: the staged GPU tests (plain, and forced for the row and view
# tests), then ncu on the new bias + head split + softmax kernel
# (instructions per row), then torch.compile on the same workloads.
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
timeout 300 python3 scripts/run-gpu-tests.py > $out/gpu-tests.txt 2>&1; echo "gpu tests rc=$?"; tail -14 $out/gpu-tests.txt
timeout 120 python3 scripts/run-gpu-tests.py --forced --only 'exec-views|exec-row|exec-cuda-reduce|exec-strided' > $out/gpu-tests-forced.txt 2>&1; echo "forced rc=$?"; tail -6 $out/gpu-tests-forced.txt
timeout 120 ncu --section SpeedOfLight --section InstructionStats --section Occupancy --section LaunchStats -k regex:bias_heads --launch-skip 3 --launch-count 1 ./.bench/kiln_bench --reps 1 --only "bias, head" > $out/ncu-new.txt 2>&1
grep -E 'Duration|Executed Instructions  |Registers Per|Memory Throughput|Achieved Occ|Grid Size|Block Size' $out/ncu-new.txt
for r in 1 2; do ./.bench/kiln_bench --reps 30 --only "bias, head" 2>>$out/new.err >> $out/new.jsonl; done
for w in "bias, head" "softmax"; do
  timeout 200 python3 bench/torch_bench.py --reps 30 --modes default --only "$w" 2>>$out/torch.err >> $out/torch.jsonl
done
grep -h '"workload"' $out/new.jsonl $out/torch.jsonl | cut -c1-400
