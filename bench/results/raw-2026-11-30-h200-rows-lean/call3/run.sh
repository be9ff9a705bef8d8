#!/usr/bin/env bash
# Device call 3: the GPU tests at this change (staged with
# scripts/stage-gpu-tests.sh), plain and with every guard failing for the
# row tests; then kiln_bench --sweep's row shapes (sweep_rows.cpp),
# bench/experiments/short_rows.cpp and few_rows.cpp (decode's few rows),
# built with this change's plugin into .bench/sr2.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
{ timeout 330 python3 scripts/run-gpu-tests.py
  timeout 120 python3 scripts/run-gpu-tests.py --forced --only 'exec-(cuda-reduce|row-broadcast|reduction-groups|views|multi-output|join)'
} > $O/tests.txt 2>&1
.bench/sr2/sweep_rows > $O/sweep.jsonl 2> $O/sweep.err
.bench/sr2/short_rows > $O/short.jsonl 2> $O/short.err
.bench/sr2/few_rows > $O/few.txt 2>&1
grep -E '^\||MISMATCH|FAIL|passed|failed' $O/tests.txt | tail -40
python3 - $O <<'PY'
import json, sys
o = sys.argv[1]
for f in ("sweep.jsonl", "short.jsonl"):
    for l in open(f"{o}/{f}"):
        if l.startswith("{"):
            r = json.loads(l); print(f"{r['workload']:46s} {r['kt_ms']:8.4f} {r['compiled']} {r['max_abs_diff']:.2g}")
PY
cat $O/few.txt
