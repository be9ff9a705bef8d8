#!/usr/bin/env bash
# Kiln side: the sweep (new: 16..32000 columns; old: 128..32000), var(x), ncu of RMS norm 262144x128.
set -uo pipefail
root="$(pwd)"; out="${OUT:-$root/.bench/out}"; mkdir -p "$out/r"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/r/gpu.txt"
export LD_LIBRARY_PATH="$root/.bench"
timeout 150 "$root/.bench/kiln_bench" --reps 30 --sweep > "$out/r/kiln-new.jsonl" 2> "$out/r/kiln-new.err"; echo "new rc=$?"
timeout 120 "$root/.bench/old/kiln_bench" --reps 30 --sweep > "$out/r/kiln-old.jsonl" 2> "$out/r/kiln-old.err"; echo "old rc=$?"
timeout 60 "$root/.bench/kiln_bench" --reps 30 --only "var(x)" > "$out/r/kiln-var.jsonl" 2> "$out/r/kiln-var.err"; echo "var rc=$?"
timeout 60 "$root/.bench/kiln_bench" --reps 30 --only "where(sum" >> "$out/r/kiln-var.jsonl" 2>> "$out/r/kiln-var.err"; echo "where rc=$?"
timeout 60 ncu -k regex:__kiln -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats "$root/.bench/kiln_bench" --reps 3 --sweep --only "RMS norm 262144x128" > "$out/r/ncu-kiln-rms128.txt" 2>&1; echo "ncu kiln rc=$?"
TORCH_LOGS=output_code timeout 100 ncu -k regex:triton -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats python3 "$root/.bench/rms128.py" > "$out/r/ncu-torch-rms128.txt" 2>&1; echo "ncu torch rc=$?"
tar -C "$out" -czf "$out/r.tgz" r && rm -rf "$out/r"
