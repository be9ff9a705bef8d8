#!/usr/bin/env bash
cd "$(dirname "$0")/.."
tar xJf .bench/blas.tar.xz -C .bench
export LD_LIBRARY_PATH=$PWD/.bench
sp=$(python3 -c 'import site; print(site.getsitepackages()[0])')
export KILN_CUDNN=$(ls $sp/nvidia/cudnn/lib/libcudnn.so.9* | head -1)
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
echo "== gpu tests"
for t in exec-store-cuda exec-graphs-cuda; do for f in "" --forced; do python3 scripts/run-gpu-tests.py --only $t $f 2>&1 | tail -1; done; done
echo "== llama small on cuda"
.bench/llama_block 2>&1 | tail -4
echo "== timings"
for w in decode cached decode cached; do .bench/llama_decode_prof $w --calls 1 --reps 30; done
for w in cached decode; do python3 bench/experiments/llama_torch_prof.py $w --calls 1 --reps 30 2>&1 | tail -1; done
for w in cached decode cached; do .bench/llama_decode_prof $w --calls 1 --reps 30; done
