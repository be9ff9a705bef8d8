#!/usr/bin/env bash
# Call E, second part: attention and autotune with libkiln_blas.so beside the runtime (their references use a CPU matmul).
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench/d:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
timeout 300 python3 scripts/run-gpu-tests.py --only 'exec-(attention|autotune)-cuda' > $O/tests.txt 2>&1
timeout 200 python3 scripts/run-gpu-tests.py --forced --only 'exec-(attention|autotune)-cuda' >> $O/tests.txt 2>&1
grep -E '^\||MISMATCH|FAILED|what' $O/tests.txt | head -30
