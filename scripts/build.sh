#!/usr/bin/env bash
# Configures and builds Kiln into ./build (override with KILN_BUILD_DIR):
# everything, or the targets named in KILN_BUILD_TARGETS (scripts/test.sh
# builds check-deps: what the tests need, without the GPU benchmark).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
# nvcc is optional; look in the usual place when it is not on PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --target ${KILN_BUILD_TARGETS:-all}
