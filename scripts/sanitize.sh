#!/usr/bin/env bash
# An ASan + UBSan build of the plugin, the passes, the runtime and the tests
# (clang++-19, CPU only: the GPU side is checked by compute-sanitizer on the
# GPU machine), then every test in it: the unit tests (leaks checked too)
# and the lit suites, with the sanitizer runtime preloaded into clang and
# the test programs. Any report fails the run. Into build-asan/ (override
# with KILN_ASAN_BUILD_DIR).
#
#   scripts/sanitize.sh thread   instead: a ThreadSanitizer build of the
#   runtime and the unit tests (into build-tsan/), the unit tests in it, and
#   test/plugin/threads-tsan.cpp's program linked against that runtime.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = thread ]; then
  build="${KILN_TSAN_BUILD_DIR:-$root/build-tsan}"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DKILN_ENABLE_CUDA=OFF -DKILN_SANITIZE=thread
  # The plugin is not instrumented in this build (clang, which loads it, has
  # no TSan): the release build's serves where there is one.
  plugin="${KILN_BUILD_DIR:-$root/build}/lib/libkiln.so"
  targets=(kiln_rt kiln_unit_tests)
  if [ ! -f "$plugin" ]; then
    targets+=(kiln)
    plugin="$build/lib/libkiln.so"
  fi
  cmake --build "$build" --target "${targets[@]}"
  # libomp's threads are not instrumented: one thread per parallel region.
  export OMP_NUM_THREADS=1
  export TSAN_OPTIONS="halt_on_error=1:suppressions=$root/test/Inputs/tsan-suppressions.txt"
  "$build/bin/kiln_unit_tests" --gtest_brief=1
  inc="-std=c++20 -O1 -g -I$root/runtime/include -I$root/test/Inputs"
  clang++-19 $inc -fsanitize=thread -fplugin="$plugin" -fplugin-arg-kiln-cuda=off \
    -c "$root/test/plugin/threads-tsan.cpp" -o "$build/threads-tsan.o"
  clang++-19 -fsanitize=thread "$build/threads-tsan.o" -L"$build/lib" -lkiln_rt \
    -Wl,-rpath,"$build/lib" -o "$build/threads-tsan"
  "$build/threads-tsan" | tee "$build/threads-tsan.out"
  grep -q "16 threads, 0 mismatches" "$build/threads-tsan.out"
  echo "sanitize.sh thread: ThreadSanitizer clean (runtime unit tests, 16 threads of compiled calls)"
  exit 0
fi
build="${KILN_ASAN_BUILD_DIR:-$root/build-asan}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DKILN_ENABLE_CUDA=OFF -DKILN_SANITIZE=address,undefined
cmake --build "$build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cmake --build "$build" --target check-unit
lit="$(llvm-config-19 --prefix)/build/utils/lit/lit.py"
# The generated kernels nvcc (not instrumented) compiled for the release
# build's suites, where there is one: the same sources, the same entries.
release_cache="${KILN_BUILD_DIR:-$root/build}/kiln-cache"
lit_params=()
[ -d "$release_cache" ] && lit_params=(--param "kiln-cache=$release_cache")
python3 "$lit" -sv "${lit_params[@]}" "$build/test"
# Random programs through the instrumented plugin, runtime and programs
# (the sanitizer runtime preloaded into clang, as lit does).
LD_PRELOAD="$(clang++-19 -print-file-name=libclang_rt.asan-x86_64.so)" \
ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_poisoning=0" \
  python3 "$root/test/fuzz/kiln_fuzz.py" run --seed 3 --functions "${KILN_FUZZ_FUNCTIONS:-60}" \
  --asan --build "$build" --out "$build/test/fuzz-asan" --fresh --quiet
echo "sanitize.sh: ASan + UBSan clean (unit tests, lit suites, fuzzer)"
