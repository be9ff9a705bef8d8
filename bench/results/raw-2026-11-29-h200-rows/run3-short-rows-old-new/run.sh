#!/usr/bin/env bash
# Call B: U32Div and the row reduction on the device (unit tests); the
# short-row policies (bench/experiments/short_rows.cpp built with
# KILN_SHORT_ROW_SLOTS=1, 2, 4), alternating, 3 rounds; then old build
# (.bench/old: kiln_bench and its libkiln_rt) against new (.bench),
# alternating, 3 rounds.
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
[ -x ./.bench/gpu-tests/kiln_unit_tests ] && ./.bench/gpu-tests/kiln_unit_tests --gtest_filter='GeneratedDevice.*:KernelAbi.*:Generated*' 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) " | tee $out/unit.txt | tail -8
for r in 1 2 3; do for s in 1 2 4; do ./.bench/sr/sr$s >> $out/short_rows.jsonl 2>>$out/short_rows.err; done; done
W=("bias, head" "softmax" "layer norm" "RMS norm" "where(sum" "var(x)" "sin(x)+cos(y)" "tanh-GELU")
for r in 1 2 3; do
  for w in "${W[@]}"; do
    LD_LIBRARY_PATH=$PWD/.bench/old:$PWD/.bench ./.bench/old/kiln_bench --reps 30 --only "$w" 2>>$out/old.err >> $out/old.jsonl
    ./.bench/kiln_bench --reps 30 --only "$w" 2>>$out/new.err >> $out/new.jsonl
  done
done
python3 - "$out" <<'PY'
import json, sys, os, statistics as st
out = sys.argv[1]
def rows(f):
    p = os.path.join(out, f)
    return [json.loads(l) for l in open(p) if l.startswith("{\"workload")] if os.path.exists(p) else []
sr = rows("short_rows.jsonl")
names = []
for r in sr:
    if r["workload"] not in names: names.append(r["workload"])
print(f"{'short rows':44s} {'1 slot':>8s} {'2 slots':>8s} {'4 slots':>8s}  (kernel ms, median of 3 runs)")
for n in names:
    m = {p: st.median([r["kt_ms"] for r in sr if r["workload"] == n and r["policy"] == p] or [float('nan')]) for p in (1, 2, 4)}
    ok = all(r["compiled"] for r in sr if r["workload"] == n)
    print(f"{n:44s} {m[1]:8.4f} {m[2]:8.4f} {m[4]:8.4f}  compiled={ok}")
old, new = rows("old.jsonl"), rows("new.jsonl")
names = []
for r in new:
    if r["workload"] not in names: names.append(r["workload"])
print(f"{'workload':34s} {'old kt':>8s} {'new kt':>8s} {'old 1call':>9s} {'new 1call':>9s} {'old eag kt':>10s} {'new eag kt':>10s} ok")
for n in names:
    def med(rs, k):
        v = [r[k] for r in rs if r["workload"] == n and k in r]
        return st.median(v) if v else float('nan')
    ok = all(r.get("ok", False) for r in old + new if r["workload"] == n)
    print(f"{n:34s} {med(old,'compiled_kt_ms'):8.4f} {med(new,'compiled_kt_ms'):8.4f} {med(old,'compiled_ms'):9.4f} {med(new,'compiled_ms'):9.4f} {med(old,'eager_kt_ms'):10.4f} {med(new,'eager_kt_ms'):10.4f} {ok}")
PY
