#!/usr/bin/env bash
# Final call: U32Div on the device; the staged GPU tests with two slots a
# thread for short rows (plain; forced for the row and view tests); then
# bench/experiments/short_rows.cpp (two slots, the new default) and
# torch.compile on the same shapes in one lease.
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
./.bench/gpu-tests/kiln_unit_tests --gtest_filter='GeneratedDevice.*:KernelAbi.*' 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED) " | tee $out/unit-device.txt
timeout 200 python3 scripts/run-gpu-tests.py > $out/gpu-tests.txt 2>&1; echo "gpu tests rc=$?"; grep "^|" $out/gpu-tests.txt
timeout 90 python3 scripts/run-gpu-tests.py --forced --only 'exec-views|exec-row|exec-cuda-reduce' > $out/gpu-tests-forced.txt 2>&1; echo "forced rc=$?"; grep "^|" $out/gpu-tests-forced.txt
for r in 1 2; do ./.bench/sr/sr2 >> $out/kiln.jsonl 2>>$out/kiln.err; done
for w in "x16" "x64" "x128"; do
  timeout 100 python3 bench/torch_bench.py --reps 30 --modes default --sweep --only "$w" 2>>$out/torch.err >> $out/torch.jsonl
done
timeout 100 python3 bench/torch_bench.py --reps 30 --modes default --only "bias, head" 2>>$out/torch.err >> $out/torch.jsonl
grep -h '"workload"' $out/kiln.jsonl | cut -c1-200
grep -h '"workload"' $out/torch.jsonl | python3 -c "
import sys, json
for l in sys.stdin:
    r = json.loads(l)
    print(r['workload'], 'torch kt', round(r.get('compiled_kt_ms', float('nan')), 5), 'single', round(r.get('compiled_ms', float('nan')), 5))"
