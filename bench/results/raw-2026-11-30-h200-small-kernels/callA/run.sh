#!/usr/bin/env bash
# Call A: small-kernel microbenchmarks; the LLaMA block with and without the pointwise spread, against torch.compile.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
.bench/rmsx/rms_variants > $O/rms_variants.txt 2>&1; cat $O/rms_variants.txt
for r in 1 2; do for v in few_rows few_rows_s0; do echo "== $v"; .bench/rmsx/$v; done; done > $O/few_rows.txt 2>&1
timeout 120 python3 .bench/rmsx/few_rows_torch.py >> $O/few_rows.txt 2>&1
cat $O/few_rows.txt
P=.bench/prof/llama_decode_prof
for r in 1 2 3; do
  for v in "" _s0; do $P$v decode --calls 0 | sed "s/^/new$v /" >> $O/kt.txt 2>&1; done
  timeout 100 python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
done
for v in "" _s0; do $P$v prefill --calls 0 | sed "s/^/new$v /" >> $O/kt.txt 2>&1; done
timeout 100 python3 bench/experiments/llama_torch_prof.py prefill --calls 0 >> $O/kt.txt 2>&1
cat $O/kt.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 100 $NCU $P decode --calls 3 --reps 3 > $O/ncu-kiln-decode.csv 2> $O/ncu-kiln-decode.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O kiln
