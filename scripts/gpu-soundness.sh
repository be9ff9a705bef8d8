#!/usr/bin/env bash
# On the GPU machine (device tool, carry .bench; staged by
# scripts/prepare-gpu-soundness.sh): the GPU tests as they are, with every
# guard made to fail, under compute-sanitizer's four tools, and the CUDA
# fuzzer batch (also with every guard made to fail). Logs in $OUT; a table
# last. `bash scripts/gpu-soundness.sh tests` or `... sanitizers` runs one half.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.bench:${LD_LIBRARY_PATH:-}"
out="${OUT:-/tmp/gpu-soundness}"
mkdir -p "$out"
what="${1:-all}"
rows=()
step() {
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  rows+=("| $name | $([ $rc = 0 ] && echo pass || echo "FAIL ($rc)") | $((SECONDS - t0)) s | $(grep -E '^(failures|\| kiln_unit)|cases|mismatches|ERROR SUMMARY' "$out/$name.log" | tail -1 | cut -c1-90) |")
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "$what" = all ] || [ "$what" = tests ]; then
  step gpu-tests python3 scripts/run-gpu-tests.py
  step gpu-tests-forced python3 scripts/run-gpu-tests.py --forced
  step fuzz-cuda python3 test/fuzz/kiln_fuzz.py exec --cuda --out .bench/fuzz-cuda
  step fuzz-cuda-forced python3 test/fuzz/kiln_fuzz.py exec --cuda --out .bench/fuzz-cuda --force-guard-failure
fi
if [ "$what" = all ] || [ "$what" = sanitizers ]; then
  # memcheck over every GPU test; the slower tools over the tests whose
  # kernels differ in kind (pointwise, rows, split reductions, threads).
  # No caching allocator here: its cache, kept to the end on purpose,
  # would be reported as leaked.
  step memcheck env KILN_NO_CUDA_MEMORY_CACHING=1 python3 scripts/run-gpu-tests.py --sanitizer memcheck
  small='exec-cuda$|exec-cuda-regions|threads-cuda|oom-cuda|sum-accuracy-cuda|kiln_unit_tests'
  step racecheck python3 scripts/run-gpu-tests.py --sanitizer racecheck --only "$small"
  step initcheck python3 scripts/run-gpu-tests.py --sanitizer initcheck --only "$small"
  step synccheck python3 scripts/run-gpu-tests.py --sanitizer synccheck --only "$small"
fi
printf '\n| check | result | time | last line |\n|---|---|---|---|\n'
printf '%s\n' "${rows[@]}"
