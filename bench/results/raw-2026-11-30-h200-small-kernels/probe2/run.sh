#!/usr/bin/env bash
# Probe 2: warp stall reasons and launch stats of decode's small kernels, Kiln against Inductor; hand-written RMS variants.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
P=.bench/prof/llama_decode_prof
S="--section LaunchStats --section WarpStateStats --section SpeedOfLight --section SchedulerStats"
NCU="ncu --profile-from-start off --clock-control none --cache-control none $S"
timeout 120 $NCU -k regex:'rows1full|k3_bf16|k18_bf16' $P decode --calls 1 --reps 1 > $O/kiln-sections.txt 2>&1
timeout 200 $NCU -k regex:'rms_norm_0|poi_fused__scaled_dot_product_cudnn_attention__unsafe_view_add_cat_mul_neg_slice_transpose_view_2|silu' python3 bench/experiments/llama_torch_prof.py decode --calls 1 --reps 1 > $O/torch-sections.txt 2>&1
timeout 60 env QUICK=1 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv .bench/rmsx/rms_variants > $O/rmsv-ncu.csv 2>&1
python3 - $O <<'PY'
import sys, re, collections
o = sys.argv[1]
for side in ("kiln", "torch"):
    txt = open(f"{o}/{side}-sections.txt").read()
    print("==", side)
    for block in re.split(r"\n  (?=\S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\))", txt)[1:]:
        name = block.split("\n")[0][:70]
        keep = [l.strip() for l in block.split("\n") if re.search(r"Duration|Stall|Warp Cycles Per Issued|Issued Warp|Registers|Grid Size|Block Size|No Eligible|Active Warps Per|Eligible Warps", l)]
        print(name); [print("   ", k) for k in keep[:20]]
PY
python3 - $O <<'PY'
import csv, io, sys
o = sys.argv[1]
lines = [l for l in open(f"{o}/rmsv-ncu.csv").read().splitlines() if l.startswith('"')]
d = {}
for r in csv.DictReader(io.StringIO("\n".join(lines))):
    d.setdefault(r["Kernel Name"][:40], []).append(float(r["Metric Value"].replace(",", "")))
for k, v in d.items():
    v.sort(); print(f"{k:42s} n={len(v):4d} median {v[len(v)//2]:8.0f} ns  min {v[0]:8.0f}")
PY
