#!/usr/bin/env bash
# Device call 2 of 2026-12-02 (second session): the whole benchmark (issue
# 14 item 1: both measures; torch.compile default, reduce-overhead for the
# small calls and max-autotune-no-cudagraphs) with kiln_bench built at
# 58be0e6 (bench/prepare.sh, KILN_SKIP_BUILD_COST=1). .bench/full/b.tar.xz holds what it runs (the device tool
# carries at most 64 MiB). Each step has a timeout; the report is made after
# each, so a step cut short leaves the table of those before it.
set -u
root=$PWD; O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
tar -C .bench -xJf .bench/full/b.tar.xz
export LD_LIBRARY_PATH=$root/.bench:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
R=${REPS:-20}
report() { python3 bench/report.py $W --out $W/results.md > /dev/null 2> $W/report.err; tar -C $W -czf $O/run.tgz .; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $W/gpu.txt
timeout 150 .bench/kiln_bench --reps $R > $W/kiln.jsonl 2> $W/kiln.err
timeout 170 python3 bench/torch_bench.py --reps $R > $W/torch.jsonl 2> $W/torch.err
report
timeout 50 python3 bench/torch_bench.py --reps $R --modes default,reduce-overhead --only small > $W/torch_reduce-overhead.jsonl 2> $W/torch_reduce-overhead.err
report
left=$((575 - SECONDS)); [ $left -gt 20 ] && timeout $left python3 bench/torch_bench.py --reps $R --modes max-autotune-no-cudagraphs > $W/torch_max-autotune-no-cudagraphs.jsonl 2> $W/torch_max-autotune-no-cudagraphs.err
report
echo "elapsed $SECONDS s"
tail -60 $W/results.md
