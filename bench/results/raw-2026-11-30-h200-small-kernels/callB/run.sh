#!/usr/bin/env bash
# Call B: decode with both small-call rules, with neither, and torch.compile; ncu per kernel.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
P=.bench/prof/llama_decode_prof
for r in 1 2 3; do
  for v in "" _ss0 _s0; do $P$v decode --calls 0 | sed "s/^/new$v /" >> $O/kt.txt 2>&1; done
  timeout 100 python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
done
cat $O/kt.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
for v in "" _ss0; do
  timeout 100 $NCU $P$v decode --calls 3 --reps 3 > $O/ncu-kiln$v-decode.csv 2> $O/ncu-kiln$v-decode.err
done
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O kiln kiln_ss0
