#!/usr/bin/env bash
# One lease: GPU tests of the row prefetch and the cat changes, then the
# LLaMA block with the prefetch (a1) and without it (a0) against torch.compile.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
{ python3 scripts/run-gpu-tests.py; python3 scripts/run-gpu-tests.py --forced --only 'exec-'; } > $O/tests.txt 2>&1
grep -E '^\||MISMATCH' $O/tests.txt | head -20
for r in 1 2 3; do
  for v in a0 a1; do .bench/prof/llama_decode_prof_$v decode --calls 0 | sed "s/^/$v /" >> $O/kt.txt 2>&1; done
  python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
done
.bench/prof/llama_decode_prof_a1 prefill --calls 0 | sed "s/^/a1 /" >> $O/kt.txt 2>&1
python3 bench/experiments/llama_torch_prof.py prefill --calls 0 >> $O/kt.txt 2>&1
cat $O/kt.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 120 $NCU .bench/prof/llama_decode_prof_a1 decode --calls 3 --reps 3 > $O/ncu-kiln-decode.csv 2> $O/ncu-kiln-decode.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O kiln
