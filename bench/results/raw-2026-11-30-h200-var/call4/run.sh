#!/usr/bin/env bash
# Device call 4: exec-cuda-reduce with var + mean in one pass added
# (ee327cd), the final plugin; as is and with every guard made to fail.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
cd .bench/gpu-tests
timeout 200 ./exec-cuda-reduce > $O/reduce.out 2>&1; echo "rc=$?" >> $O/reduce.out
KILN_FORCE_GUARD_FAILURE=1 timeout 200 ./exec-cuda-reduce > $O/reduce.forced.out 2>&1; echo "rc=$?" >> $O/reduce.forced.out
tail -n 3 $O/reduce.out $O/reduce.forced.out
