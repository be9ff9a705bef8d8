#!/usr/bin/env bash
# 2026-12-02 call 6: the compiled row functions built at 9878c14
# (rows_new, before) and now (rows_fixed), alternating, with torch.compile
# over the same shapes; which kernels ran (KILN_LOGS=kernels).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
S="151296x197 151296x197:f32 393216x77 393216x77:f32 100000x301:f32 52428x577 32768x1024:f32 16384x4096"
KILN_LOGS=kernels timeout 60 .bench/c6/rows_fixed 151296x197 393216x77:f32 100000x301:f32 52428x577 > $O/kernels_log.txt 2>&1  # kept as call6-kernels.txt: the generated launches, counted
for i in 1 2; do
  timeout 120 .bench/c5/rows_new $S > $O/kiln_before_$i.txt 2>&1
  timeout 120 .bench/c6/rows_fixed $S > $O/kiln_now_$i.txt 2>&1
done
timeout 240 python3 bench/experiments/bf16_rows_torch.py - $S > $O/torch_default.txt 2>&1
grep -o "__kiln_[a-z_0-9]*rows[a-z]*[0-9t]*[a-z]*" $O/kernels_log.txt | sort | uniq -c
for f in kiln_before_1 kiln_now_1 kiln_before_2 kiln_now_2 torch_default; do echo "== $f"; grep -v "^built\|Warn" $O/$f.txt | cut -c1-75; done
