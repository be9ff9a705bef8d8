#!/usr/bin/env bash
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
for t in W N W N; do
  if [ $t = W ]; then LD_LIBRARY_PATH=$PWD/.bench timeout 120 .bench/loopexpW; else LD_LIBRARY_PATH=$PWD/.bench/new:$PWD/.bench timeout 120 .bench/new/loopexpN; fi
done
timeout 300 python3 .bench/new/loopexp_torch.py 1048x32000 4096x16384 2048x50257 2>&1 | grep -v -i "warn\|online\|split\|important\|^$" | tail -30
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
LD_LIBRARY_PATH=$PWD/.bench/new:$PWD/.bench ncu --cache-control none --metrics $M -k regex:'_loop' -c 16 .bench/new/loopexpN 2>&1 | grep -E "_loop|registers|warps_active|duration" | sed -E 's/ +/ /g'
