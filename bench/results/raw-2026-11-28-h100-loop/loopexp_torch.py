import sys
sys.path.insert(0, "bench")
import torch
import torch.nn.functional as F
from torch_bench import time_calls, median
torch._dynamo.config.cache_size_limit = 64
dev = "cuda"
sm = torch.compile(lambda x: torch.softmax(x, -1), dynamic=False)
ln = torch.compile(lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), dynamic=False)
rms = torch.compile(lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6), dynamic=False)
SH = [(1048, 32000), (4096, 16384), (2048, 50257), (128, 12288), (264, 16000)]
if len(sys.argv) > 1: SH = [tuple(map(int, a.split("x"))) for a in sys.argv[1:]]
for r, c in SH:
    x = torch.randn(r, c, device=dev); w = torch.randn(c, device=dev); b = torch.randn(c, device=dev)
    xh, wh = x.bfloat16(), w.bfloat16()
    for name, fn, args, bpe in [("softmax f32", sm, (x,), 8), ("layer_norm f32", ln, (x, w, b), 8),
                                ("rms_norm bf16", rms, (xh, wh), 4), ("softmax bf16", sm, (xh,), 4)]:
        fn(*args)
        kt = median(time_calls(lambda: fn(*args), 3, 30, 20))
        print(f"torch\t{name}\t{r}x{c}\t{kt:.4f}\t\t\tbytes/ms={bpe*r*c/kt/1e6:.0f}GB/s", flush=True)
