#!/usr/bin/env bash
# 2026-12-02 call 8: exec-cuda-reduce under compute-sanitizer memcheck, as
# far as 320 s take it (rows of 77, 301 and 577 come early for each dtype).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
timeout 320 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 .bench/gpu-tests/exec-cuda-reduce > $O/memcheck.txt 2>&1; echo "rc=$?"
grep -c "ok\|mismatch" $O/memcheck.txt; grep -E "Invalid|ERROR SUMMARY|========= [A-Z]" $O/memcheck.txt | head; grep -oE "^[a-z].*[0-9]+x[0-9]+[x0-9]*" $O/memcheck.txt | tail -3; tail -3 $O/memcheck.txt
