#!/bin/bash
cd "$(dirname "$0")/.."
B=$PWD/.bench; tar xJf $B/blas.tar.xz -C $B
export LD_LIBRARY_PATH=$B
for i in 1 2; do
echo "=== cap64"; .bench/short_rows_cap64 2>&1
echo "=== cap0"; .bench/short_rows_cap0 2>&1
done
echo "=== torch"; python3 .bench/hs_torch.py 2>&1 | grep workload
