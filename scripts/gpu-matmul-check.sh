#!/usr/bin/env bash
# The CUDA matrix-product tests (runtime_matmul.cpp's CUDA twins and
# MatmulCuda), plus every other CUDA unit test, on the GPU machine.
#
#   scripts/gpu-matmul-check.sh stage     here: build kiln_rt and the unit
#                                         tests, copy them to .bench/matmul/
#   bash scripts/gpu-matmul-check.sh run  there (device tool, carry
#                                         .bench/matmul): the tests, logs in
#                                         $OUT, a table last
#
# `run` also accepts `memcheck`: the matmul tests again under
# compute-sanitizer (leak check on, no caching allocator).
# What travels: libkiln_rt.so, kiln_unit_tests and the OpenMP library
# (about 48 MiB for the sm_80+sm_90 build). libkiln_blas.so (the CPU BLAS,
# 25 MiB) stays here: the CPU tests run here, so `run` runs CUDA tests only.
# cuBLASLt is the GPU machine's own (libcublasLt.so.13 of its CUDA toolkit
# or of PyTorch's nvidia-cublas wheel), found below and named in
# KILN_CUBLASLT.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
stage="$root/.bench/matmul"
what="${1:-run}"

if [ "$what" = stage ]; then
  set -e
  build="${KILN_BUILD_DIR:-$root/build}"
  cmake --build "$build" --target kiln_rt kiln_unit_tests
  rm -rf "$stage"
  mkdir -p "$stage"
  cp "$build/bin/kiln_unit_tests" "$build/lib/libkiln_rt.so" "$stage/"
  for lib in $(ldd "$build/lib/libkiln_rt.so" | awk '/gomp|omp/ {print $3}'); do
    cp -L "$lib" "$stage/"
  done
  excl="$(git -C "$root" rev-parse --path-format=absolute --git-path info/exclude)"
  mkdir -p "$(dirname "$excl")"
  grep -qx '/.bench/' "$excl" 2>/dev/null || echo '/.bench/' >> "$excl"
  du -sh "$stage"
  echo "staged; on the GPU machine: bash scripts/gpu-matmul-check.sh run (carry .bench/matmul)"
  exit 0
fi

out="${OUT:-/tmp/gpu-matmul}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$stage:${LD_LIBRARY_PATH:-}"
if [ ! -x "$stage/kiln_unit_tests" ]; then
  echo "no $stage/kiln_unit_tests: run 'scripts/gpu-matmul-check.sh stage' first, carry .bench/matmul"
  exit 2
fi

# cuBLASLt: the path libkiln_rt was built with may not exist here.
if [ -z "${KILN_CUBLASLT:-}" ]; then
  for f in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda-13*/lib64/libcublasLt.so.13 \
           $(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib/libcublasLt.so.13")) for p in nvidia.__path__ for d in ("cu13", "cublas")]' 2>/dev/null); do
    if [ -e "$f" ]; then export KILN_CUBLASLT="$f"; break; fi
  done
fi
echo "KILN_CUBLASLT=${KILN_CUBLASLT:-<not found: libcublasLt.so.13 from the library path>}" | tee "$out/env.txt"
if ! nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$out/env.txt"; then
  echo "no GPU here (nvidia-smi failed): the CUDA tests would only skip"; exit 2
fi

rows=()
step() {
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  # A skipped matmul test here means the GPU was not usable: a failure.
  # (Other CUDA tests may skip on purpose, e.g. with only one GPU.)
  case "$name" in matmul*)
    if [ $rc = 0 ] && grep -q '^\[  SKIPPED \]' "$out/$name.log"; then rc=skipped; fi;;
  esac
  rows+=("| $name | $([ $rc = 0 ] && echo pass || echo "FAIL ($rc)") | $((SECONDS - t0)) s | $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|ERROR SUMMARY' "$out/$name.log" | tail -1 | cut -c1-80) |")
  [ $rc = 0 ] || tail -40 "$out/$name.log"
}
bin="$stage/kiln_unit_tests"
matmul='*Matmul*/cuda:MatmulCuda*:-MatmulCuda.Tf32FromTheEnvironment'
if [ "$what" = run ]; then
  step matmul-cuda "$bin" --gtest_filter="$matmul"
  # What cuBLASLt did (algorithm per call, epilogue, TF32) for one test.
  step matmul-log env KILN_LOGS=kernels "$bin" --gtest_filter='Devices/Matmul.GemmEntryEpiloguesAndOutputs/cuda'
  grep -E 'cuBLASLt|cublasLt gemm|gemm_epilogue' "$out/matmul-log.log" | sort | uniq -c | sort -rn | head -30 > "$out/matmul-log-summary.txt"
  step matmul-cuda-tf32-env env KILN_ALLOW_TF32=1 "$bin" --gtest_filter='MatmulCuda.Tf32FromTheEnvironment'
  step cuda-all "$bin" --gtest_brief=1 --gtest_filter='Cuda*:*/cuda:MatmulCuda*:-MatmulCuda.Tf32FromTheEnvironment'
elif [ "$what" = memcheck ]; then
  step memcheck-matmul env KILN_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck \
    --leak-check full --error-exitcode 99 --print-limit 20 "$bin" --gtest_brief=1 --gtest_filter="$matmul"
else
  echo "usage: $0 stage | run | memcheck"; exit 2
fi
printf '\n| check | result | time | last line |\n|---|---|---|---|\n'
printf '%s\n' "${rows[@]}"
[ -f "$out/matmul-log-summary.txt" ] && { echo; echo "cuBLASLt calls (count, line):"; cat "$out/matmul-log-summary.txt"; }
for r in "${rows[@]}"; do case "$r" in *FAIL*) exit 1;; esac; done
exit 0
