#!/usr/bin/env bash
# Builds the benchmark here and stages what the GPU machine needs in .bench/
# (carried with the working tree): kiln_bench, the runtime library and the
# libraries it loads that the GPU machine lacks (OpenMP's, SLEEF's). Also
# measures the plugin's added compile time for the examples (cold and warm
# nvcc cache) on this machine. kiln_bench's kernels are built for Hopper
# (sm_90 and its PTX; -DKILN_BENCH_CUDA_ARCH=... in the build says otherwise).
#
#   bench/prepare.sh            build, stage, measure build cost
# then, on the GPU machine (device tool, carry .bench):
#   bash bench/device_run.sh    runs everything, prints the table, writes $OUT
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
stage="$root/.bench"
"$root/scripts/build.sh" >/dev/null
cmake --build "$build" --target kiln_bench llama_block
mkdir -p "$stage"
cp "$build/bin/kiln_bench" "$build/bin/llama_block" "$build/lib/libkiln_rt.so" \
  "$build/lib/libkiln_blas.so" "$stage/"
for lib in $(ldd "$build/lib/libkiln_rt.so" | awk '/gomp|omp|sleef/ {print $3}'); do
  cp -L "$lib" "$stage/"
done
excl="$(git -C "$root" rev-parse --path-format=absolute --git-path info/exclude)"; mkdir -p "$(dirname "$excl")"; grep -qx '/.bench/' "$excl" 2>/dev/null || echo '/.bench/' >> "$excl"

# Build cost: compile each example with and without the plugin, three
# times each; the plugin's cold runs use an empty nvcc cache.
if [ -z "${KILN_SKIP_BUILD_COST:-}" ]; then
  python3 "$root/bench/build_cost.py" --build "$build" --out "$stage/build_cost.json"
fi
echo "staged in $stage:"; ls -la "$stage"
