import torch, statistics
import torch.nn.functional as F
def kt(f, *a):
    for _ in range(3): f(*a)
    torch.cuda.synchronize()
    v = []
    for _ in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20): f(*a)
        e.record(); e.synchronize(); v.append(s.elapsed_time(e) * 1000 / 20)
    return statistics.median(v)
def rms(x, w):
    xf = x.float(); return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
d = "cuda"
for rows in (16, 64):
    x = torch.randn(rows, 4096, device=d, dtype=torch.bfloat16); w = torch.randn(4096, device=d, dtype=torch.bfloat16)
    print(f"torch RMS norm {rows}x4096 bf16 {kt(torch.compile(rms), x, w):8.2f} us")
    print(f"torch softmax {rows}x4096 bf16 {kt(torch.compile(lambda t: torch.softmax(t, -1)), x):8.2f} us")
for n in (11008, 4096):
    a = torch.randn(16, n, device=d, dtype=torch.bfloat16); b = torch.randn(16, n, device=d, dtype=torch.bfloat16)
    print(f"torch silu(a)*b 16x{n} bf16 {kt(torch.compile(lambda p, q: F.silu(p) * q), a, b):8.2f} us")
