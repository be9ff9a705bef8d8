#!/usr/bin/env bash
# Issue 17 GPU run after sink-views and the hoisted one-element inputs: the
# compiled backward's correctness on CUDA, then the training-step benchmark
# (Kiln, then PyTorch: eager, torch.compile default and
# max-autotune-no-cudagraphs), twice, in one lease.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
./train/exec-backward-cuda > $out/exec-backward-cuda.txt 2>&1; echo "exec-backward-cuda rc=$?"
tail -3 $out/exec-backward-cuda.txt
for r in 1 2; do
  ./train/train_bench --reps ${REPS:-30} 2>&1 | tee -a $out/kiln.jsonl
done
python3 ../bench/train_torch.py --reps ${REPS:-30} --modes ${MODES:-default,max-autotune-no-cudagraphs} 2> $out/torch.err | tee $out/torch.jsonl
tail -3 $out/torch.err
