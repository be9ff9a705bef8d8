#!/bin/bash
cd "$(dirname "$0")"
./warp_rows_tpr
timeout 150 python3 ../../bench/results/raw-2026-11-30-h200-masked/call1/torch_probe.py "softmax 32768x1024" "softmax 43690x768" "layer norm 43690x768" "layer norm 32768x1024" 2>/dev/null
./warp_rows_tpr | tail -4
