#!/usr/bin/env bash
# An ASan + UBSan build of the plugin, the passes, the runtime and the tests
# (clang++-19, CPU only: the GPU side is checked by compute-sanitizer on the
# GPU machine), then every test in it: the unit tests (leaks checked too)
# and the lit suites, with the sanitizer runtime preloaded into clang and
# the test programs. Any report fails the run. Into build-asan/ (override
# with KILN_ASAN_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_ASAN_BUILD_DIR:-$root/build-asan}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DKILN_ENABLE_CUDA=OFF -DKILN_SANITIZE=address,undefined
cmake --build "$build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cmake --build "$build" --target check-unit
lit="$(llvm-config-19 --prefix)/build/utils/lit/lit.py"
python3 "$lit" -sv "$build/test"
# Random programs through the instrumented plugin, runtime and programs
# (the sanitizer runtime preloaded into clang, as lit does).
LD_PRELOAD="$(clang++-19 -print-file-name=libclang_rt.asan-x86_64.so)" \
ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_poisoning=0" \
  python3 "$root/test/fuzz/kiln_fuzz.py" run --seed 3 --functions "${KILN_FUZZ_FUNCTIONS:-60}" \
  --asan --build "$build" --out "$build/test/fuzz-asan" --fresh --quiet
echo "sanitize.sh: ASan + UBSan clean (unit tests, lit suites, fuzzer)"
