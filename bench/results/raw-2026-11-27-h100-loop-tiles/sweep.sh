#!/usr/bin/env bash
# Row-op sweep, Kiln and torch.compile in one run (issue 14 item 2).
set -uo pipefail
root="$(pwd)"
out="${OUT:-$root/.bench/out}"; mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.bench:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
"$root/.bench/kiln_bench" --reps 30 --sweep > "$out/kiln.jsonl" 2> "$out/kiln.err"
echo "kiln rc=$?"
python3 "$root/bench/torch_bench.py" --reps 30 --sweep > "$out/torch.jsonl" 2> "$out/torch.err"
echo "torch rc=$?"
python3 "$root/bench/report.py" "$out" --out "$out/report.md" > /dev/null 2>&1
grep -i "sweep\|^|" "$out/report.md" | head -60
