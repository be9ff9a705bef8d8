#!/usr/bin/env bash
# Device call 4: the GPU tests call 3 could not carry (they need the CPU
# BLAS, or the 64 MiB limit: exec-join, -attention, -autotune, -backward,
# -graphs; staged in .bench/gt4), then Kiln's sweep (sweep_rows, this
# change) before and after torch.compile (default mode) on kiln_bench
# --sweep's shapes (bench/torch_bench.py --sweep), in one lease.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
rm -rf .bench/gpu-tests && mv .bench/gt4 .bench/gpu-tests
{ timeout 200 python3 scripts/run-gpu-tests.py
  timeout 60 python3 scripts/run-gpu-tests.py --forced --only 'exec-(join|attention)'
} > $O/tests.txt 2>&1
.bench/sr2/sweep_rows > $O/kiln1.jsonl 2> $O/kiln.err
timeout 300 python3 bench/torch_bench.py --reps 30 --modes default --sweep >> $O/torch.jsonl 2>> $O/torch.err
.bench/sr2/sweep_rows > $O/kiln2.jsonl 2>> $O/kiln.err
grep -E '^\||MISMATCH' $O/tests.txt | grep -v 'kiln_unit_tests\|kiln_torch'
python3 - $O <<'PY'
import json, sys, statistics as st
o = sys.argv[1]
def load(f):
    try: return [json.loads(l) for l in open(f"{o}/{f}") if l.startswith('{"workload')]
    except FileNotFoundError: return []
k1, k2, t = load("kiln1.jsonl"), load("kiln2.jsonl"), load("torch.jsonl")
tk = {r["workload"]: r.get("compiled_kt_ms") for r in t}
ts = {r["workload"]: r.get("compiled_ms") for r in t}
print(f"{'workload':40s} {'kiln1':>8s} {'kiln2':>8s} {'torch':>8s} {'torch/kiln':>10s} {'torch 1call':>11s}")
for a in k1:
    n = a["workload"]; b = next((r for r in k2 if r["workload"] == n), None)
    kb = b["kt_ms"] if b else float('nan'); k = min(a["kt_ms"], kb) if b else a["kt_ms"]
    tv = tk.get(n) or float('nan')
    print(f"{n:40s} {a['kt_ms']:8.4f} {kb:8.4f} {tv:8.4f} {tv / ((a['kt_ms'] + kb) / 2):10.2f} {ts.get(n) or float('nan'):11.4f}")
PY
