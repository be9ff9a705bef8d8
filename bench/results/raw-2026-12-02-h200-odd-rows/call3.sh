#!/usr/bin/env bash
# 2026-12-02 call 3: v5 (unit stride, tpr a compile-time 32 in every
# rowsany) against v2 (unit stride, tpr 32 for f32 and 16 for bf16) and v0.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
for round in 1 2; do
  echo "== v0 round $round"; ODD_197=1 ODD_FIRST=1 timeout 100 .bench/odd/odd_v0
  echo "== v2 round $round"; ODD_197=1 ODD_FIRST=1 timeout 100 .bench/odd/odd_v2
  echo "== v5 round $round"; timeout 150 .bench/odd/odd_v5
done 2>&1 | tee $O/v5.txt | grep -v "e+0[0-9]$" | grep -E "==|e-0" 
