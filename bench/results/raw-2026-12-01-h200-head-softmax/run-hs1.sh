#!/bin/bash
cd "$(dirname "$0")/.."
B=$PWD/.bench; tar xJf $B/blas.tar.xz -C $B
export LD_LIBRARY_PATH=$B
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv
echo "=== variants"; .bench/head_softmax_variants
echo "=== kiln shipped"; .bench/short_rows 2>&1 | head -1
echo "=== torch"; python3 .bench/hs_torch.py 2>&1 | grep workload
echo "=== variants again"; .bench/head_softmax_variants | tail -9
echo "=== kiln shipped again"; .bench/short_rows 2>&1 | head -1
echo "=== ncu kiln"; ncu --kernel-name regex:bias_heads --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats .bench/short_rows 2>&1 | grep -E "Duration|Throughput|Executed Ipc|Issue Slots|Registers|Achieved Occ|Instructions|Warp Cycles Per Issued|Block Size|Grid Size|Theoretical Occ" | head -30
export KILN_CUDNN=$(python3 -c 'import glob,site; print((sorted(glob.glob(site.getsitepackages()[0]+"/nvidia/cudnn/lib/libcudnn.so.9*"))+[""])[0])')
echo "=== ncu decode GQA (R=4) and MHA (R=1)"
ncu --kernel-name-base demangled --kernel-name 'regex:attn_decode_kernel<.*, 128, 4>' --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis .bench/decode_attention 2>&1 | grep -vE "^    -+|^\s*$" | grep -E "Duration|Throughput|Ipc|Issue|Registers|Occupancy|Executed Instructions|Warp Cycles|Block Size|Grid Size|Stall|Shared Memory|L2 Hit|Mem Busy|Max Bandwidth" | head -40
ncu --kernel-name-base demangled --kernel-name 'regex:attn_decode_kernel<.*, 128, 1>' --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats .bench/decode_attention 2>&1 | grep -E "Duration|Throughput|Executed Instructions|Warp Cycles Per Issued|Issue Slots" | head -12
