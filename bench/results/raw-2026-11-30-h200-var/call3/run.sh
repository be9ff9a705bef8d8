#!/usr/bin/env bash
# Device call 3: torch.compile's var(x) as the benchmark measures it
# (bench/torch_bench.py --only "var(x)": eager, then torch.compile default
# and max-autotune-no-cudagraphs), between rounds of Kiln before (base) and
# after (c512), to settle which of call 1-2's probe (0.0855-0.0984) and
# the full run's torch_bench (0.070) is torch.compile's figure.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
for r in 1 2; do for v in base c512; do timeout 60 .bench/lr/long_rows_$v var > $O/$v-$r.jsonl 2>> $O/kiln.err; done; done
timeout 200 python3 bench/torch_bench.py --only "var(x)" --modes default,max-autotune-no-cudagraphs > $O/torch_bench.jsonl 2> $O/torch.err
timeout 100 python3 bench/results/raw-2026-11-30-h200-var/call1/torch_probe.py var > $O/torch_probe.jsonl 2>> $O/torch.err
for r in 3 4; do for v in base c512; do timeout 60 .bench/lr/long_rows_$v var > $O/$v-$r.jsonl 2>> $O/kiln.err; done; done
cat $O/torch_bench.jsonl $O/torch_probe.jsonl; tail -3 $O/torch.err
for f in $O/*-[0-9].jsonl; do echo "$(basename $f) $(cat $f)"; done
