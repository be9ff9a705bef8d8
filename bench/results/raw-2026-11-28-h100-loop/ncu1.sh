#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/.bench
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats"
F='Duration|Throughput|Hit Rate|Registers|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Stall|Warp Cycles|Eligible|Issued Warp|Dynamic Shared|Active Warps|L2 Hit|DRAM'
echo "=== kiln LN f32 1048x32000"; timeout 120 ncu $S -k regex:layer_norm_rows.*f32_loop -s 2 -c 1 .bench/loopexp512 2>&1 | grep -E "$F" | head -40
echo "=== kiln softmax f32 4096x16384"; timeout 120 ncu $S -k regex:softmax_rows.*f32_loop -s 606 -c 1 .bench/loopexp512 2>&1 | grep -E "$F" | head -40
echo "=== torch LN"; timeout 300 ncu $S --profile-from-start off -c 1 python3 .bench/ln_torch_ncu.py ln 2>&1 | grep -E "$F|triton_" | head -40
echo "=== torch softmax"; timeout 300 ncu $S --profile-from-start off -c 1 python3 .bench/ln_torch_ncu.py sm 2>&1 | grep -E "$F|triton_" | head -40
echo "=== triton code"; TORCH_LOGS=output_code timeout 200 python3 .bench/ln_torch_ncu.py ln > $OUT/ln_code.txt 2>&1; sed -e "s/^.*__output_code\] //" $OUT/ln_code.txt | grep -E "tl\.|def triton|size_hints|XBLOCK|num_warps|welford|for r0|grid|launch|\.run\(" | head -60
