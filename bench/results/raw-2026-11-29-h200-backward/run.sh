#!/usr/bin/env bash
# Issue 17 GPU run: the compiled backward's correctness on CUDA, then the
# training-step benchmark, Kiln then PyTorch.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
./train/exec-backward-cuda > $out/exec-backward-cuda.txt 2>&1; echo "exec-backward-cuda rc=$?"
cat $out/exec-backward-cuda.txt
./train/train_mlp --device cuda --steps 150 | tail -4
./train/train_bench --reps ${REPS:-30} 2>&1 | tee $out/kiln.jsonl
python3 ../bench/train_torch.py --reps ${REPS:-30} --modes ${MODES:-default} 2> $out/torch.err | tee $out/torch.jsonl
tail -3 $out/torch.err
