#!/usr/bin/env bash
# Call C: GPU tests at the kept code; decode (the block as written, and with the key cache's cat
# written before v's projection) and prefill against torch.compile, three rounds; ncu both sides.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
{ timeout 330 python3 scripts/run-gpu-tests.py; timeout 150 python3 scripts/run-gpu-tests.py --forced --only 'exec-(products|join|multi-output|views|strided-vec)-cuda|exec-cuda-reduce'; } > $O/tests.txt 2>&1
grep -E '^\||MISMATCH|FAIL' $O/tests.txt | head -40
P=.bench/prof/llama_decode_prof
for r in 1 2 3; do
  for v in "" _kfirst; do $P$v decode --calls 0 | sed "s/^/kiln$v /" >> $O/kt.txt 2>&1; done
  timeout 100 python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
  $P prefill --calls 0 | sed "s/^/kiln /" >> $O/kt.txt 2>&1
  timeout 100 python3 bench/experiments/llama_torch_prof.py prefill --calls 0 >> $O/kt.txt 2>&1
done
cat $O/kt.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 80 $NCU $P decode --calls 3 --reps 3 > $O/ncu-kiln-decode.csv 2> $O/ncu-kiln-decode.err
timeout 80 $NCU ${P}_kfirst decode --calls 3 --reps 3 > $O/ncu-kfirst-decode.csv 2> $O/ncu-kfirst-decode.err
timeout 120 $NCU python3 bench/experiments/llama_torch_prof.py decode --calls 3 --reps 3 > $O/ncu-torch-decode.csv 2> $O/ncu-torch-decode.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O kiln kfirst torch
