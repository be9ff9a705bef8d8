#!/usr/bin/env bash
# Device call: issue 14's item-2 rows once more (a third lease), kernel time
# and single call, Kiln twice with torch.compile (both modes) between.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
W=("softmax 32768x1024" "log_softmax 32768x1024" "layer norm 16384x4096" "RMS norm 16384x4096" "where(sum")
timeout 60 .bench/long_rows "${W[@]}" > $O/kiln1.jsonl 2>&1
timeout 300 python3 bench/results/raw-2026-11-30-h200-masked/call1/torch_probe.py --modes default,max-autotune-no-cudagraphs "${W[@]}" > $O/torch.jsonl 2> $O/torch.err || tail -3 $O/torch.err
timeout 60 .bench/long_rows "${W[@]}" > $O/kiln2.jsonl 2>&1
echo "--- kiln"; cat $O/kiln1.jsonl $O/kiln2.jsonl | grep '^{'; echo "--- torch"; cat $O/torch.jsonl
