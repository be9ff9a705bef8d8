#!/usr/bin/env bash
# nvcc for the plugin in a sanitizer build's tests (test/lit.cfg.py): lit
# preloads the sanitizer runtime into every process, which nvcc's own tools
# do not survive; they get a clean environment.
unset LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
if command -v nvcc >/dev/null; then exec nvcc "$@"; fi
exec /usr/local/cuda/bin/nvcc "$@"
