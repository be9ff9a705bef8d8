#!/usr/bin/env bash
# Builds Kiln and runs every test: the GoogleTest unit tests and the lit
# suites (passes, plugin, execution). Tests that need a CUDA GPU are skipped
# with a notice where there is none. The GPU benchmark (bench/kiln_bench,
# thousands of kernels) is not built here: scripts/build.sh builds it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
KILN_BUILD_TARGETS=check-deps "$root/scripts/build.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "NOTICE: no CUDA GPU on this machine: GPU tests are skipped (reported as SKIPPED / UNSUPPORTED)."
fi
cmake --build "$build" --target check
