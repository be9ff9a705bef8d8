#!/usr/bin/env bash
# On the GPU machine: correctness of the reduction tests, then anyexp with
# the plugin before (W) and after (N) alternating, torch.compile in the same
# run, and ncu's view of the kernels.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.bench
c=$(python3 -c 'import glob,site;f=[g for d in site.getsitepackages() for g in sorted(glob.glob(d+"/nvidia/cu*/lib/libcudnn.so.9*"))];print(f[0] if f else "")' 2>/dev/null)
if [ -n "$c" ]; then export KILN_CUDNN=$c LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname $c); fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in exec-cuda-reduce exec-attention-cuda exec-cuda; do
  echo "== $t"; timeout 300 .bench/gpu/$t 2>&1 | grep -E "MISMATCH|cases" | tail -8
done
for t in W N N2 W N N2; do timeout 150 .bench/any/anyexp$t; done
timeout 400 python3 bench/results/raw-2026-11-28-h200-rowsany/anyexp_torch.py 2>&1 | grep "^torch"
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,launch__grid_size,launch__block_size
for t in W N N2; do
  echo "== ncu $t"
  ANY_ONCE=1 ncu --cache-control none --clock-control none --metrics $M -k regex:'__kiln' -c 40 .bench/any/anyexp$t 2>&1 | grep -E "__kiln|registers|warps_active|duration|bytes_read|grid_size|block_size|ERR|rror" | sed -E "s/ +/ /g" | tail -120
done
