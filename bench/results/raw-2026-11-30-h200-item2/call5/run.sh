#!/usr/bin/env bash
# Device call 5 (Kiln only, the session's last device minutes): softmax
# recomputing exp(x - max) in its writing pass instead of holding it in
# registers (nk: KILN_EXP_NO_KEEP, rows4full 60 -> 40 registers), with f32
# rows of up to 8 slots a thread (s8nk: rows8full 102 -> 58 registers),
# against base and s8. Alternating, three rounds; softmax and log_softmax
# (a control: it holds nothing) over every long_rows shape.
set -u
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
D=bench/results/raw-2026-11-30-h200-item2
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
for r in 1 2 3; do
  for v in base s8 nk s8nk; do timeout 30 .bench/lr5/long_rows_$v softmax > $W/$v-$r.jsonl 2>> $W/kiln.err; done
done
python3 $D/table.py $W | tee $W/output.txt
tar -C $W -czf $O/call5.tgz .
