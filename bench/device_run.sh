#!/usr/bin/env bash
# On the GPU machine, in ONE command: copy bandwidth, every workload in Kiln
# eager and compiled and in PyTorch eager and torch.compile, the first call
# in a fresh process, then the table (printed last, and $OUT/results.md).
# Builds nothing: bench/prepare.sh staged .bench/ here.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/.bench/out}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.bench:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
"$root/.bench/kiln_bench" --reps "${REPS:-50}" | tee "$out/kiln.jsonl"
python3 "$root/bench/torch_bench.py" --reps "${REPS:-50}" 2>"$out/torch.err" | tee "$out/torch.jsonl"
python3 "$root/bench/first_call.py" --kiln "$root/.bench/kiln_bench" \
  --torch "$root/bench/torch_bench.py" | tee "$out/first_call.jsonl"
cp "$root/.bench/build_cost.json" "$out/" 2>/dev/null || true
python3 "$root/bench/report.py" "$out" --out "$out/results.md"
