#!/usr/bin/env bash
# Installs what building and testing Kiln needs on Debian 12 (bookworm):
# clang's sanitizer runtimes (libclang-rt-19-dev) for the ASan/UBSan and
# TSan tests, Eigen for scripts/corpus-check.py (Boost, libboost-dev, joins
# it when installed: the full 600-TU run), and OpenBLAS's serial build
# (libopenblas-serial-dev: its static archive becomes libkiln_blas.so, the
# CPU matrix products; runtime/src/cpu_blas.h says why the serial one), and
# SLEEF (libsleef-dev: the CPU code's vector math, kiln/vecmath.def).
# The CUDA toolkit is optional and not installed here: with nvcc on PATH
# (or in /usr/local/cuda/bin) Kiln builds CUDA kernels, without it CPU only.
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends \
  clang-19 libclang-19-dev llvm-19-dev llvm-19-tools libomp-19-dev \
  libclang-rt-19-dev \
  cmake ninja-build g++ python3 \
  nlohmann-json3-dev libgtest-dev graphviz \
  libeigen3-dev libopenblas-serial-dev libsleef-dev
