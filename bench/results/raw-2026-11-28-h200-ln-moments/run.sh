#!/usr/bin/env bash
# On the GPU machine: correctness of the reduction tests, then layer norm
# and var over long rows, old plugin (W) and new (N) alternating, and
# torch.compile in the same run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.bench
c=$(python3 -c 'import glob,site;f=[g for d in site.getsitepackages() for g in sorted(glob.glob(d+"/nvidia/cu*/lib/libcudnn.so.9*"))];print(f[0] if f else "")' 2>/dev/null)
if [ -n "$c" ]; then export KILN_CUDNN=$c LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname $c); fi
echo "cudnn: ${KILN_CUDNN:-none}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in exec-cuda-reduce exec-graphs-cuda exec-attention-cuda exec-host-scalars-cuda; do
  echo "== $t"; timeout 300 .bench/gpu-ln/$t 2>&1 | grep -E "MISMATCH|cases" | tail -5
done
for t in W N W N; do timeout 120 .bench/ln/lnexp$t; done
timeout 300 python3 .bench/ln/lnexp_torch.py 2>&1 | grep "^torch"
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum
for t in W N; do
  echo "== ncu $t"
  ncu --cache-control none --clock-control none --metrics $M -k regex:'layer_norm.*_loop' -c 4 .bench/ln/lnexp$t 2>&1 | grep -E "_loop|registers|warps_active|duration|bytes_read" | sed -E 's/ +/ /g'
done
echo "== unit tests (GPU)"
timeout 300 .bench/gpu-ln/kiln_unit_tests --gtest_brief=1 2>&1 | tail -4
