#!/usr/bin/env bash
# Device call: exec-cuda-reduce with layer_norm(x + r) * r added (two rows
# held, both re-read), as is and with every guard failing; then issue 14's
# item-2 rows again beside torch.compile, kernel time and single call.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
(cd .bench/gpu-tests && timeout 150 ./exec-cuda-reduce > $O/reduce.out 2>&1; echo "rc=$?" >> $O/reduce.out
 KILN_FORCE_GUARD_FAILURE=1 timeout 150 ./exec-cuda-reduce > $O/reduce.forced.out 2>&1; echo "rc=$?" >> $O/reduce.forced.out)
tail -n 2 $O/reduce.out $O/reduce.forced.out; grep -c "x + r" $O/reduce.out
W=("softmax 32768x1024" "log_softmax 32768x1024" "layer norm 16384x4096" "RMS norm 16384x4096" "where(sum")
timeout 60 .bench/long_rows "${W[@]}" > $O/kiln1.jsonl 2>&1
timeout 300 python3 bench/results/raw-2026-11-30-h200-masked/call1/torch_probe.py --modes default,max-autotune-no-cudagraphs "${W[@]}" > $O/torch.jsonl 2> $O/torch.err || tail -3 $O/torch.err
timeout 60 .bench/long_rows "${W[@]}" > $O/kiln2.jsonl 2>&1
echo "--- kiln"; cat $O/kiln1.jsonl $O/kiln2.jsonl | grep '^{'; echo "--- torch"; cat $O/torch.jsonl
