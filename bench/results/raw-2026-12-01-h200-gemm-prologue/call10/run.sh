#!/usr/bin/env bash
cd "$(dirname "$0")/.."
tar xJf .bench/blas.tar.xz -C .bench
export LD_LIBRARY_PATH=$PWD/.bench
sp=$(python3 -c 'import site; print(site.getsitepackages()[0])')
export KILN_CUDNN=$(ls $sp/nvidia/cudnn/lib/libcudnn.so.9* | head -1)
mkdir -p $OUT
{
echo "== gpu tests"
for t in exec-cuda-reduce exec-products-cuda exec-row-broadcast-cuda exec-reduction-groups-cuda; do for f in "" --forced; do echo "$t $f: $(python3 scripts/run-gpu-tests.py --only "^$t\$" $f 2>&1 | tail -1)"; done; done
} > $OUT/tests.txt 2>&1
echo "== timings"
.bench/bf16_rows_new > $OUT/kiln_new.txt
python3 bench/experiments/bf16_rows_torch.py 2>&1 | grep -v -i "warn\|online softmax\|split the reduction\|important use case\|^$" > $OUT/torch.txt
.bench/bf16_rows_old > $OUT/kiln_old.txt
.bench/bf16_rows_new >> $OUT/kiln_new.txt
cat $OUT/tests.txt
paste <(grep kernel $OUT/kiln_old.txt | head -13 | awk '{print $(NF-6)}') <(grep kernel $OUT/kiln_new.txt | head -13) <(grep kernel $OUT/torch.txt | awk '{print $(NF-4), $(NF-1)}') | sed 's/  */ /g'
