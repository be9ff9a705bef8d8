#!/bin/bash
# Builds the harness here (no GPU needed): v0 = HEAD's attention.cu (the
# old kernel), v1 = the worktree's.
set -e
cd "$(dirname "$0")"
NV=/usr/local/cuda/bin/nvcc
SRC=/work/attn/runtime
OBJ=/tmp/attn_obj; mkdir -p $OBJ; rm -f $OBJ/*.o
F="-O3 -std=c++20 --expt-relaxed-constexpr -DKILN_HAVE_CUDA=1 -gencode=arch=compute_90,code=sm_90 -I$SRC/include -I$SRC/src -I$SRC/cuda -I. -I$OBJ"
git -C /work/attn show ${OLD_REV:-HEAD}:runtime/cuda/attention.cu > $OBJ/attention_old.cu
cp $SRC/cuda/attention.cu $OBJ/attention_new.cu
b() { $NV $F -Dkiln=kiln_$1 -DVARIANT_FN=run_$1 -DATTN_FILE="\"$2\"" -c variant.cu -o $OBJ/$1.o; }
b v0 $OBJ/attention_old.cu & p0=$!
b v1 $OBJ/attention_new.cu & p1=$!
wait $p0; wait $p1
$NV $F -c main.cu -o $OBJ/main.o
$NV -gencode=arch=compute_90,code=sm_90 $OBJ/main.o $OBJ/v0.o $OBJ/v1.o -o ../attn_h
echo built
