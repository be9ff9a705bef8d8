#!/usr/bin/env bash
cd "$(dirname "$0")/.."
tar xJf .bench/blas.tar.xz -C .bench
export LD_LIBRARY_PATH=$PWD/.bench
mkdir -p $OUT
.bench/bf16_rows_new > $OUT/kiln_new.txt
timeout 480 python3 bench/experiments/bf16_rows_torch.py max-autotune-no-cudagraphs 2>&1 | grep -v -i "warn\|online softmax\|split the reduction\|important use case\|^$\|autotun\|select_algorithm\|triton_\|SingleProcess\|^ *[0-9]" > $OUT/torch_ma.txt
.bench/bf16_rows_new >> $OUT/kiln_new.txt
cat $OUT/torch_ma.txt | tail -15
