#!/usr/bin/env bash
# Device call 5: the GPU tests of the final tree (bd064f0 + README):
# exec-cuda-reduce (the masked-softmax cases with the packed bool mask),
# exec-join-cuda (split's and chunk's pieces), the unit tests' CUDA twins
# (GeneratedDevice.HeldBools among them); as is and with every guard
# failing. Carries .bench (staged by scripts/stage-gpu-tests.sh).
set -u
O=${OUT:-/tmp/out}; W=/tmp/w5; mkdir -p $O $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
# The CPU BLAS library (the f64 references' products), carried compressed.
[ -f .bench/blas.tar.xz ] && tar -C .bench -xJf .bench/blas.tar.xz
timeout 240 python3 scripts/run-gpu-tests.py --only '^exec-cuda-reduce$|^exec-join-cuda$' > $W/gpu-tests.txt 2>&1; echo "rc=$?" >> $W/gpu-tests.txt
# The unit tests' CUDA twins and the device tests of kiln/generated.cuh
# (GeneratedDevice.* is not in run-gpu-tests.py's CUDA filter).
LD_LIBRARY_PATH=$PWD/.bench timeout 300 .bench/gpu-tests/kiln_unit_tests --gtest_filter='GeneratedDevice.*:Cuda*:*/cuda:MatmulCuda*' > $W/unit.txt 2>&1; echo "unit rc=$?" >> $W/unit.txt
tail -5 $W/unit.txt
timeout 200 python3 scripts/run-gpu-tests.py --forced --only '^exec-cuda-reduce$|^exec-join-cuda$' > $W/gpu-tests-forced.txt 2>&1; echo "forced rc=$?" >> $W/gpu-tests-forced.txt
tail -15 $W/gpu-tests.txt; tail -8 $W/gpu-tests-forced.txt
grep -h "MISMATCH\|FAILED\|HeldBools" $W/*.txt | head -20
tar -C $W -czf $O/call5.tgz .
