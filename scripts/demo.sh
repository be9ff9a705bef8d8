#!/usr/bin/env bash
# From a fresh Debian 12 machine: install what is needed, build Kiln, run
# the examples (compiled with the plugin, and the same sources built eagerly).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cmake --build "${KILN_BUILD_DIR:-$root/build}" --target run-examples
