#!/bin/bash
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
./ln_rows_variants 16384 3 > $OUT/v1.txt 2>&1; grep -c ok $OUT/v1.txt; grep FAIL $OUT/v1.txt; tail -15 $OUT/v1.txt
timeout 200 python3 ../../bench/results/raw-2026-11-30-h200-masked/call1/torch_probe.py "layer norm 16384x4096" "layer norm 8192x4096" "layer norm 43690x768" > $OUT/torch.jsonl 2> $OUT/torch.err || tail -5 $OUT/torch.err
cat $OUT/torch.jsonl
./ln_rows_variants 8192 3 > $OUT/v3.txt 2>&1; tail -15 $OUT/v3.txt
