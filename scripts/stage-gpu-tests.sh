#!/usr/bin/env bash
# Builds, here, the tests that need a CUDA GPU (lit tests marked
# `REQUIRES: cuda-gpu`, and the unit tests) into .bench/gpu-tests/, for a
# machine with a GPU but no clang: there, scripts/run-gpu-tests.py runs them
# and checks their output against the tests' CHECK lines.
# KILN_GPU_TESTS=<regex>: only the tests whose name matches (a quicker
# check of what a change touches; the unit tests are staged either way).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
out="$root/.bench/gpu-tests"
mkdir -p "$out"
cmake --build "$build" --target kiln kiln_rt kiln_unit_tests kiln_torch
cfg="$build/bin/kiln-config"
for src in $(grep -rl --include=*.cpp "REQUIRES:.*cuda-gpu" "$root"/test); do
  name="$(basename "$src" .cpp)"
  [[ -z "${KILN_GPU_TESTS:-}" || "$name" =~ $KILN_GPU_TESTS ]] || continue
  echo "building $name"
  # Extra sources a test's RUN lines compile without the plugin (%S/...).
  extra=()
  for rel in $(grep -o '%S/[^ ]*\.cpp' "$src" | sed 's|^%S/||' | sort -u); do
    clang++-19 -O2 $($cfg --cxxflags) -I"$root/test/Inputs" -c "$(dirname "$src")/$rel" \
      -o "$out/$name.$(basename "$rel" .cpp).o"
    extra+=("$out/$name.$(basename "$rel" .cpp).o")
  done
  # Plugin arguments the test's RUN lines give (e.g. the architectures).
  args=($(grep '// RUN:' "$src" | grep -o -- '-fplugin-arg-kiln-[^ ]*' | sort -u || true))
  clang++-19 -O2 -fplugin="$($cfg --plugin)" "${args[@]}" $($cfg --cxxflags) -I"$root/test/Inputs" \
    -I"$root/test/fuzz/Inputs" "$src" "${extra[@]}" $($cfg --ldflags) -o "$out/$name"
  rm -f "${extra[@]}"
  cp "$src" "$out/$name.cpp"
done
cp "$build/bin/kiln_unit_tests" "$out/"
cp "$build/lib/libkiln_torch.so" "$root/examples/dlpack_torch/kiln_torch.py" "$out/"
cp "$build/lib/libkiln_rt.so" "$build/lib/libkiln_blas.so" "$root/.bench/"
for lib in $(ldd "$build/lib/libkiln_rt.so" | awk '/gomp|omp|sleef/ {print $3}'); do
  cp -L "$lib" "$root/.bench/"
done
excl="$(git -C "$root" rev-parse --path-format=absolute --git-path info/exclude)"; mkdir -p "$(dirname "$excl")"; grep -qx '/.bench/' "$excl" 2>/dev/null || echo '/.bench/' >> "$excl"
ls -la "$out"
