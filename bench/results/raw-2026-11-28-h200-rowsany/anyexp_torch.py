# torch.compile's kernels for anyexp.cpp's workloads, kernel time as Kiln's
# (20 back-to-back calls per event pair / 20, median of 30).
import sys
sys.path.insert(0, "bench")
import torch
import torch.nn.functional as F
from torch_bench import time_calls, median
torch._dynamo.config.cache_size_limit = 64
dev = "cuda"
sm = torch.compile(lambda x: torch.softmax(x, -1), dynamic=False)
lsm = torch.compile(lambda x: torch.log_softmax(x, -1), dynamic=False)
lsm0 = torch.compile(lambda x: torch.log_softmax(x, 0), dynamic=False)
ln = torch.compile(lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), dynamic=False)
var = torch.compile(lambda x: torch.var(x, -1, correction=0), dynamic=False)
def rms_eager(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
rms = torch.compile(rms_eager, dynamic=False)
SM, LSM, LN, VAR, RMS, COLS = 1, 2, 4, 8, 16, 32
f32, bf16 = torch.float32, torch.bfloat16
for r, c, dt, what in [(151296, 197, f32, SM), (151296, 197, bf16, SM), (16384, 1001, f32, SM | LN | RMS),
                       (16384, 1001, bf16, SM | RMS), (4096, 4095, f32, SM | LN | VAR),
                       (1048, 32001, f32, SM | LSM), (2048, 50257, f32, SM | LSM | LN | VAR),
                       (2048, 50257, bf16, SM | RMS), (4096, 1024, f32, COLS)]:
    x = torch.randn(r, c, device=dev).to(dt); w = torch.randn(c, device=dev).to(dt); b = torch.randn(c, device=dev).to(dt)
    e = x.element_size()
    cases = []
    if what & SM: cases.append(("softmax", sm, (x,), 2))
    if what & LSM: cases.append(("log_softmax", lsm, (x,), 2))
    if what & LN: cases.append(("layer_norm", ln, (x, w, b), 2))
    if what & VAR: cases.append(("var", var, (x,), 1))
    if what & RMS: cases.append(("rms_norm", rms, (x, w), 2))
    if what & COLS: cases.append(("log_softmax dim 0", lsm0, (x,), 2))
    for name, fn, args, k in cases:
        fn(*args)
        kt = median(time_calls(lambda: fn(*args), 3, 30, 20))
        n = "bf16" if dt == bf16 else "f32"
        print(f"torch\t{name} {n}\t{r}x{c}\t{kt:.4f}\t\t\t{k*e*r*c/kt/1e6:.0f}GB/s", flush=True)
