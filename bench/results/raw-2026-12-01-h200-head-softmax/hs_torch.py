import statistics, torch, json
import torch.nn.functional as F
dev = "cuda"
def timed(fn, args, per):
    for _ in range(3): fn(*args)
    torch.cuda.synchronize()
    out = []
    for _ in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(per): fn(*args)
        e.record(); e.synchronize()
        out.append(s.elapsed_time(e) / per)
    return statistics.median(out)
def work():
    x = torch.randn(8, 1024, 4096, device=dev); b = torch.randn(4096, device=dev)
    yield "bias, head split, softmax 8x1024x4096 f32", (lambda x, b: torch.softmax((x + b).view(8, 1024, 32, -1).transpose(1, 2), -1)), (x, b)
    for cols in (16, 64, 128):
        rows = (1 << 25) // cols
        x = torch.randn(rows, cols, device=dev); w = torch.randn(cols, device=dev); b = torch.randn(cols, device=dev)
        yield f"softmax {rows}x{cols} f32", (lambda x: torch.softmax(x, -1)), (x,)
        yield f"layer norm {rows}x{cols} f32", (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)), (x, w, b)
        yield f"RMS norm {rows}x{cols} bf16", (lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)), (x.bfloat16(), w.bfloat16())
    x = torch.randn(1 << 17, 256, device=dev).bfloat16(); w = torch.randn(256, device=dev).bfloat16()
    yield "RMS norm 131072x256 bf16", (lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)), (x, w)
for name, fn, args in work():
    torch._dynamo.reset()
    c = torch.compile(fn)
    print(json.dumps({"workload": name, "mode": "default", "kt_ms": round(timed(c, args, 20), 5)}), flush=True)
