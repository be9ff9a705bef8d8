#!/usr/bin/env bash
# Call E: the GPU tests whose lines callC's output lost (its tests.txt did not come back).
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/.bench/d:$PWD/.bench/gpu-tests:${LD_LIBRARY_PATH:-}
timeout 400 python3 scripts/run-gpu-tests.py --only 'exec-(arg-dtypes|attention|autotune|backward|casts|cuda|cuda-reduce|cuda-regions)-?(cuda)?$|kiln_unit_tests' > $O/tests.txt 2>&1
grep -E '^\||MISMATCH|FAILED' $O/tests.txt | head -30
