#!/usr/bin/env bash
# One lease: GPU tests of this session's changes, then the LLaMA block and
# its kernels, Kiln against torch.compile.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
P=.bench/prof/llama_decode_prof
{ python3 scripts/run-gpu-tests.py; python3 scripts/run-gpu-tests.py --forced --only 'exec-join-cuda|exec-products-cuda'; } > $O/tests.txt 2>&1
grep -E '^\|' $O/tests.txt
# kernel time, alternating, 3 rounds
for r in 1 2 3; do
  $P decode --calls 0 >> $O/kt.txt 2>&1
  python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
  $P prefill --calls 0 >> $O/kt.txt 2>&1
  python3 bench/experiments/llama_torch_prof.py prefill --calls 0 >> $O/kt.txt 2>&1
done
cat $O/kt.txt
timeout 240 python3 bench/experiments/llama_torch_prof.py decode --calls 0 --mode max-autotune-no-cudagraphs >> $O/kt-autotune.txt 2>&1; tail -1 $O/kt-autotune.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 150 $NCU $P decode --calls 3 --reps 3 > $O/ncu-kiln-decode.csv 2> $O/ncu-kiln-decode.err
timeout 150 $NCU python3 bench/experiments/llama_torch_prof.py decode --calls 3 --reps 3 > $O/ncu-torch-decode.csv 2> $O/ncu-torch-decode.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O kiln torch
