# torch.compile's side of bench/experiments/bf16_rows_compiled.cpp: the same
# bf16 row ops and shapes, default mode, kernel time (20 back-to-back calls
# per CUDA event pair, median of 30) and single-call latency. Dynamo is reset
# before each row, as bench/torch_bench.py does.
import sys

import torch
import torch._dynamo
import torch.nn.functional as F

def timed(fn, calls):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(30):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / calls)
    out.sort()
    return out[len(out) // 2]

def row(name, shape, fn, *args):
    # A fresh Dynamo per row: no shape gets a dynamic-shape kernel.
    torch._dynamo.reset()
    c = torch.compile(fn, mode=MODE)
    f = lambda: c(*args)
    print(f"{name:26s} {shape:22s} kernel {timed(f, 20):.4f} ms  single {timed(f, 1):.4f} ms",
          flush=True)

def softmax(x): return torch.softmax(x, -1)
def layer_norm(x, w, b): return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)
def ln_gelu(x, w, b): return F.gelu(F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), approximate="tanh")
def rms(x, w): return F.rms_norm(x, (x.shape[-1],), w, 1e-6)
def ngm(x, w, b, k): return ln_gelu(x, w, b) @ k

# argv[1]: a torch.compile mode (default: the default mode; "-" for it
# with shapes after); argv[2...]: ROWSxCOLS[:f32] as in
# bf16_rows_compiled.cpp (then no product).
MODE = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
print("mode:", MODE or "default", flush=True)
torch.manual_seed(0)
shapes = [(32768, 2048, False), (21845, 3072, False), (16384, 4096, False),
          (13107, 5120, False), (8192, 8192, False)]
if len(sys.argv) > 2:
    shapes = [(int(a.split(":")[0].split("x")[0]), int(a.split(":")[0].split("x")[1]),
               a.endswith(":f32")) for a in sys.argv[2:]]
for rows, cols, f32 in shapes:
    dt = torch.float32 if f32 else torch.bfloat16
    x = torch.randn(rows, cols, device="cuda", dtype=dt)
    w = torch.randn(cols, device="cuda", dtype=dt)
    b = torch.randn(cols, device="cuda", dtype=dt)
    s = f"{rows}x{cols} {'f32' if f32 else 'bf16'}"
    row("softmax", s, softmax, x)
    row("layer norm", s, layer_norm, x, w, b)
    row("layer norm -> tanh-GELU", s, ln_gelu, x, w, b)
    row("RMS norm", s, rms, x, w)
if len(sys.argv) > 2:
    sys.exit(0)
x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
k = (torch.randn(4096, 4096, device="cuda") / 64).to(torch.bfloat16)
row("layer norm->GELU->matmul", "8192x4096 @ 4096x4096", ngm, x, w, b, k)
