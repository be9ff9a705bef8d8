#!/usr/bin/env bash
# 2026-12-02 call 7: the GPU reduction tests with rowsany's fixed instances
# and blocks of 128, as is and with every guard failing.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
T='^(exec-cuda-reduce|exec-reduction-groups-cuda|exec-row-broadcast-cuda)$'
timeout 250 python3 scripts/run-gpu-tests.py --only "$T" > $O/tests.txt 2>&1; echo "tests rc=$?"
timeout 250 python3 scripts/run-gpu-tests.py --only "$T" --forced > $O/tests_forced.txt 2>&1; echo "forced rc=$?"
tail -8 $O/tests.txt; tail -8 $O/tests_forced.txt
