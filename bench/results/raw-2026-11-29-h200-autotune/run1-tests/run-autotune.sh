#!/usr/bin/env bash
# The autotune test in two processes sharing one cache file, plain and forced.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p $out
rm -f /tmp/at.cache
for run in first again; do
  KILN_AUTOTUNE_CACHE=/tmp/at.cache KILN_LOGS=kernels ./.bench/gpu-tests/exec-autotune-cuda > $out/autotune-$run.txt 2>$out/autotune-$run.log; echo "autotune $run rc=$?"
  grep -E "timed|cases|MISMATCH" $out/autotune-$run.txt
done
KILN_FORCE_GUARD_FAILURE=1 KILN_AUTOTUNE_CACHE=/tmp/at2.cache ./.bench/gpu-tests/exec-autotune-cuda > $out/autotune-forced.txt 2>&1; echo "forced rc=$?"; grep -E "timed|cases|MISMATCH" $out/autotune-forced.txt
cp /tmp/at.cache $out/autotune-cache.txt; wc -l /tmp/at.cache; cat /tmp/at.cache
grep "proposal .* of" $out/autotune-first.log | head -12
grep -E "proposal [0-9]+ [0-9.]+ ms" $out/autotune-first.log | head -20
