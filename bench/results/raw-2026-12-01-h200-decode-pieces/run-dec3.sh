#!/bin/bash
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench
export KILN_CUDNN=$(python3 -c 'import glob,site; print((sorted(glob.glob(site.getsitepackages()[0]+"/nvidia/cudnn/lib/libcudnn.so.9*"))+[""])[0])')
.bench/gpu-tests/kiln_unit_tests --gtest_filter='*Attention*' 2>&1 | grep -E "Failure|PASSED|FAILED" | head
compute-sanitizer --tool memcheck .bench/gpu-tests/kiln_unit_tests --gtest_filter='*Attention.Pieces/cuda' 2>&1 | tail -2
python3 scripts/run-gpu-tests.py --only 'exec-attention-cuda' 2>&1 | tail -1
python3 scripts/run-gpu-tests.py --forced --only 'exec-attention-cuda' 2>&1 | tail -1
mkdir -p /tmp/w; .bench/llama_block --size 7b --device cuda --write /tmp/w 2>&1 | grep decode
python3 bench/llama_check.py /tmp/w --heads 32 --kv-heads 32 2>&1 | tail -2
for i in 1 2; do
.bench/llama_decode_prof decode --calls 1 2>&1 | tail -1
python3 bench/experiments/llama_torch_prof.py decode --calls 1 2>&1 | tail -1
done
.bench/decode_attention
