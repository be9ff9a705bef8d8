#!/usr/bin/env bash
# Autotuning's effect after timing in sustained rounds: Kiln's GEMM
# workloads without and with KILN_GEMM_AUTOTUNE=1 (fresh cache), alternated,
# three times; the MLP training step likewise.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p $out
rm -f /tmp/bench2.cache
for r in 1 2 3; do
  for w in "GELU" "MLP block"; do
    ./.bench/kiln_bench --reps 30 --only "$w" 2>>$out/kiln.err >> $out/kiln.jsonl
    KILN_GEMM_AUTOTUNE=1 KILN_AUTOTUNE_CACHE=/tmp/bench2.cache KILN_LOGS=kernels ./.bench/kiln_bench --reps 30 --only "$w" 2>>$out/kiln-autotune.err >> $out/kiln-autotune.jsonl
  done
done
for t in 1 2; do
  ./.bench/train_bench --reps 30 --only MLP 2>>$out/train.err >> $out/train.jsonl
  KILN_GEMM_AUTOTUNE=1 KILN_AUTOTUNE_CACHE=/tmp/bench2.cache ./.bench/train_bench --reps 30 --only MLP 2>>$out/train.err >> $out/train-autotune.jsonl
done
cp /tmp/bench2.cache $out/bench-autotune-cache.txt
grep "proposal .* of" $out/kiln-autotune.err | sort | uniq -c | head
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
for f in ["kiln.jsonl", "kiln-autotune.jsonl", "train.jsonl", "train-autotune.jsonl"]:
    print("==", f)
    for l in open(os.path.join(out, f)):
        if not l.startswith("{"): continue
        r = json.loads(l)
        if "compiled_kt_ms" in r or "compiled_kernel_ms" in r:
            print(r["workload"][:40], r.get("compiled_kt_ms", r.get("compiled_kernel_ms")), r.get("compiled_ms", r.get("compiled_single_ms")))
PY
