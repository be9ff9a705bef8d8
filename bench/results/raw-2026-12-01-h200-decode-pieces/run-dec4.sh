#!/bin/bash
cd "$(dirname "$0")/.."
B=$PWD/.bench; tar xJf $B/blas.tar.xz -C $B
export LD_LIBRARY_PATH=$B
export KILN_CUDNN=$(python3 -c 'import glob,site; print((sorted(glob.glob(site.getsitepackages()[0]+"/nvidia/cudnn/lib/libcudnn.so.9*"))+[""])[0])')
.bench/gpu-tests/kiln_unit_tests --gtest_filter='*Attention*' 2>&1 | grep -E "Failure|PASSED|FAILED" | head
compute-sanitizer --tool memcheck .bench/gpu-tests/kiln_unit_tests --gtest_filter='*Attention.Pieces/cuda:*CudnnAndKiln*/cuda' 2>&1 | tail -1
compute-sanitizer --tool racecheck .bench/gpu-tests/kiln_unit_tests --gtest_filter='*Attention.Pieces/cuda' 2>&1 | tail -1
python3 scripts/run-gpu-tests.py --only 'exec-attention-cuda' 2>&1 | tail -1
python3 scripts/run-gpu-tests.py --forced --only 'exec-attention-cuda' 2>&1 | tail -1
mkdir -p /tmp/w; .bench/llama_block --size 7b --device cuda --write /tmp/w 2>&1 | grep decode
python3 bench/llama_check.py /tmp/w --heads 32 --kv-heads 32 2>&1 | tail -1
for i in 1 2; do
echo "old:"; LD_LIBRARY_PATH=$B/old:$B .bench/llama_decode_prof decode --calls 1 2>&1 | tail -1
echo "new:"; .bench/llama_decode_prof decode --calls 1 2>&1 | tail -1
done
python3 bench/experiments/llama_torch_prof.py decode --calls 1 2>&1 | tail -1
echo "=== old (two launches)"; LD_LIBRARY_PATH=$B/old:$B .bench/decode_attention
echo "=== new (one launch)"; .bench/decode_attention
