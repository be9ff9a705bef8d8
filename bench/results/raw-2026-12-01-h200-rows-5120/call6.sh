#!/usr/bin/env bash
# Call 6: the compiled functions at ea7d9da (5-slot 16-bit instance recomputing) against the old launch and torch.compile.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
S="52428x1280 26214x2560 13107x5120 6553x10240"
for i in 1 2; do
  .bench/c5/rows_new $S > $OUT/kiln_new_$i.txt 2>&1
  .bench/c5/rows_old $S > $OUT/kiln_old_$i.txt 2>&1
done
python3 bench/experiments/bf16_rows_torch.py - $S > $OUT/torch_default.txt 2>&1
for f in kiln_old_1 kiln_old_2 kiln_new_1 kiln_new_2 torch_default; do echo "== $f"; cut -c1-75 $OUT/$f.txt; done
