# PyTorch's SDPA in f32 without TF32: eager and torch.compile, kernel time as
# attn_f32.cpp measures it (N back-to-back calls per event pair, median of 30).
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
for B, H, S, D, inner in ((16, 8, 1024, 64, 20), (2, 8, 4096, 128, 5)):
    q, k, v = (torch.randn(B, H, S, D, device="cuda") for _ in range(3))
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
                for _ in range(inner): fn()
                e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / inner)
            ts.sort()
            print(f"torch {name} {B}x{H}x{S}x{D} causal={causal} kt_ms {ts[15]:.4f}", flush=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        F.scaled_dot_product_attention(q, k, v); torch.cuda.synchronize()
    print("kernel:", [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA][:2])
