#!/bin/bash
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench
export KILN_CUDNN=$(python3 -c 'import glob,site; print((sorted(glob.glob(site.getsitepackages()[0]+"/nvidia/cudnn/lib/libcudnn.so.9*"))+[""])[0])')
python3 scripts/run-gpu-tests.py --only 'exec-attention-cuda' 2>&1 | tail -2
python3 scripts/run-gpu-tests.py --forced --only 'exec-attention-cuda' 2>&1 | tail -1
.bench/gpu-tests/kiln_unit_tests --gtest_filter='*Attention*' 2>&1 | tail -3
mkdir -p /tmp/w; .bench/llama_block --size 7b --device cuda --write /tmp/w 2>&1 | tail -3
python3 bench/llama_check.py /tmp/w --heads 32 --kv-heads 32 2>&1 | tail -6
for i in 1 2; do
.bench/llama_decode_prof decode --calls 1 2>&1 | tail -1
python3 bench/experiments/llama_torch_prof.py decode --calls 1 2>&1 | tail -1
done
python3 bench/experiments/llama_torch_prof.py decode --calls 1 --mode max-autotune-no-cudagraphs 2>&1 | tail -1
.bench/llama_decode_prof prefill --calls 1 2>&1 | tail -1
