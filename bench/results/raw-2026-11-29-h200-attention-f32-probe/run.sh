#!/usr/bin/env bash
# Issue 15's f32 attention: Kiln's kernel vs PyTorch's SDPA (f32, no TF32)
# kernel time, then ncu on one launch of Kiln's kernel (limiters).
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
./.bench/attn_f32 | tee $out/kiln.jsonl
python3 - <<'PY' | tee $out/torch.txt
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
q, k, v = (torch.randn(16, 8, 1024, 64, device="cuda") for _ in range(3))
for causal in (False, True):
    f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    c = torch.compile(f)
    for name, fn in (("eager", f), ("compile", c)):
        for _ in range(3): fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(30):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(20): fn()
            e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 20)
        ts.sort()
        print(f"torch {name} causal={causal} kt_ms {ts[15]:.4f}")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
    F.scaled_dot_product_attention(q, k, v); torch.cuda.synchronize()
print([e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA][:3])
PY
timeout 240 ncu --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis ./.bench/attn_f32 > $out/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|Throughput|Registers|Shared Memory|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles|Issue Slot|Executed Ipc|Stall|Grid Size|Block Size|attention|kernel" $out/ncu.txt | head -60
