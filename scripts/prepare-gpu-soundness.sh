#!/usr/bin/env bash
# Stages, here, what scripts/gpu-soundness.sh runs on the GPU machine (which
# has no clang): the GPU tests (scripts/stage-gpu-tests.sh) and a CUDA
# fuzzer batch, both built for sm_90 only to fit the 64 MiB the device tool
# carries. Wants a build with CMAKE_CUDA_ARCHITECTURES=90 in
# $KILN_BUILD_DIR (default build-sm90/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export KILN_BUILD_DIR="${KILN_BUILD_DIR:-$root/build-sm90}"
export KILN_NVCC="$root/test/fuzz/nvcc-sm90.sh"
rm -rf "$root/.bench/gpu-tests" "$root/.bench/fuzz-cuda"
"$root/scripts/stage-gpu-tests.sh" >/dev/null
python3 "$root/test/fuzz/kiln_fuzz.py" build --cuda --nvcc "$KILN_NVCC" --build "$KILN_BUILD_DIR" \
  --seed "${KILN_FUZZ_SEED:-11}" --functions "${KILN_FUZZ_FUNCTIONS:-90}" \
  --out "$root/.bench/fuzz-cuda" --quiet
rm -f "$root/.bench/fuzz-cuda/"*.o
du -sh "$root/.bench" "$root/.bench/"*
