#!/usr/bin/env bash
# GPU correctness at 7df5ce8: the reduction tests (their 999x64 and
# 4001x128 f32 rows now take four slots a thread) and the row-broadcast
# tests, plain and with every guard made to fail; the unit tests' CUDA
# twins (plan_cuda, row kernels, the new ops against float64).
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
timeout 300 python3 scripts/run-gpu-tests.py --only 'exec-cuda-reduce|exec-row-broadcast-cuda|kiln_unit_tests' > $out/gpu-tests.txt 2>&1; echo "gpu tests rc=$?"
timeout 150 python3 scripts/run-gpu-tests.py --forced --only 'exec-cuda-reduce|exec-row-broadcast-cuda' > $out/gpu-tests-forced.txt 2>&1; echo "forced rc=$?"
grep "^|" $out/gpu-tests.txt $out/gpu-tests-forced.txt
