#!/usr/bin/env bash
# Call D: the cat-pieces kernel reading its piece's parameters as constants
# (.bench/libkiln_rt.so) against the one before (.bench/rt_old/), the
# decode block alternating with torch.compile; exec-join-cuda and the unit
# tests on the new runtime.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench/d:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
timeout 200 python3 scripts/run-gpu-tests.py --only 'exec-join-cuda' > $O/tests.txt 2>&1
grep -E '^\||MISMATCH|FAILED' $O/tests.txt | head -20
P=.bench/prof/llama_decode_prof
for r in 1 2 3; do
  $P decode --calls 0 | sed "s/^/new /" >> $O/kt.txt 2>&1
  LD_LIBRARY_PATH=$PWD/.bench/rt_old:$LD_LIBRARY_PATH $P decode --calls 0 | sed "s/^/old /" >> $O/kt.txt 2>&1
  timeout 100 python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
done
cat $O/kt.txt
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 80 $NCU $P decode --calls 3 --reps 3 > $O/ncu-new-decode.csv 2> $O/ncu-new-decode.err
LD_LIBRARY_PATH=$PWD/.bench/rt_old:$LD_LIBRARY_PATH timeout 80 $NCU $P decode --calls 3 --reps 3 > $O/ncu-old-decode.csv 2> $O/ncu-old-decode.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O new old | grep -E "==|copy|total"
