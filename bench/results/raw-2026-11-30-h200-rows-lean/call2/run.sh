#!/usr/bin/env bash
# Device call 2: the LLaMA block, decode and prefill, against torch.compile,
# three rounds alternating:
#   A  the kept code (1f25896): .bench/prof/llama_decode_prof, runtime rtA
#   B  this change: .bench/prof2/llama_decode_prof (one-row rows kernels,
#      plain-rows bases), runtime rtB (streaming copies past L2)
#   C  B's kernels, runtime rtC (KILN_COPY_STREAM=0: the copies as before)
#   D  A's kernels, runtime rtB
# then ncu per kernel of decode for A, B and torch.compile.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
L=$PWD/.bench/dr
run() { # name rt binary args...
  local n=$1 rt=$2; shift 2
  LD_LIBRARY_PATH=$PWD/.bench/$rt:$L "$@" | sed "s/^/$n /"
}
A=.bench/prof/llama_decode_prof; B=.bench/prof2/llama_decode_prof
for r in 1 2 3; do
  for w in decode prefill; do
    run A rtA $A $w --calls 0
    run B rtB $B $w --calls 0
    if [ $w = decode ]; then run C rtC $B $w --calls 0; run D rtB $A $w --calls 0; fi
    timeout 150 python3 bench/experiments/llama_torch_prof.py $w --calls 0 | sed "s/^/T /"
  done
done > $O/kt.txt 2>&1
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
LD_LIBRARY_PATH=$PWD/.bench/rtA:$L timeout 80 $NCU $A decode --calls 3 --reps 3 > $O/ncu-A-decode.csv 2> $O/ncu-A.err
LD_LIBRARY_PATH=$PWD/.bench/rtB:$L timeout 80 $NCU $B decode --calls 3 --reps 3 > $O/ncu-B-decode.csv 2> $O/ncu-B.err
timeout 150 $NCU python3 bench/experiments/llama_torch_prof.py decode --calls 3 --reps 3 > $O/ncu-T-decode.csv 2> $O/ncu-T.err
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O A B T 2>&1 | tail -30
grep -E "kernel time" $O/kt.txt | awk '{print $1, $2, $(NF-5), $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF}'
