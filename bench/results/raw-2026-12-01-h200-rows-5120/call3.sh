#!/usr/bin/env bash
# Call 3: why softmax over 6553x10240 bf16 (256 threads of 5 slots) runs at 71 % of the floor.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:$PWD/.bench/c2:${LD_LIBRARY_PATH:-}
for k in softmax layer_norm_rows; do
  ncu -k regex:"${k}.*bf16_rows5full" -c 1 --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
    .bench/c2/rows_new 6553x10240 > $OUT/ncu_${k}_10240.txt 2>&1
  ncu -k regex:"${k}.*bf16_rows5full" -c 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
    .bench/c2/rows_new 13107x5120 > $OUT/ncu_${k}_5120.txt 2>&1
done
for f in $OUT/ncu_*; do echo "== $f"; grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Registers|Memory Throughput|Duration|Stall Long|Warp Cycles Per Issued|Local|Block Size" $f | head -14; done
