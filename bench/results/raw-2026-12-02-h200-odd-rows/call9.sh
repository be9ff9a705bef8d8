#!/usr/bin/env bash
# 2026-12-02, second session, device call 1: why RMS norm over 393216x77 f32 takes longer than softmax
# and layer norm at the same shape and instance (rowsany4t8): ncu's full set
# on one launch of each, from the compiled row functions at 58be0e6-equivalent
# code (.bench/c6/rows_fixed).
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
for op in rms_norm softmax layer_norm; do
  timeout 150 ncu -k "regex:kiln_${op}_rows_.*rowsany4t8" --launch-skip 3 --launch-count 1 --set full \
    -o $O/$op .bench/c6/rows_fixed 393216x77:f32 > $O/${op}_run.txt 2>&1
  ncu -i $O/$op.ncu-rep --page details > $O/${op}.txt 2>&1
done
for op in rms_norm softmax layer_norm; do echo "== $op"; grep -E "Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|No Eligible|dram__bytes|Mem Busy|Max Bandwidth|L1/TEX Cache Throughput|Warp Cycles Per Issued" $O/$op.txt | head -24; done
