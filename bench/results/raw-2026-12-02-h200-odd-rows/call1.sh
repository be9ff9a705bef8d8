#!/usr/bin/env bash
# 2026-12-02 call 1: odd short rows (197, 1001): rowsany launch variants, torch.compile beside.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
timeout 200 .bench/odd/odd_rows_tpr 2>&1 | tee $O/odd.txt
timeout 200 python3 bench/experiments/bf16_rows_torch.py - 151296x197 151296x197:f32 16384x1001 16384x1001:f32 2>&1 | grep -v Warn | tee $O/torch.txt
cat > /tmp/tc.py <<'PY'
import torch
x = torch.randn(151296, 197, device="cuda", dtype=torch.bfloat16)
f = torch.compile(lambda x: torch.softmax(x, -1))
f(x); torch.cuda.synchronize()
x = torch.randn(151296, 197, device="cuda", dtype=torch.float32)
torch._dynamo.reset()
f = torch.compile(lambda x: torch.softmax(x, -1))
f(x); torch.cuda.synchronize()
PY
TORCH_LOGS=output_code timeout 120 python3 /tmp/tc.py > $O/triton_code.txt 2>&1
echo "---"; grep -n "triton_meta\|num_warps\|XBLOCK\|R0_BLOCK\|RBLOCK" $O/triton_code.txt | head -40
echo "---"; cat $O/odd.txt; cat $O/torch.txt
