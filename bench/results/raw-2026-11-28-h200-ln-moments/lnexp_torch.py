# torch.compile's kernels for lnexp.cpp's workloads, kernel time as Kiln's
# (20 back-to-back calls per event pair / 20, median of 30).
import sys
sys.path.insert(0, "bench")
import torch
import torch.nn.functional as F
from torch_bench import time_calls, median
torch._dynamo.config.cache_size_limit = 64
dev = "cuda"
ln = torch.compile(lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), dynamic=False)
var = torch.compile(lambda x: torch.var(x, -1, correction=0), dynamic=False)
sm = torch.compile(lambda x: torch.softmax(x, -1), dynamic=False)
for r, c in [(1048, 32000), (4096, 16384), (264, 16000), (128, 12288), (512, 65536), (2048, 50257)]:
    x = torch.randn(r, c, device=dev); w = torch.randn(c, device=dev); b = torch.randn(c, device=dev)
    for name, fn, args, bpe in [("layer_norm f32", ln, (x, w, b), 8), ("var f32", var, (x,), 4),
                                ("softmax f32", sm, (x,), 8)]:
        fn(*args)
        kt = median(time_calls(lambda: fn(*args), 3, 30, 20))
        print(f"torch\t{name}\t{r}x{c}\t{kt:.4f}\t\t\t{bpe*r*c/kt/1e6:.0f}GB/s", flush=True)
