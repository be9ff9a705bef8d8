#!/usr/bin/env bash
# 2026-12-02 call 4: rowsany's fixed-thread-count instances as kiln-opt now
# generates them (odd_new), twice, then torch.compile over the same shapes.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
for round in 1 2; do echo "== round $round"; timeout 150 .bench/odd/odd_new; done 2>&1 | tee $O/new.txt
timeout 300 python3 bench/experiments/bf16_rows_torch.py - 151296x197 151296x197:f32 393216x77 393216x77:f32 100000x301:f32 52428x577 2>&1 | grep -v Warn | tee $O/torch.txt
