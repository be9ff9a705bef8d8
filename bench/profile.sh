#!/usr/bin/env bash
# On the GPU machine: Nsight Compute's speed-of-light figures for the
# compiled kernels (names start with kiln_) of chosen kiln_bench workloads,
# to say what bounds each one: DRAM (memory-bound, at the floor) or the SMs
# (compute-bound: the floor is not reachable by moving fewer bytes).
#   bash bench/profile.sh 'sin^2' '3x' 'small layer'
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/.bench/out}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.bench:${LD_LIBRARY_PATH:-}"
ncu="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
for w in "$@"; do
  safe="$(echo "$w" | tr -c 'A-Za-z0-9' '_')"
  # Skip the warm-up launches; profile one steady-state call's kernels.
  "$ncu" --csv --page details --section SpeedOfLight --section LaunchStats \
    -k regex:^kiln_ --launch-skip 4 --launch-count 3 \
    "$root/.bench/kiln_bench" --only "$w" --reps 3 > "$out/ncu_$safe.csv" 2>"$out/ncu_$safe.err"
  python3 - "$w" "$out/ncu_$safe.csv" <<'PY'
import csv, sys
w, path = sys.argv[1], sys.argv[2]
rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
if not rows:
    print(f"| {w} | (no ncu data: see {path[:-4]}.err) |"); sys.exit()
hdr, rows = rows[0], rows[1:]
ix = {h: i for i, h in enumerate(hdr)}
kern = {}
for r in rows:
    k = (r[ix["ID"]], r[ix["Kernel Name"]])
    kern.setdefault(k, {})[r[ix["Metric Name"]]] = (r[ix["Metric Value"]], r[ix["Metric Unit"]])
for (i, name), m in kern.items():
    g = lambda key: " ".join(m.get(key, ("?", ""))).strip()
    short = name.split("(")[0][-40:]
    print(f"| {w} | {short} | {g('Duration')} | {g('DRAM Throughput')} | "
          f"{g('Compute (SM) Throughput')} | {g('Grid Size')} x {g('Block Size')} |")
PY
done
