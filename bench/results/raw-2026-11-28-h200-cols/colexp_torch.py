# torch.compile's kernels for colexp.cpp's workloads, kernel time as Kiln's
# (20 back-to-back calls per event pair / 20, median of 30).
import sys
sys.path.insert(0, "bench")
import torch
from torch_bench import time_calls, median
torch._dynamo.config.cache_size_limit = 64
dev = "cuda"
fns = [torch.compile(f, dynamic=False) for f in [
    lambda x: torch.log_softmax(x, 0), lambda x: torch.softmax(x, 0), lambda x: torch.softmax(x, 1),
    lambda x: torch.mean(x, 1), lambda x: torch.sum(x, 0), lambda x: torch.var(x, 0, correction=0),
    lambda x: torch.logsumexp(x, 1)]]
f32, bf16 = torch.float32, torch.bfloat16
cases = [("log_softmax dim 0", (4096, 1024), f32, 0, 2), ("softmax dim 0", (4096, 1024), bf16, 1, 2),
         ("softmax dim 1", (32, 64, 4096), f32, 2, 2), ("mean dim 1", (64, 197, 768), f32, 3, 1),
         ("mean dim 1", (64, 197, 768), bf16, 3, 1), ("sum dim 0", (8192, 4096), f32, 4, 1),
         ("var dim 0", (4096, 1024), f32, 5, 1), ("logsumexp dim 1", (16, 2048, 512), f32, 6, 1),
         ("sum dim 0", (65536, 64), f32, 4, 1)]
for name, shape, dt, k, rw in cases:
    x = torch.randn(*shape, device=dev).to(dt)
    fn = fns[k]
    fn(x)
    kt = median(time_calls(lambda: fn(x), 3, 30, 20))
    n = "bf16" if dt == bf16 else "f32"
    print(f"torch\t{name} {n}\t[{', '.join(map(str, shape))}]\t{kt:.4f}\t\t\t{rw*x.element_size()*x.numel()/kt/1e6:.0f}GB/s", flush=True)
