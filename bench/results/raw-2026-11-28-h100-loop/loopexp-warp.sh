#!/usr/bin/env bash
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.bench
nvidia-smi --query-gpu=name --format=csv,noheader
for t in 512 W 512 W; do timeout 120 .bench/loopexp$t; done
timeout 300 python3 .bench/loopexp_torch.py 2048x50257 2>&1 | grep -v -i "warn\|online\|split\|important\|^$"
