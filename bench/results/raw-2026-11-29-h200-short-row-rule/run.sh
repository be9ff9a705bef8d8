#!/usr/bin/env bash
# Short rows: the slot rule (four slots for f32 rows of 64-128 columns
# that need no outer walk; bench/experiments/short_rows.cpp without
# KILN_SHORT_ROW_SLOTS) against two slots for every row (the old rule),
# alternating, 3 rounds; torch.compile on the same shapes in the same lease.
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
for r in 1 2 3; do
  ./.bench/sr/sr_rule >> $out/rule.jsonl 2>>$out/sr.err
  ./.bench/sr/sr2 >> $out/two.jsonl 2>>$out/sr.err
done
for w in "x64" "x128"; do
  timeout 120 python3 bench/torch_bench.py --reps 30 --modes default --sweep --only "$w" 2>>$out/torch.err >> $out/torch.jsonl
done
python3 - "$out" <<'PY'
import json, sys, os, statistics as st
out = sys.argv[1]
def rows(f):
    p = os.path.join(out, f)
    return [json.loads(l) for l in open(p) if l.startswith('{"workload')] if os.path.exists(p) else []
rule, two, torch = rows("rule.jsonl"), rows("two.jsonl"), rows("torch.jsonl")
names = []
for r in rule:
    if r["workload"] not in names: names.append(r["workload"])
print(f"{'workload':44s} {'2 slots':>8s} {'rule':>8s}  ok   (kernel ms, median of 3 runs)")
for n in names:
    m2 = st.median([r["kt_ms"] for r in two if r["workload"] == n] or [float('nan')])
    mr = st.median([r["kt_ms"] for r in rule if r["workload"] == n] or [float('nan')])
    ok = all(r["compiled"] and r["max_abs_diff"] < 1e-3 for r in rule + two if r["workload"] == n)
    print(f"{n:44s} {m2:8.4f} {mr:8.4f}  {ok}")
for r in torch:
    print("torch", r["workload"], "kt", round(r.get("compiled_kt_ms", float('nan')), 5))
PY
