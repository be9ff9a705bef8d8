#!/usr/bin/env bash
cd "$(dirname "$0")/.."
tar xJf .bench/blas.tar.xz -C .bench
export LD_LIBRARY_PATH=$PWD/.bench
mkdir -p $OUT
{
for f in "" --forced; do echo "exec-cuda-reduce $f: $(python3 scripts/run-gpu-tests.py --only '^exec-cuda-reduce$' $f 2>&1 | tail -1)"; done
echo "kernels launched by the compiled softmax over 21845x3072 bf16 (KILN_LOGS=kernels):"
KILN_LOGS=kernels .bench/bf16_rows_new 2>&1 | grep -m2 -o "launch [^ ]*rows3full[^ ]* grid=[^ ]* block=[^ ]*"
} > $OUT/tests.txt 2>&1
.bench/bf16_rows_old > $OUT/kiln_old.txt
.bench/bf16_rows_new > $OUT/kiln_new.txt
python3 bench/experiments/bf16_rows_torch.py 2>&1 | grep -v -i "warn\|online softmax\|split the reduction\|important use case\|^$" > $OUT/torch.txt
.bench/bf16_rows_new >> $OUT/kiln_new.txt
cat $OUT/tests.txt
paste <(grep kernel $OUT/kiln_old.txt | awk '{print $(NF-6)}') <(grep kernel $OUT/kiln_new.txt | head -21) <(grep kernel $OUT/torch.txt | awk '{print $(NF-4), $(NF-1)}') | sed 's/  */ /g'
