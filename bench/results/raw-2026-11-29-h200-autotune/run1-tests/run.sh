#!/usr/bin/env bash
# Call 1: the GPU tests of this change, plain and with every guard failing,
# and the autotune test in two processes sharing one cache file.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
python3 scripts/run-gpu-tests.py > $out/gpu-tests.txt 2>&1; echo "gpu tests rc=$?"; tail -16 $out/gpu-tests.txt
python3 scripts/run-gpu-tests.py --forced --only 'exec' > $out/gpu-tests-forced.txt 2>&1; echo "forced rc=$?"; tail -10 $out/gpu-tests-forced.txt
rm -f /tmp/at.cache
for run in first again; do
  KILN_AUTOTUNE_CACHE=/tmp/at.cache KILN_LOGS=kernels ./.bench/gpu-tests/exec-autotune-cuda > $out/autotune-$run.txt 2>$out/autotune-$run.log; echo "autotune $run rc=$?"
  grep -E "timed|cases|MISMATCH" $out/autotune-$run.txt
done
cp /tmp/at.cache $out/autotune-cache.txt; wc -l /tmp/at.cache; head -3 /tmp/at.cache
grep -c "autotune.*proposal [0-9]* [0-9.]* ms" $out/autotune-first.log; grep "proposal .* of" $out/autotune-first.log | head -12
