#!/usr/bin/env bash
set -u
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
P=.bench/prof/llama_decode_prof
python3 scripts/run-gpu-tests.py > $O/tests.txt 2>&1; tail -8 $O/tests.txt
for r in 1 2; do
  $P decode --calls 0 >> $O/kt.txt 2>&1
  python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
  $P prefill --calls 0 >> $O/kt.txt 2>&1
  python3 bench/experiments/llama_torch_prof.py prefill --calls 0 >> $O/kt.txt 2>&1
done
cat $O/kt.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 200 $NCU $P decode --calls 3 --reps 3 > $O/ncu-kiln-decode.csv 2> $O/ncu-kiln-decode.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O kiln
