#!/usr/bin/env bash
# torch.compile side: the sweep and var(x), where(sum).
set -uo pipefail
root="$(pwd)"; out="${OUT:-$root/.bench/out}"; mkdir -p "$out/t"
timeout 420 python3 "$root/bench/torch_bench.py" --reps 30 --sweep > "$out/t/torch.jsonl" 2> "$out/t/torch.err"; echo "torch rc=$?"
timeout 100 python3 "$root/bench/torch_bench.py" --reps 30 --only "var(x)" > "$out/t/torch-var.jsonl" 2> "$out/t/torch-var.err"; echo "torch var rc=$?"
timeout 60 python3 "$root/bench/torch_bench.py" --reps 30 --only "where(sum" >> "$out/t/torch-var.jsonl" 2>> "$out/t/torch-var.err"; echo "torch where rc=$?"
tar -C "$out" -czf "$out/t.tgz" t && rm -rf "$out/t"
