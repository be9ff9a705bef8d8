#!/usr/bin/env bash
# Runs the lit suites (and a fixed-seed fuzzer run) with every compiled
# function's guards made to fail (KILN_FORCE_GUARD_FAILURE=1): each call
# runs the original body, and every harness then wants eager's results
# exactly and no fast path taken. The suites that never run a compiled
# function (passes, codegen, -verify) are left out (test/lit.cfg.py).
# Expects a build (scripts/build.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
lit="$(llvm-config-19 --prefix)/build/utils/lit/lit.py"
python3 "$lit" -sv --param force-guard-failure=1 "$build/test"
python3 "$root/test/fuzz/kiln_fuzz.py" run --seed 2 --functions "${KILN_FUZZ_FUNCTIONS:-60}" \
  --build "$build" --out "$build/test/fuzz-forced" --fresh --quiet --force-guard-failure
