#!/usr/bin/env bash
# Device call 5: the rows kernels' per-pass loads of a row-invariant input
# (a norm's weight) with L2 evict_last. GPU tests of the row kernels
# (staged at this change), plain and with every guard failing; the LLaMA
# block, three rounds alternating:
#   A  the kept code before this session (1f25896): .bench/c5/prof_A
#   C  dc48874 (one-row rows kernels, plain-row bases): .bench/c5/prof_C
#   E  C + the weight hint: .bench/c5/prof_E
# (one runtime, .bench/libkiln_rt.so: the runtime did not change) and
# torch.compile; ncu per kernel of decode for E and torch.compile; the row
# sweep at E (.bench/c5/sweep_rows).
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
{ timeout 150 python3 scripts/run-gpu-tests.py
  timeout 90 python3 scripts/run-gpu-tests.py --forced --only 'exec-'
} > $O/tests.txt 2>&1
run() { local n=$1; shift; "$@" | sed "s/^/$n /"; }
for r in 1 2 3; do
  for w in decode prefill; do
    run A .bench/c5/prof_A $w --calls 0
    run C .bench/c5/prof_C $w --calls 0
    run E .bench/c5/prof_E $w --calls 0
    timeout 150 python3 bench/experiments/llama_torch_prof.py $w --calls 0 | sed "s/^/T /"
  done
done > $O/kt.txt 2>&1
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 80 $NCU .bench/c5/prof_E decode --calls 3 --reps 3 > $O/ncu-E-decode.csv 2> $O/ncu-E.err
timeout 150 $NCU python3 bench/experiments/llama_torch_prof.py decode --calls 3 --reps 3 > $O/ncu-T-decode.csv 2> $O/ncu-T.err
.bench/c5/sweep_rows > $O/sweep.jsonl 2> $O/sweep.err
grep -E '^\||MISMATCH' $O/tests.txt | grep -v '^| GPU test\|^|---'
python3 bench/results/raw-2026-11-29-h200-decode-kernels/ncu_table.py $O E T 2>&1 | grep -i "rms\|rows\|total"
python3 - $O <<'PY'
import re, sys, statistics as st, collections, json
o = sys.argv[1]
d = collections.defaultdict(list); s = collections.defaultdict(list)
for l in open(f"{o}/kt.txt"):
    m = re.match(r'(\w) (decode|prefill).*kernel time ([\d.]+) ms, single call ([\d.]+) ms', l)
    if m: d[(m[1], m[2])].append(float(m[3])); s[(m[1], m[2])].append(float(m[4]))
for k in sorted(d): print(*k, d[k], "median", st.median(d[k]), "single", st.median(s[k]))
for l in open(f"{o}/sweep.jsonl"):
    if l.startswith("{"): r = json.loads(l); print(f"{r['workload']:40s} {r['kt_ms']:.4f} {r['compiled']}")
PY
