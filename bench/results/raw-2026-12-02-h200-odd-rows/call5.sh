#!/usr/bin/env bash
# 2026-12-02 call 5: blocks of 128 and 64 threads for the fixed instances.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
for round in 1 2; do echo "== round $round"; timeout 150 .bench/odd/odd_new; done 2>&1 | tee $O/blocks.txt | grep -E "==|fixed|b128"
