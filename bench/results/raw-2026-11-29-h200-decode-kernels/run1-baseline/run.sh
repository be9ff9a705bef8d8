#!/usr/bin/env bash
# Decode/prefill kernel breakdown, Kiln vs torch.compile, one lease.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
P=.bench/prof/llama_decode_prof
# 1. correctness tests of the change
(python3 scripts/run-gpu-tests.py --only 'exec-products-cuda|exec-cuda-regions' ; python3 scripts/run-gpu-tests.py --forced --only 'exec-products-cuda') > $O/tests.txt 2>&1
tail -5 $O/tests.txt
# 2. timings without a profiler, alternating
for r in 1 2; do
  $P decode --calls 0 >> $O/kt.txt 2>&1
  python3 bench/experiments/llama_torch_prof.py decode --calls 0 >> $O/kt.txt 2>&1
  $P prefill --calls 0 >> $O/kt.txt 2>&1
  python3 bench/experiments/llama_torch_prof.py prefill --calls 0 >> $O/kt.txt 2>&1
done
KILN_GEMM_AUTOTUNE=1 $P decode --calls 0 >> $O/kt.txt 2>&1
cat $O/kt.txt
# 3. per-kernel durations under ncu (real clocks, warm caches), 3 calls
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
timeout 200 $NCU $P decode --calls 3 --reps 3 > $O/ncu-kiln-decode.csv 2> $O/ncu-kiln-decode.err
timeout 200 $NCU python3 bench/experiments/llama_torch_prof.py decode --calls 3 --reps 3 > $O/ncu-torch-decode.csv 2> $O/ncu-torch-decode.err
python3 - $O <<'PY'
import csv, sys, io, collections
o = sys.argv[1]
for side in ("kiln", "torch"):
    rows = []
    txt = open(f"{o}/ncu-{side}-decode.csv").read()
    lines = [l for l in txt.splitlines() if l.startswith('"')]
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            rows.append((r["Kernel Name"][:70], float(r["Metric Value"].replace(",", "")), r["Metric Unit"]))
    n = len(rows) // 3 if rows else 0
    print(f"== {side}: {len(rows)} kernels in 3 calls")
    tot = 0
    for i in range(n):
        v = sorted([rows[i + k * n][1] for k in range(3)])[1]
        u = rows[i][2]
        us = v / 1000 if u == "nsecond" else v if u == "usecond" else v * 1000
        tot += us
        print(f"{i:3d} {us:9.2f} us  {rows[i][0]}")
    print(f"    {tot:9.2f} us total")
PY
