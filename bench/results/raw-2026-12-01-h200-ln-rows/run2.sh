#!/bin/bash
cd "$(dirname "$0")"
./ln_rows_variants 16384 3 > $OUT/v1.txt 2>&1; grep FAIL $OUT/v1.txt; tail -12 $OUT/v1.txt
./ln_rows_variants 8192 3 > $OUT/v3.txt 2>&1; tail -12 $OUT/v3.txt
bash ncu.sh
