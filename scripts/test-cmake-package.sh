#!/usr/bin/env bash
# Kiln as a user's CMake project sees it (test/package): install Kiln into a
# prefix and move it (the package is relocatable), then build the consumer
# against it with Ninja and with Unix Makefiles; against the build tree
# (Kiln_DIR=<build>); and check that a compiler that cannot load the plugin
# is refused at configure time (or, with OPTIONAL, builds eagerly).
#
#   scripts/test-cmake-package.sh [build-dir]     (CI: check-package)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-${KILN_BUILD_DIR:-$root/build}}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kiln-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export KILN_CACHE_DIR="$build/kiln-cache" # reuse the build's nvcc cache
clangxx="$(grep -m1 '^KILN_CLANGXX:' "$build/CMakeCache.txt" | cut -d= -f2-)"
gxx="$(command -v g++ || true)"
fail() { echo "test-cmake-package: FAILED: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/staged" >/dev/null
mv "$work/staged" "$work/prefix"

# consumer <build folder> <expected compiled_calls of ./consumer> <cmake args...>
consumer() {
  local dir="$1" want="$2"; shift 2
  cmake -S "$root/test/package" -B "$dir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" \
    > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; fail "configure $dir"; }
  cmake --build "$dir" > "$dir.build.log" 2>&1 || { cat "$dir.build.log"; fail "build $dir"; }
  "$dir/consumer" | tee "$dir.out" | grep -q "y\[1\] 2.5244 compiled_calls $want" ||
    { cat "$dir.out"; fail "$dir/consumer: wanted compiled_calls $want"; }
  "$dir/consumer-eager" | grep -q "y\[1\] 2.5244 compiled_calls 0" ||
    fail "$dir/consumer-eager"
}

for gen in Ninja "Unix Makefiles"; do
  dir="$work/installed-${gen// /-}"
  consumer "$dir" 1 -G "$gen" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_CXX_COMPILER="$clangxx"
  # The real compile command, plugin included, is what tools see.
  grep -q -- "-fplugin=$work/prefix/lib/libkiln.so -fplugin-arg-kiln-remarks" \
    "$dir/compile_commands.json" || fail "$gen: no -fplugin in compile_commands.json"
  grep -q "remark: kiln: compiled 'scaled_sin'" "$dir.build.log" ||
    fail "$gen: no remark from PLUGIN_ARGS remarks"
  echo "test-cmake-package: installed prefix, $gen: ok"
done

consumer "$work/build-tree" 1 -G Ninja -DKiln_DIR="$build" -DCMAKE_CXX_COMPILER="$clangxx"
echo "test-cmake-package: build tree: ok"

if [ -n "$gxx" ]; then
  dir="$work/gxx"
  if cmake -S "$root/test/package" -B "$dir" -DCMAKE_PREFIX_PATH="$work/prefix" \
       -DCMAKE_CXX_COMPILER="$gxx" > "$dir.log" 2>&1; then
    fail "configuring with g++ should have been refused"
  fi
  grep -q "the Kiln plugin needs clang" "$dir.log" || { cat "$dir.log"; fail "refusal message"; }
  rm -rf "$dir"
  consumer "$dir" 0 -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$gxx" \
    -DCONSUMER_OPTIONAL=ON
  grep -q "is built without it (eager)" "$dir.configure.log" || fail "OPTIONAL warning"
  echo "test-cmake-package: g++ refused; with OPTIONAL built eager: ok"
fi
echo "test-cmake-package: all ok"
