#!/bin/bash
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD
export KILN_CUDNN=$(python3 -c 'import glob,site; print((sorted(glob.glob(site.getsitepackages()[0]+"/nvidia/cudnn/lib/libcudnn.so.9*"))+[""])[0])')
echo "cudnn: $KILN_CUDNN"
./gpu-tests/kiln_unit_tests --gtest_filter='*Attention*' 2>&1 | grep -E "OK|FAILED|Failure|Expected|Which|actual|PASSED|SKIPPED|error" | head -40
compute-sanitizer --tool memcheck ./gpu-tests/kiln_unit_tests --gtest_filter='*Attention.Pieces/cuda' 2>&1 | tail -4
./decode_attention
