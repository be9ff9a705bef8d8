#!/usr/bin/env bash
# Device call: the re-reading layer-norm kernel (rowsre512): GPU tests,
# issue 14's item-2 rows beside torch.compile (default and
# max-autotune-no-cudagraphs), the hand-written A/B, and ncu's proof that
# the kernel ran.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
W=("softmax 32768x1024" "log_softmax 32768x1024" "layer norm 16384x4096" "RMS norm 16384x4096" "where(sum" "layer norm 8192x4096" "layer norm 32768x1024" "layer norm 4096x8192")
(cd .bench/gpu-tests && timeout 150 ./exec-cuda-reduce > $O/reduce.out 2>&1; echo "rc=$?" >> $O/reduce.out
 KILN_FORCE_GUARD_FAILURE=1 timeout 150 ./exec-cuda-reduce > $O/reduce.forced.out 2>&1; echo "rc=$?" >> $O/reduce.forced.out)
tail -n 2 $O/reduce.out $O/reduce.forced.out
timeout 60 .bench/long_rows "${W[@]}" > $O/kiln1.jsonl 2>&1
timeout 300 python3 bench/results/raw-2026-11-30-h200-masked/call1/torch_probe.py --modes default,max-autotune-no-cudagraphs "${W[@]}" > $O/torch.jsonl 2> $O/torch.err || tail -3 $O/torch.err
timeout 60 .bench/long_rows "${W[@]}" > $O/kiln2.jsonl 2>&1
(cd .bench/lnx && ./ln_rows_variants 16384 3 > $O/ab16384.txt 2>&1; ./ln_rows_variants 8192 3 > $O/ab8192.txt 2>&1)
timeout 60 ncu -k regex:rowsre --launch-count 1 --metrics gpu__time_duration.sum,launch__block_size,launch__grid_size,launch__registers_per_thread .bench/long_rows "layer norm 16384x4096" > $O/ncu-rowsre.txt 2>&1
grep -E "rowsre|block_size|grid_size|registers|duration" $O/ncu-rowsre.txt | head -8
python3 - $O <<'PY'
import json, sys, os
o = sys.argv[1]
def rd(f):
    out = []
    for line in open(os.path.join(o, f)):
        line = line.strip()
        if line.startswith("{"):
            try: out.append(json.loads(line))
            except Exception: pass
    return out
k1, k2, t = rd("kiln1.jsonl"), rd("kiln2.jsonl"), rd("torch.jsonl")
kt = {}
for r in k1 + k2:
    kt.setdefault(r.get("workload"), []).append(r.get("kt_ms"))
tt = {}
for r in t:
    tt[(r.get("workload"), r.get("mode"))] = r.get("kt_ms")
print("%-34s %-16s %-9s %-9s %s" % ("workload", "kiln kt (2 runs)", "torch", "max-at", "torch/kiln"))
for w, v in kt.items():
    d, m = tt.get((w, "default")), tt.get((w, "max-autotune-no-cudagraphs"))
    best = min(v)
    print("%-34s %-16s %-9s %-9s %s" % (w, " / ".join("%.4f" % x for x in v if x), d and "%.4f" % d, m and "%.4f" % m, d and "%.3f" % (d / best)))
PY
tail -12 $O/ab16384.txt | grep -E "kiln|tri"; tail -12 $O/ab8192.txt | grep -E "kiln|tri"
