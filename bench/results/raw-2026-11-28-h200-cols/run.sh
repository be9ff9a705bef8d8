#!/usr/bin/env bash
# On the GPU machine: correctness of the reduction tests, then colexp with
# the plugin before (W), with column mode but no column split (C: run 3 only)
# and after (N), alternating, torch.compile in the same run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in exec-cuda-reduce exec-cuda; do
  echo "== $t"; timeout 300 .bench/gpu/$t 2>&1 | grep -E "MISMATCH|cases" | tail -8
done
echo "== unit (plans)"; timeout 200 .bench/gpu/kiln_unit_tests --gtest_brief=1 --gtest_filter="Generated*" 2>&1 | tail -3
for t in W C N W C N; do [ -x .bench/col/colexp$t ] && timeout 150 .bench/col/colexp$t; done
timeout 300 python3 bench/results/raw-2026-11-28-h200-cols/colexp_torch.py 2>&1 | grep "^torch"
