#!/usr/bin/env bash
# nvcc for Hopper only: the plugin's command line without its sm_80 SASS,
# which halves the fuzzer's CUDA build time for a run on the H200
# (kiln_fuzz.py build --cuda --nvcc test/fuzz/nvcc-sm90.sh). Not for
# programs that ship: those want every architecture the plugin builds.
args=()
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  if [ "$a" = "-gencode" ]; then pending=1; continue; fi
  if [ "${pending:-0}" = 1 ]; then
    pending=0
    case "$a" in *sm_80*) continue ;; esac
    args+=("-gencode" "$a")
    continue
  fi
  args+=("$a")
done
exec "${NVCC:-nvcc}" "${args[@]}"
