#!/usr/bin/env bash
# This session's device run: the GPU suite, then the MLP block and the
# LLaMA block against torch.compile (default and max-autotune-no-cudagraphs)
# with the residual read in place by the GEMM, then ncu per kernel of the
# compiled block.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"; cd "$root"
out="${OUT:-/tmp/out}"; mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.bench:${LD_LIBRARY_PATH:-}"
lib=$(ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9)
export KILN_CUDNN="$lib" LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$lib")"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
timeout 300 python3 scripts/run-gpu-tests.py > "$out/gpu_suite.txt" 2>&1; echo "suite rc=$?"; tail -22 "$out/gpu_suite.txt" | cut -c1-110
for w in "MLP block" "LLaMA"; do
  timeout 150 .bench/kiln_bench --reps 20 --only "$w" >> "$out/kiln.jsonl" 2>>"$out/kiln.err"
done
timeout 250 python3 bench/torch_bench.py --reps 20 --modes default,max-autotune-no-cudagraphs --only "MLP block" > "$out/torch.jsonl" 2>"$out/torch.err"
timeout 200 python3 bench/torch_bench.py --reps 20 --modes default,max-autotune-no-cudagraphs --only LLaMA >> "$out/torch.jsonl" 2>>"$out/torch.err"
tail -2 "$out/torch.err"
timeout 90 ncu --metrics gpu__time_duration.sum --csv --print-units base .bench/llama_block --size 7b > "$out/ncu.csv" 2>"$out/ncu.err"; echo "ncu rc=$?"
python3 bench/report.py "$out" --out "$out/results.md" >/dev/null 2>&1; grep "LLaMA\|MLP\|^| workload" "$out/results.md" | head -24
