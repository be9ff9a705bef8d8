#!/usr/bin/env bash
# 2026-12-02 call 2: rowsany kernel variants (v0 as generated; v1 unit
# stride along R; v2 v1 + compile-time tpr; v3 v2 + __launch_bounds__(256,4);
# v4 v1 + the launch bounds), each its own binary, alternating twice.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
for round in 1 2; do
  for v in v0 v1 v2 v3 v4; do
    case $v in v2|v3) env="ODD_197=1 ODD_FIRST=1";; *) env="";; esac
    echo "== $v round $round" | tee -a $O/variants.txt
    env $env timeout 100 .bench/odd/odd_$v 2>&1 | tee -a $O/variants.txt
  done
done > /dev/null
python3 - <<'PY' $O/variants.txt
import sys, collections
d = collections.defaultdict(list); v = None
for l in open(sys.argv[1]):
    if l.startswith("=="): v = l.split()[1]; continue
    if l.startswith("workload"): continue
    p = l.split()
    if len(p) < 6: continue
    key = " ".join(p[:-3]); d[(key, v)].append((float(p[-3]), p[-1]))
keys = []
for k, v in d:
    if k not in keys: keys.append(k)
print(f"{'case / launch':48s} " + " ".join(f"{v:>15s}" for v in ["v0","v1","v2","v3","v4"]))
for k in keys:
    row = []
    for v in ["v0","v1","v2","v3","v4"]:
        r = d.get((k, v))
        row.append(f"{min(x for x,_ in r):.4f}/{max(x for x,_ in r):.4f}" if r else "-")
    print(f"{k:48s} " + " ".join(f"{c:>15s}" for c in row))
PY
